import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase, processAlive } from '../src/platform/db.ts';
import { createEmbeddedTemplate } from './embedded-template.ts';

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
    const dir = mkdtempSync(join(tmpdir(), 'svc-pglite-template-'));
    const file = join(dir, 'template.tar');
    // One migrated embedded database: a data directory for child processes, dumped for in-process tests.
    const embedded = await createEmbeddedTemplate(file);
    project.provide('embeddedTemplate', embedded.dir);
    project.provide('pgliteTemplate', file);
    return async () => {
      embedded.dispose();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  // PostgreSQL first: a refused connection stops the run before anything is made on disk.
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  // Some child processes run on an embedded DATA_DIR in this pass too (test/embedded-template.ts).
  const embedded = await createEmbeddedTemplate();
  project.provide('embeddedTemplate', embedded.dir);
  const template = `svc_tpl_${process.pid}_${Date.now().toString(36)}`;
  try {
    await createPgTemplate(admin, url, template);
  } catch (error) {
    embedded.dispose();
    throw error;
  } finally {
    await admin.end();
  }
  project.provide('pgTemplate', template);
  return async () => {
    embedded.dispose();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`drop database if exists "${template}" with (force)`);
    await c.end();
  };
}

/** Drops the databases of earlier runs whose process is gone, then creates and migrates `template`. */
async function createPgTemplate(admin: pg.Client, url: string, template: string): Promise<void> {
  // Leftovers of interrupted runs: databases of test processes that no longer exist. Several runs
  // may share one server at once, so each run's databases carry its process id.
  const stale = await admin.query<{ datname: string }>(`select datname from pg_database where datname ~ '^svc_(tpl|t)_[0-9]+_'`);
  for (const { datname } of stale.rows) {
    const pid = Number(datname.split('_')[2]);
    if (!processAlive(pid)) await admin.query(`drop database if exists "${datname}" with (force)`);
  }
  await admin.query(`create database "${template}"`);
  const database = openDatabase({ databaseUrl: withDatabase(url, template), dataDir: '/tmp' });
  try {
    await database.migrate();
  } finally {
    await database.close();
  }
}
