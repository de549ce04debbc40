import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { openDatabase } from '../src/platform/db.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A DATA_DIR whose embedded database is created and migrated (see embeddedDataDir). */
    embeddedTemplate?: string;
  }
}

/**
 * A DATA_DIR with its embedded database created and migrated, made once per test run by a global
 * setup: a child `node src/main.ts` on a fresh directory spends five seconds in PGlite's initdb and
 * one in migrations before it listens, and a dozen test files start one. (test/startup.test.ts does
 * not use it: what a first start does is what it tests.) The database is closed, so the copy is a
 * clean data directory. `dump` also writes it as a PGlite dump (the in-process tests' template,
 * test/database.ts) to that file.
 */
export async function createEmbeddedTemplate(dump?: string): Promise<{ dir: string; dispose(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-embedded-template-'));
  const database = openDatabase({ dataDir: dir });
  try {
    await database.migrate();
    if (dump) writeFileSync(dump, Buffer.from(await (await database.pglite!.dumpDataDir('none')).arrayBuffer()));
  } finally {
    await database.close();
  }
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A new temporary DATA_DIR, holding a copy of the run's migrated embedded database when there is one. */
export function embeddedDataDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const template = inject('embeddedTemplate');
  if (template && existsSync(join(template, 'pgdata'))) cpSync(join(template, 'pgdata'), join(dir, 'pgdata'), { recursive: true });
  return dir;
}
