import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { emptyPostgres, onPostgres } from '../../test/database.ts';
import { openDatabase, rows, transaction } from './db.ts';

const DB_MODULE = fileURLToPath(new URL('./db.ts', import.meta.url));

/**
 * Found by the chaos run (issue 31): PostgreSQL's fast restart killed an instance whose events
 * dispatcher held a pooled client inside a transaction — the connection's end reached the client
 * between two queries, when the pool no longer listens on it, and Node threw the unhandled 'error'
 * event. The same happens when one backend is terminated, which this test does on the shared server
 * (in a child process, so that a crash shows as its exit).
 */
describe.skipIf(!onPostgres)('a pooled connection lost while checked out', () => {
  it('fails the transaction, does not crash the process, and the pool serves the next query', () => {
    const script = `
      import { openDatabase, rows, transaction } from ${JSON.stringify(DB_MODULE)};
      import { sql } from 'drizzle-orm';
      import pg from 'pg';
      const database = openDatabase({ databaseUrl: process.env.URL, dataDir: '/tmp' });
      const admin = new pg.Client({ connectionString: process.env.URL });
      await admin.connect();
      const pause = (ms) => new Promise((r) => setTimeout(r, ms));
      const outcome = await transaction(database.db, async (tx) => {
        const [{ pid }] = await rows(tx, sql\`select pg_backend_pid() as pid\`);
        await admin.query('select pg_terminate_backend($1)', [pid]);
        await pause(500);
        await rows(tx, sql\`select 1\`);
        return 'committed';
      }).catch((error) => 'failed');
      const [{ one }] = await rows(database.db, sql\`select 1 as one\`);
      console.log(JSON.stringify({ outcome, one }));
      await admin.end();
      await database.close();
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, URL: process.env.TEST_DATABASE_URL },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(child.stderr).not.toContain("Unhandled 'error' event");
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout.trim())).toEqual({ outcome: 'failed', one: 1 });
  });
});

/**
 * Found while making the chaos run's PostgreSQL restarts repeatable (issue 31): drizzle-orm runs a
 * transaction's BEGIN before the try/finally that gives its pooled client back
 * (drizzle-team/drizzle-orm#6241). A client whose connection died while it sat idle — what a
 * restart leaves in every pool — fails its BEGIN and was never released: each time one of the
 * pool's connections was gone for the life of the process, until every query waited for ever.
 */
describe.skipIf(!onPostgres)('a transaction whose BEGIN fails', () => {
  it('gives its client back to the pool, which serves the next transaction', async () => {
    const store = await emptyPostgres('begin');
    const database = openDatabase({ databaseUrl: store.url, dataDir: '/tmp', poolSize: 1 });
    try {
      const pool = database.pool as pg.Pool;
      const idle = await pool.connect();
      idle.release();
      // The idle client's socket closes; the pool hears of it only on the next tick, after it has
      // handed the client to the transaction below (pg's internals: the test's only way to be sure).
      (idle as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      const first = await transaction(database.db, async () => 'committed').catch(() => 'failed');
      expect(first).toBe('failed');
      const next = await Promise.race([
        transaction(database.db, async (tx) => (await rows<{ one: number }>(tx, sql`select 1 as one`))[0]!.one),
        new Promise((resolve) => setTimeout(() => resolve('the pool had no client left'), 5000)),
      ]);
      expect(next).toBe(1);
    } finally {
      await Promise.race([database.close(), new Promise((r) => setTimeout(r, 1000))]);
      await store.drop();
    }
  });
});
