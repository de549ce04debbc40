import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';

let t: TestApp;
let base: string;
const auth = () => ({ token: t.orgA.token });
const list = async (query: string) => {
  const res = await t.call({ method: 'GET', url: `${base}?${query}`, auth: auth() });
  expect(res.statusCode).toBe(200);
  return res.json();
};

beforeAll(async () => {
  t = await buildTestApp({ workers: false });
  base = `/api/v1/orgs/${t.orgA.orgId}/leads`;
  // 10,200 leads written straight to the table (through the API this would take minutes): one in
  // 100 comes from a trade fair, the rest share one e-mail domain.
  await t.database.db.execute(sql`
    insert into leads (id, org_id, project_id, name, email, email_key, company, source, created_at, updated_at)
    select 'lead_bulk' || lpad(i::text, 6, '0'), ${t.orgA.orgId}, ${t.orgA.projectId}, 'Bulk person ' || i,
      'bulk' || i || '@many.example', 'bulk' || i || '@many.example', 'Company ' || (i % 300),
      case when i % 100 = 0 then 'fair' else 'web' end, now() - (i || ' seconds')::interval, now() - (i || ' seconds')::interval
    from generate_series(1, 10200) as i`);
  await t.database.db.execute(sql`analyze leads`);
}, 120_000);
afterAll(async () => {
  await t.close();
});

