import pg from 'pg';
import { openDatabase } from '../src/platform/db.ts';

export const TEMPLATE_DB = 'svc_test_template';

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = '/' + name;
  return u.toString();
}

/** On PostgreSQL: one migrated template database per test run; each test file clones it. */
export default async function setup(): Promise<(() => Promise<void>) | void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  // Leftovers of an interrupted run.
  const stale = await admin.query<{ datname: string }>(`select datname from pg_database where datname like 'svc_t_%' or datname = $1`, [TEMPLATE_DB]);
  for (const { datname } of stale.rows) await admin.query(`drop database if exists "${datname}" with (force)`);
  await admin.query(`create database "${TEMPLATE_DB}"`);
  const database = openDatabase({ databaseUrl: withDatabase(url, TEMPLATE_DB), dataDir: '/tmp' });
  await database.migrate();
  await database.close();
  await admin.end();
  return async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`drop database if exists "${TEMPLATE_DB}" with (force)`);
    await c.end();
  };
}
