import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { emptyPostgres, onPostgres } from '../../test/database.ts';
import { eventually } from '../../test/helpers.ts';
import { Bus } from './bus.ts';
import { openDatabase, type Database } from './db.ts';

/**
 * Found by the chaos run (issue 31): after PostgreSQL restarted, an instance's bus tried to LISTEN
 * again once, 500 ms after losing its connection, while the server was still starting; that try
 * failed, no other came, and the instance never again heard what the other instances committed
 * (their stream messages, their wake-ups) until it was restarted. Here the database refuses new
 * connections for two seconds after the listening backend is terminated: a restart as the bus sees
 * it, on the shared server.
 */
describe.skipIf(!onPostgres)('the bus after losing its LISTEN connection', () => {
  const open: (Database | Bus | { drop(): Promise<void> })[] = [];
  afterAll(async () => {
    for (const thing of open.reverse()) {
      if (thing instanceof Bus) await thing.close();
      else if ('drop' in thing) await thing.drop();
      else await thing.close();
    }
  });

  it('keeps trying to listen while the database refuses, then hears the other instance again', async () => {
    const store = await emptyPostgres('bus');
    open.push(store);
    const name = new URL(store.url).pathname.slice(1);
    const [dbA, dbB] = [0, 1].map(() => openDatabase({ databaseUrl: store.url, dataDir: '/tmp', poolSize: 2 }));
    open.push(dbA!, dbB!);
    const [a, b] = [new Bus(dbA!), new Bus(dbB!)];
    await a.start();
    await b.start();
    open.push(a, b);
    const heard: number[] = [];
    a.subscribe('test.channel', (m) => heard.push(m as number));
    await b.publish('test.channel', 0);
    await eventually(() => heard.length === 1, 5000, 20);

    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`alter database "${name}" allow_connections false`);
      const { rowCount } = await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and query ilike 'listen%'`, [name]);
      expect(rowCount).toBe(2); // both buses lose their LISTEN connection, as in a restart
      await new Promise((r) => setTimeout(r, 2000));
      await admin.query(`alter database "${name}" allow_connections true`);
    } finally {
      await admin.end();
    }

    let sent = 1;
    await eventually(
      async () => {
        await b.publish('test.channel', sent++);
        return heard.length > 1;
      },
      15_000,
      250,
    );
    const from = sent;
    for (let i = 0; i < 20; i++) await b.publish('test.channel', from + i);
    await eventually(() => heard.filter((n) => n >= from).length === 20, 5000, 20);
  });
});
