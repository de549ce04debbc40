import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase, processAlive } from '../src/platform/db.ts';


function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = '/' + name;
  return u.toString();
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    pgTemplate: string;
  }
}

/**
 * One migrated template per test run, cloned by each test file: on PostgreSQL a template database,
 * embedded a dumped PGlite data directory (loading it is an order of magnitude faster than
 * migrating a new one).
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    const database = openDatabase({ databaseUrl: 'memory://', dataDir: '/tmp' });
    await database.migrate();
    const dir = mkdtempSync(join(tmpdir(), 'svc-pglite-template-'));
    const file = join(dir, 'template.tar');
    writeFileSync(file, Buffer.from(await (await database.pglite!.dumpDataDir('none')).arrayBuffer()));
    await database.close();
    project.provide('pgliteTemplate', file);
    return async () => rmSync(dir, { recursive: true, force: true });
  }
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  // Leftovers of interrupted runs: databases of test processes that no longer exist. Several runs
  // may share one server at once, so each run's databases carry its process id.
  const stale = await admin.query<{ datname: string }>(`select datname from pg_database where datname ~ '^svc_(tpl|t)_[0-9]+_'`);
  for (const { datname } of stale.rows) {
    const pid = Number(datname.split('_')[2]);
    if (!processAlive(pid)) await admin.query(`drop database if exists "${datname}" with (force)`);
  }
  const template = `svc_tpl_${process.pid}_${Date.now().toString(36)}`;
  await admin.query(`create database "${template}"`);
  const database = openDatabase({ databaseUrl: withDatabase(url, template), dataDir: '/tmp' });
  await database.migrate();
  await database.close();
  await admin.end();
  project.provide('pgTemplate', template);
  return async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`drop database if exists "${template}" with (force)`);
    await c.end();
  };
}
