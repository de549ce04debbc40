import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../src/platform/db.ts';
import { emptyPostgres, onPostgres } from './database.ts';

/**
 * Replicas that start together (compose.yaml's two) migrate one fresh PostgreSQL database at the
 * same moment: one applies every migration, the others wait for it and find nothing left to do.
 */
describe.skipIf(!onPostgres)('migrations from several instances at once', () => {
  it('three instances migrating an empty database together all succeed, and the migrations are applied once', async () => {
    const { url, drop } = await emptyPostgres('migrate');
    const instances = [1, 2, 3].map(() => openDatabase({ databaseUrl: url, dataDir: '/tmp', poolSize: 2 }));
    try {
      const results = await Promise.all(instances.map((d) => d.migrate()));
      const total = results[0]!.total;
      expect(total).toBeGreaterThan(20);
      expect(results.map((r) => r.total)).toEqual([total, total, total]);
      expect(results.reduce((sum, r) => sum + r.applied, 0)).toBe(total);
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const { rows } = await c.query('select count(*)::int as n from drizzle.__drizzle_migrations');
        expect(rows[0].n).toBe(total);
      } finally {
        await c.end();
      }
    } finally {
      await Promise.all(instances.map((d) => d.close()));
      await drop();
    }
  });
});
