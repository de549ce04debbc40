import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { PGlite } from '@electric-sql/pglite';
import { inject } from 'vitest';
import { MIGRATIONS_DIR, openDatabase, PGLITE_OPTIONS, wrapPglite, type Database } from '../src/platform/db.ts';

export const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = '/' + name;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * A fresh, migrated database for one test file: an in-memory PGlite, or on PostgreSQL a new
 * database cloned from the migrated template. Closing it drops it.
 */
export async function freshDatabase(): Promise<Database & { dropUrl?: string }> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const template = inject('pgliteTemplate');
    if (!template) {
      const database = openDatabase({ databaseUrl: 'memory://', dataDir: '/tmp' });
      await database.migrate();
      return database;
    }
    const database = wrapPglite(new PGlite({ ...PGLITE_OPTIONS, loadDataDir: new Blob([readFileSync(template)]) }));
    // A no-op when the template is current; applies anything newer otherwise.
    await database.migrate();
    return database;
  }
  const template = inject('pgTemplate');
  const name = `svc_t_${template.split('_')[2]}_${randomBytes(6).toString('hex')}`;
  for (let attempt = 0; ; attempt++) {
    try {
      await admin((c) => c.query(`create database "${name}" template "${template}"`));
      break;
    } catch (error) {
      // Two files cloning at the same instant: PostgreSQL refuses the second; try again.
      if (attempt >= 20) throw error;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 200));
    }
  }
  const database = openDatabase({ databaseUrl: withDatabase(url, name), dataDir: '/tmp', poolSize: 20 });
  const close = database.close;
  return {
    ...database,
    close: async () => {
      await close();
      await admin((c) => c.query(`drop database if exists "${name}" with (force)`));
    },
  };
}

/** A new, empty PostgreSQL database (nothing migrated) on TEST_DATABASE_URL's server: its URL, and dropping it. */
export async function emptyPostgres(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `svc_${label}_${process.pid}_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`create database "${name}"`));
  return {
    url: withDatabase(process.env.TEST_DATABASE_URL!, name),
    drop: async () => {
      await admin((c) => c.query(`drop database if exists "${name}" with (force)`));
    },
  };
}

/** An empty database of the store under test, nothing migrated (an in-memory PGlite, or a new PostgreSQL database). Closing it drops it. */
export async function emptyDatabase(): Promise<Database> {
  if (!onPostgres) return openDatabase({ databaseUrl: 'memory://', dataDir: '/tmp' });
  const { url, drop } = await emptyPostgres('empty');
  const database = openDatabase({ databaseUrl: url, dataDir: '/tmp', poolSize: 2 });
  const close = database.close;
  return {
    ...database,
    close: async () => {
      await close();
      await drop();
    },
  };
}

/**
 * An empty database (emptyDatabase) migrated up to just before migration `tag`, as an installation
 * that has not upgraded yet: a test fills it, then `database.migrate()` applies `tag` and the rest.
 */
export async function databaseBefore(tag: string): Promise<Database> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-migrations-'));
  try {
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const journalPath = join(dir, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
    const at = journal.entries.findIndex((e) => e.tag === tag);
    if (at < 0) throw new Error(`no migration ${tag}`);
    journal.entries = journal.entries.slice(0, at);
    writeFileSync(journalPath, JSON.stringify(journal));
    const database = await emptyDatabase();
    if (database.kind === 'postgres') await migratePg(database.db as never, { migrationsFolder: dir });
    else await migratePglite(database.db as never, { migrationsFolder: dir });
    return database;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
