import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rows } from '../src/platform/db.ts';
import { databaseBefore } from './database.ts';

/**
 * Migrations 0032 and 0033 on an installation in use. 0032: an authorization in progress is bound
 * to its browser's cookie; the ones started before have none and go. 0033: budget alerts are kept
 * per month and limit; an alert already sent counts for the organization's limit of now, so the
 * upgrade does not send it again.
 */
describe('migrations 0032 (OAuth states bound to a browser) and 0033 (budget alerts per limit)', () => {
  it('drops the authorizations in progress, and keys the alerts sent by the limit of now', async () => {
    const database = await databaseBefore('0032_oauth_state_browser');
    try {
      const { db } = database;
      await db.execute(sql`insert into organizations (id, name) values ('org_a', 'A'), ('org_b', 'B')`);
      await db.execute(sql`insert into oauth_states (state_hash, org_id, actor, provider, verifier_sealed, expires_at)
        values ('h1', 'org_a', 'user:u1', 'x', 'v1.sealed', now() + interval '5 minutes')`);
      await db.execute(sql`insert into budgets (org_id, monthly_limit_usd) values ('org_a', 12.5)`);
      // org_a: this month's warning and last month's; org_b had a limit and removed it.
      await db.execute(sql`insert into budget_alerts (org_id, scope, period, kind) values
        ('org_a', 'organization', '2026-11', 'warning'), ('org_a', 'organization', '2026-10', 'warning'), ('org_b', 'organization', '2026-11', 'warning')`);

      const result = await database.migrate();
      expect(result.applied).toBe(result.total - 32);

      const [states] = await rows<{ n: number }>(db, sql`select count(*)::int as n from oauth_states`);
      expect(states!.n).toBe(0);
      await expect(
        db.execute(sql`insert into oauth_states (state_hash, org_id, actor, provider, verifier_sealed, expires_at)
        values ('h2', 'org_a', 'user:u1', 'x', 'v1.sealed', now())`),
      ).rejects.toThrow();
      await db.execute(sql`insert into oauth_states (state_hash, org_id, actor, provider, verifier_sealed, browser_hash, expires_at)
        values ('h2', 'org_a', 'user:u1', 'x', 'v1.sealed', 'b', now())`);

      const alerts = await rows<Record<string, unknown>>(db, sql`select org_id, period, kind, limit_usd from budget_alerts order by org_id, period`);
      expect(alerts).toEqual([
        { org_id: 'org_a', period: '2026-10', kind: 'warning', limit_usd: 12.5 },
        { org_id: 'org_a', period: '2026-11', kind: 'warning', limit_usd: 12.5 },
      ]);
      // The same alert for the same limit is one row; another limit is another.
      const insert = (limit: number) =>
        rows<{ org_id: string }>(
          db,
          sql`insert into budget_alerts (org_id, scope, period, kind, limit_usd)
        values ('org_a', 'organization', '2026-11', 'warning', ${limit}) on conflict do nothing returning org_id`,
        );
      expect(await insert(12.5)).toEqual([]);
      expect(await insert(10)).toHaveLength(1);
    } finally {
      await database.close();
    }
  }, 120_000); // every migration from an empty database: about 25 s on PGlite on a busy machine
});
