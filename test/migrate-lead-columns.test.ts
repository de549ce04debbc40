import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rows } from '../src/platform/db.ts';
import { databaseBefore, freshDatabase } from './database.ts';

/**
 * Migration 0029 writes the leads table anew with its columns in another order. An installation
 * that has leads when it upgrades keeps every one of them, with their de-duplication claims, and
 * the table keeps its keys, indexes and references.
 */
describe('migration 0029: the leads table written anew in its new column order', () => {
  it('keeps every lead, its claims, its search text, and the keys, indexes and references', async () => {
    const database = await databaseBefore('0029_lead_column_order');
    try {
      const { db } = database;

      await db.execute(sql`insert into organizations (id, name) values ('org_a', 'A')`);
      await db.execute(sql`insert into projects (id, org_id, name) values ('prj_a', 'org_a', 'Default')`);
      await db.execute(sql`
        insert into leads (id, org_id, project_id, name, email, phone, company, website, source, status, score, score_reason, tags, custom, email_key, phone_key, website_key, created_at, updated_at)
        values ('lead_1', 'org_a', 'prj_a', 'Ada Lovelace', 'Ada@Example.com', '+44 20 7946 0000', 'Analytical Engines', 'https://engines.example', 'fair', 'QUALIFIED', 87.5, 'math', '{vip,"with space"}', '{"seats": 3, "note": "é"}', 'ada@example.com', '+442079460000', 'engines.example', '2026-01-02T03:04:05.678Z', '2026-02-03T04:05:06.789Z'),
               ('lead_2', 'org_a', 'prj_a', null, 'grace@example.com', null, null, null, null, 'NEW', 0, null, '{}', '{}', 'grace@example.com', null, null, '2026-03-01T00:00:00Z', '2026-03-01T00:00:00Z')`);
      await db.execute(sql`insert into lead_keys (project_id, kind, key, org_id, lead_id) values
        ('prj_a', 'email', 'ada@example.com', 'org_a', 'lead_1'), ('prj_a', 'phone', '+442079460000', 'org_a', 'lead_1'), ('prj_a', 'email', 'grace@example.com', 'org_a', 'lead_2')`);
      const snapshot = () =>
        rows<Record<string, unknown>>(
          db,
          sql`
        select id, org_id, project_id, name, email, phone, company, website, source, status, score, score_reason, tags, custom::text as custom,
               email_key, phone_key, website_key, created_at::text as created_at, updated_at::text as updated_at, search
        from leads order by id`,
        );
      const leadsBefore = await snapshot();

      const result = await database.migrate();
      // 0029 and every migration after it (0000–0028 were there).
      expect(result.applied).toBe(result.total - 29);

      expect(await snapshot()).toEqual(leadsBefore);
      // The upgrade's leads have statistics at once (the planner reads the new table by them).
      const [analyzed] = await rows<{ n: number }>(db, sql`select reltuples::int as n from pg_class where relname = 'leads'`);
      expect(analyzed!.n).toBe(2);
      expect(leadsBefore[0]!.search).toBe('ada lovelace\nada@example.com\nanalytical engines\nhttps://engines.example\n+44 20 7946 0000');
      const columns = await rows<{ column_name: string }>(
        db,
        sql`select column_name from information_schema.columns where table_name = 'leads' order by ordinal_position`,
      );
      expect(columns.slice(0, 4).map((c) => c.column_name)).toEqual(['id', 'org_id', 'created_at', 'search']);
      const indexes = await rows<{ indexname: string }>(db, sql`select indexname from pg_indexes where tablename = 'leads' order by indexname`);
      expect(indexes.map((i) => i.indexname)).toEqual([
        'leads_filter_idx',
        'leads_org_company_idx',
        'leads_org_created_idx',
        'leads_org_name_idx',
        'leads_org_score_idx',
        'leads_org_source_idx',
        'leads_org_status_idx',
        'leads_org_updated_idx',
        'leads_pkey',
        'leads_project_email_idx',
        'leads_project_phone_idx',
        'leads_project_website_idx',
      ]);

      // The search text is still kept by the database on a write.
      await db.execute(sql`update leads set company = 'Babbage & Co' where id = 'lead_2'`);
      const [grace] = await rows<{ search: string }>(db, sql`select search from leads where id = 'lead_2'`);
      expect(grace!.search).toBe('\ngrace@example.com\nbabbage & co\n\n');
      // The primary key refuses a second lead_1; a lead in a project of another organization is refused.
      await expect(db.execute(sql`insert into leads (id, org_id, project_id) values ('lead_1', 'org_a', 'prj_a')`)).rejects.toThrow();
      await expect(db.execute(sql`insert into leads (id, org_id, project_id) values ('lead_3', 'org_b', 'prj_a')`)).rejects.toThrow();
      // A claim must name a lead, and deleting a lead still takes its claims with it.
      await expect(
        db.execute(sql`insert into lead_keys (project_id, kind, key, org_id, lead_id) values ('prj_a', 'email', 'x@example.com', 'org_a', 'lead_9')`),
      ).rejects.toThrow();
      await db.execute(sql`delete from leads where id = 'lead_1'`);
      const claims = await rows<{ lead_id: string; key: string }>(db, sql`select lead_id, key from lead_keys order by key`);
      expect(claims).toEqual([{ lead_id: 'lead_2', key: 'grace@example.com' }]);
      // Deleting the project (its organization's deletion does) still removes its leads.
      await db.execute(sql`delete from projects where id = 'prj_a'`);
      const [left] = await rows<{ n: number }>(db, sql`select count(*)::int as n from leads`);
      expect(left!.n).toBe(0);
    } finally {
      await database.close();
    }
  }, 120_000); // every migration from an empty database: over 30 s on PGlite on a busy machine

  it("leaves a new installation's empty table unanalyzed, so that the planner does not take it for empty while leads arrive", async () => {
    // Analyzed while empty, the planner read it by sequential scans as it grew: lead creates fell
    // to a third of their speed within a minute, until autovacuum analyzed it again.
    const database = await freshDatabase();
    try {
      const [table] = await rows<{ n: number }>(database.db, sql`select reltuples::int as n from pg_class where relname = 'leads'`);
      expect(table!.n).toBe(-1);
    } finally {
      await database.close();
    }
  });
});
