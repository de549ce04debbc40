import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { onPostgres } from '../../test/database.ts';

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