describe('lead search and totals at scale', () => {
  it('counts exactly up to 10,000 matches and flags an estimate above', async () => {
    const broad = await list('q=many.example');
    expect(broad.totalIsEstimate).toBe(true);
    expect(broad.total).toBeGreaterThan(10_000);
    expect(broad.items).toHaveLength(20);
    expect(broad.items[0].name).toBe('Bulk person 1');
    const selective = await list('source=fair');
    expect(selective).toMatchObject({ total: 102 });
    expect(selective.totalIsEstimate).toBeUndefined();
    expect((await list('q=Company%20299')).total).toBe(34);
  });

  it('finds a substring of any of the five fields, in any case, and not across two fields', async () => {
    const lead = (
      await t.call({
        method: 'POST',
        url: base,
        auth: auth(),
        payload: {
          name: 'Zelda Quux',
          email: 'zq@hyrule.example',
          phone: '+1 415 555 0199',
          company: 'Triforce Ltd',
          website: 'https://www.kokiri.example/forest',
        },
      })
    ).json();
    for (const q of ['zelda q', 'HYRULE', 'triforce', 'kokiri.example/for', '4155550199', '+1415555']) {
      const found = await list(`q=${encodeURIComponent(q)}`);
      expect(
        found.items.map((l: { id: string }) => l.id),
        q,
      ).toEqual([lead.id]);
    }
    // The end of the name and the start of the e-mail are not one text.
    expect((await list(`q=${encodeURIComponent('Quuxzq@')}`)).total).toBe(0);
    // LIKE's wildcards in q are plain characters.
    expect((await list(`q=${encodeURIComponent('Zelda%Quux')}`)).total).toBe(0);
    // A short word (a legal form, a top-level domain) is matched with the rest, not left out.
    expect((await list(`q=${encodeURIComponent('Triforce Ltd')}`)).items.map((l: { id: string }) => l.id)).toEqual([lead.id]);
    expect((await list(`q=${encodeURIComponent('Triforce Inc')}`)).total).toBe(0);
    expect((await list(`q=${encodeURIComponent('hyrule.example')}`)).total).toBe(1);
    expect((await list(`q=${encodeURIComponent('hyrule.com')}`)).total).toBe(0);
    // Two long words (looked up one by one) are still the phrase: not in another order, nor apart.
    expect((await list(`q=${encodeURIComponent('zelda quux')}`)).items.map((l: { id: string }) => l.id)).toEqual([lead.id]);
    expect((await list(`q=${encodeURIComponent('quux zelda')}`)).total).toBe(0);
    expect((await list(`q=${encodeURIComponent('zelda triforce')}`)).total).toBe(0);
  });

  it('pages a filter whose matches are not among the newest leads, and breaks ties by creation', async () => {
    // The newest thousand leads all miss the filter (yesterday's import of another source).
    await t.database.db.execute(sql`
      insert into leads (id, org_id, project_id, name, company, source, score, tags, created_at, updated_at)
      select 'lead_recent' || lpad(i::text, 6, '0'), ${t.orgA.orgId}, ${t.orgA.projectId}, 'Recent ' || i, 'Recent Co', 'import', 0, array['import'],
        now() + (i || ' seconds')::interval, now() + (i || ' seconds')::interval
      from generate_series(1, 1000) as i`);
    await t.database.db.execute(sql`update leads set score = 90, tags = array['vip'] where id in ('lead_bulk000100', 'lead_bulk000200', 'lead_bulk000300')`);
    await t.database.db.execute(sql`analyze leads`);
    for (const query of ['minScore=90', 'tags=vip', 'minScore=90&tags=vip&source=fair']) {
      const found = await list(query);
      expect(found.total, query).toBe(3);
      expect(
        found.items.map((l: { id: string }) => l.id),
        query,
      ).toEqual(['lead_bulk000100', 'lead_bulk000200', 'lead_bulk000300']);
    }
    // Equal companies: the newest first when descending, the oldest first when ascending.
    const desc = (await list('source=import&sort=-company&pageSize=3')).items.map((l: { name: string }) => l.name);
    expect(desc).toEqual(['Recent 1000', 'Recent 999', 'Recent 998']);
    const asc = (await list('source=import&sort=company&pageSize=3')).items.map((l: { name: string }) => l.name);
    expect(asc).toEqual(['Recent 1', 'Recent 2', 'Recent 3']);
    const paged = await list('source=import&page=2&pageSize=10');
    expect(paged.total).toBe(1000);
    expect(paged.items[0].name).toBe('Recent 990');
  });

  it('sorts and pages a search like any list, and finds a lead by what it was changed to', async () => {
    // 34 leads of "Company 299" (the bulk ones): by name descending, the second page of ten.
    const page2 = await list('q=company%20299&sort=-name&pageSize=10&page=2');
    expect(page2.total).toBe(34);
    // Past the last match: no items, and still the number of matches.
    expect(await list('q=company%20299&sort=-name&pageSize=10&page=5')).toMatchObject({ items: [], total: 34, page: 5 });
    expect(await list('minScore=90&page=2')).toMatchObject({ items: [], total: 3 });
    const all = (await list('q=company%20299&sort=-name&pageSize=100')).items.map((l: { name: string }) => l.name);
    expect(all).toHaveLength(34);
    // "Bulk person 10199" … "Bulk person 299": one case and digits, so byte order is the collation's.
    expect(all).toEqual([...all].sort().reverse());
    expect(new Set(all).size).toBe(34);
    expect(page2.items.map((l: { name: string }) => l.name)).toEqual(all.slice(10, 20));
    expect((await list('q=company%20299&page=5&pageSize=10')).items).toEqual([]);

    const lead = (await t.call({ method: 'POST', url: base, auth: auth(), payload: { name: 'Ganon Dorf', email: 'gd@gerudo.example' } })).json();
    expect((await list('q=ganon')).items.map((l: { id: string }) => l.id)).toEqual([lead.id]);
    const renamed = await t.call({ method: 'PATCH', url: `${base}/${lead.id}`, auth: auth(), payload: { name: 'Ganondorf Dragmire' } });
    expect(renamed.statusCode).toBe(200);
    expect((await list('q=dragmire')).items.map((l: { id: string }) => l.id)).toEqual([lead.id]);
    expect((await list('q=ganon%20dorf')).total).toBe(0);
    await t.call({ method: 'DELETE', url: `${base}/${lead.id}`, auth: auth() });
    expect((await list('q=dragmire')).total).toBe(0);
  });
});
