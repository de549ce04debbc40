import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { IMPORT_MAX_ROWS } from './import.ts';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await buildTestApp();
  base = `/api/v1/orgs/${t.orgA.orgId}/leads`;
});
afterAll(async () => {
  await t.close();
});

const owner = () => ({ token: t.orgA.token });
const importRows = (payload: unknown, auth: { token?: string; apiKey?: string } = owner()) =>
  t.call({ method: 'POST', url: `${base}/import`, auth, payload: payload as Record<string, unknown> });
const importCsv = (csv: string, query = '') =>
  t.call({ method: 'POST', url: `${base}/import${query}`, auth: owner(), headers: { 'content-type': 'text/csv; charset=utf-8' }, payload: csv });
const total = async (q: string) => (await t.call({ method: 'GET', url: `${base}?q=${encodeURIComponent(q)}`, auth: owner() })).json().total as number;

describe('POST …/leads/import', () => {
  it('creates, merges into existing leads and earlier rows, and rejects bad rows by number with a readable reason', async () => {
    const existing = (await t.call({ method: 'POST', url: base, auth: owner(), payload: { email: 'known@imp1.example', tags: ['old'] } })).json();
    const res = await importRows({
      rows: [
        { name: 'New One', email: 'new1@imp1.example' },
        { email: 'KNOWN@imp1.example', company: 'Known Co', tags: ['imported'] },
        { name: 'Phone A', phone: '+1 415 555 0171' },
        { phone: '+14155550171', source: 'fair' },
        { name: 'Scored', score: 5 },
        { company: 'Only a company' },
        { email: 'not-an-email' },
        'just text',
      ],
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ created: 2, merged: 2 });
    expect(body.rejected).toEqual([
      { row: 5, error: "unknown property 'score'" },
      { row: 6, error: 'A lead needs at least one of name, email, phone or website' },
      { row: 7, error: 'email must be an e-mail address' },
      { row: 8, error: 'must be an object' },
    ]);
    const merged = (await t.call({ method: 'GET', url: `${base}/${existing.id}`, auth: owner() })).json();
    expect(merged).toMatchObject({ company: 'Known Co', tags: ['old', 'imported'] });
    const phone = (await t.call({ method: 'GET', url: `${base}?q=${encodeURIComponent('+14155550171')}`, auth: owner() })).json();
    expect(phone.items).toHaveLength(1);
    expect(phone.items[0]).toMatchObject({ name: 'Phone A', source: 'fair' });
  });

  it('dryRun counts the same without storing anything', async () => {
    const rows = [{ email: 'a@imp2.example' }, { email: 'b@imp2.example' }, { email: 'A@imp2.example', name: 'A again' }, { website: 'www.imp2.example' }];
    const dry = await importRows({ rows, dryRun: true });
    expect(dry.statusCode).toBe(200);
    expect(dry.json()).toEqual({ created: 3, merged: 1, rejected: [] });
    expect(await total('imp2.example')).toBe(0);
    const real = await importRows({ rows });
    expect(real.json()).toEqual({ created: 3, merged: 1, rejected: [] });
    expect(await total('imp2.example')).toBe(3);
    // Now every row matches a stored lead.
    expect((await importRows({ rows, dryRun: true })).json()).toEqual({ created: 0, merged: 4, rejected: [] });
  });

  it('reads CSV with a header: known columns, tags split, other columns into custom, dryRun in the query', async () => {
    const csv =
      '\uFEFFName,Email,Tags,custom.plan,Region\n' +
      '"Lovelace, Ada",ada@imp3.example,vip;uk,pro,EMEA\n' +
      'Grace,grace@imp3.example,"us|navy",,\n' +
      ',,,,\n' +
      'Nobody,,,,\n';
    const dry = await importCsv(csv, '?dryRun=true');
    expect(dry.statusCode).toBe(200);
    expect(dry.json()).toEqual({ created: 3, merged: 0, rejected: [] });
    expect(await total('imp3.example')).toBe(0);
    const res = await importCsv(csv);
    expect(res.json()).toEqual({ created: 3, merged: 0, rejected: [] });
    const list = (await t.call({ method: 'GET', url: `${base}?q=imp3.example&sort=email`, auth: owner() })).json();
    expect(list.items.map((l: { name: string; tags: string[]; custom: object }) => [l.name, l.tags, l.custom])).toEqual([
      ['Lovelace, Ada', ['vip', 'uk'], { plan: 'pro', Region: 'EMEA' }],
      ['Grace', ['us', 'navy'], {}],
    ]);
  });

  it('de-duplicates rows of one person imported side by side: one lead each, every row merged in, in row order', async () => {
    const rows = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 150; i++) rows.push({ email: `p${i}@imp4.example`, tags: [`r${round}`], company: `Round ${round}` });
    }
    const res = await importRows({ rows });
    expect(res.json()).toEqual({ created: 150, merged: 450, rejected: [] });
    const list = (await t.call({ method: 'GET', url: `${base}?q=imp4.example&pageSize=100`, auth: owner() })).json();
    expect(list.total).toBe(150);
    for (const lead of list.items) {
      expect([...lead.tags].sort()).toEqual(['r0', 'r1', 'r2', 'r3']);
      // The person's last row (in the last round, chunks after its first) was merged last.
      expect(lead.company).toBe('Round 3');
    }
  });

  it('merges a row with a known key and a new one into the known lead, beside new people of the same chunk', async () => {
    const known = (await t.call({ method: 'POST', url: base, auth: owner(), payload: { name: 'Known Site', website: 'https://www.imp8.example' } })).json();
    const rows = [
      ...Array.from({ length: 30 }, (_, i) => ({ email: `n${i}@imp8.example` })),
      { email: 'new-address@imp8.example', website: 'imp8.example/contact', company: 'Site Co' },
    ];
    expect((await importRows({ rows })).json()).toEqual({ created: 30, merged: 1, rejected: [] });
    expect((await t.call({ method: 'GET', url: `${base}/${known.id}`, auth: owner() })).json()).toMatchObject({
      email: 'new-address@imp8.example',
      company: 'Site Co',
    });
    expect(await total('imp8.example')).toBe(31);
  });

  it('refuses more than 10,000 rows, unreadable CSV, a CSV without rows, and bodies of other types', async () => {
    const many = await importRows({ rows: Array.from({ length: 10_001 }, (_, i) => ({ name: `n${i}` })) });
    expect(many.statusCode).toBe(400);
    expect(many.json().code).toBe('VALIDATION_ERROR');
    const manyCsv = await importCsv('name\n' + Array.from({ length: 10_001 }, (_, i) => `n${i}`).join('\n'));
    expect(manyCsv.statusCode).toBe(400);
    expect(manyCsv.json().message).toContain('at most 10000 rows');
    const broken = await importCsv('name,email\n"unterminated,x\n');
    expect(broken.statusCode).toBe(400);
    expect(broken.json().message).toMatch(/^The CSV could not be read/);
    expect((await importCsv('name,email\n')).statusCode).toBe(400);
    const xml = await t.call({ method: 'POST', url: `${base}/import`, auth: owner(), headers: { 'content-type': 'application/xml' }, payload: '<rows/>' });
    expect(xml.statusCode).toBe(415);
  });

  it('needs leads:write, stays in the organization and in a bound key’s project', async () => {
    const reader = await t.key(t.orgA.orgId, ['leads:read']);
    expect((await importRows({ rows: [{ name: 'x' }] }, { apiKey: reader })).statusCode).toBe(403);
    const other = await t.call({
      method: 'POST',
      url: `/api/v1/orgs/${t.orgA.orgId}/leads/import`,
      auth: { token: t.orgB.token },
      payload: { rows: [{ name: 'x' }] },
    });
    expect([403, 404]).toContain(other.statusCode);
    const project2 = (await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/projects`, auth: owner(), payload: { name: 'Import P2' } })).json();
    const bound = await t.key(t.orgA.orgId, ['leads:write', 'leads:read'], project2.id);
    const res = await importRows(
      { rows: [{ email: 'bound@imp5.example' }, { email: 'elsewhere@imp5.example', projectId: t.orgA.projectId }] },
      { apiKey: bound },
    );
    expect(res.statusCode).toBe(200);
    expect(res.json().created).toBe(1);
    expect(res.json().rejected).toHaveLength(1);
    expect(res.json().rejected[0].row).toBe(2);
    const mine = (await t.call({ method: 'GET', url: `${base}?q=imp5.example`, auth: { apiKey: bound } })).json();
    expect(mine.items.map((l: { projectId: string }) => l.projectId)).toEqual([project2.id]);
  });

  it('counts once against the rate limit', async () => {
    const limited = await buildTestApp({ env: { RATE_LIMIT_MAX: '3' }, workers: false });
    try {
      const rows = Array.from({ length: 500 }, (_, i) => ({ email: `rl${i}@imp6.example` }));
      const url = `/api/v1/orgs/${limited.orgA.orgId}/leads`;
      const auth = { token: limited.orgA.token };
      expect((await limited.call({ method: 'POST', url: `${url}/import`, auth, payload: { rows } })).json().created).toBe(500);
      expect((await limited.call({ method: 'GET', url, auth })).json().total).toBe(500);
      expect((await limited.call({ method: 'GET', url, auth })).statusCode).toBe(200);
      expect((await limited.call({ method: 'GET', url, auth })).statusCode).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe('an import beside other work', () => {
  let address: string;
  beforeAll(async () => {
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  const count = async (orgId: string, token: string, q: string) =>
    (await t.call({ method: 'GET', url: `/api/v1/orgs/${orgId}/leads?q=${q}&pageSize=1`, auth: { token } })).json().total as number;
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('stops when its client leaves: the rows written stay, the rest are never written', async () => {
    const rows = Array.from({ length: IMPORT_MAX_ROWS }, (_, i) => ({ name: `Gone ${i}`, email: `g${i}@imp7.example` }));
    const client = new AbortController();
    const request = fetch(`${address}${base}/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.orgA.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rows }),
      signal: client.signal,
    }).catch((error: unknown) => error);
    // Under way: some leads are in.
    while ((await count(t.orgA.orgId, t.orgA.token, 'imp7.example')) === 0) await pause(20);
    client.abort();
    expect(await request).toMatchObject({ name: 'AbortError' });
    // Until the count stops growing (the chunk under way when the client left is finished).
    let last = -1;
    let now = await count(t.orgA.orgId, t.orgA.token, 'imp7.example');
    while (now !== last) {
      last = now;
      await pause(500);
      now = await count(t.orgA.orgId, t.orgA.token, 'imp7.example');
    }
    expect(now).toBeGreaterThan(0);
    expect(now).toBeLessThan(IMPORT_MAX_ROWS / 2);
  });

  it("answers another organization's lead list while a large import runs", async () => {
    await t.call({
      method: 'POST',
      url: `/api/v1/orgs/${t.orgB.orgId}/leads`,
      auth: { token: t.orgB.token },
      payload: { name: 'B only', email: 'b@imp9.example' },
    });
    const rows = Array.from({ length: 3000 }, (_, i) => ({ name: `Busy ${i}`, email: `busy${i}@imp9.example` }));
    const order: string[] = [];
    const imported = importRows({ rows }).then((res) => {
      order.push('import');
      return res;
    });
    // Once the import is under way.
    while ((await count(t.orgA.orgId, t.orgA.token, 'imp9.example')) === 0) await pause(20);
    const list = await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/leads`, auth: { token: t.orgB.token } });
    order.push('list');
    expect(list.statusCode).toBe(200);
    expect(list.json().items.map((l: { name: string }) => l.name)).toEqual(['B only']);
    expect((await imported).json()).toEqual({ created: 3000, merged: 0, rejected: [] });
    expect(order).toEqual(['list', 'import']);
  });
});

describe('GET …/leads/:id/events', () => {
  it("lists the lead's events newest first, paged, and only that lead's", async () => {
    const lead = (await t.call({ method: 'POST', url: base, auth: owner(), payload: { email: 'history@hist.example' } })).json();
    const other = (await t.call({ method: 'POST', url: base, auth: owner(), payload: { email: 'other@hist.example' } })).json();
    await t.call({ method: 'PATCH', url: `${base}/${lead.id}`, auth: owner(), payload: { status: 'QUALIFIED', score: 80 } });
    await t.call({ method: 'PATCH', url: `${base}/${other.id}`, auth: owner(), payload: { status: 'LOST' } });
    await t.call({ method: 'POST', url: base, auth: owner(), payload: { email: 'HISTORY@hist.example', company: 'Hist' } });
    const res = await t.call({ method: 'GET', url: `${base}/${lead.id}/events`, auth: owner() });
    expect(res.statusCode).toBe(200);
    const page = res.json();
    expect(page.total).toBe(4);
    expect(page.items.map((e: { type: string }) => e.type)).toEqual(['lead.updated', 'lead.qualified', 'lead.updated', 'lead.created']);
    expect(page.items[0]).toMatchObject({ organizationId: t.orgA.orgId, projectId: t.orgA.projectId, payload: { lead: { id: lead.id, company: 'Hist' } } });
    expect(page.items[3].id).toMatch(/^evt_/);
    const second = (await t.call({ method: 'GET', url: `${base}/${lead.id}/events?pageSize=3&page=2`, auth: owner() })).json();
    expect(second.items.map((e: { type: string }) => e.type)).toEqual(['lead.created']);
  });

  it('is 404 for a lead of another organization or project, 403 without leads:read', async () => {
    const lead = (await t.call({ method: 'POST', url: base, auth: owner(), payload: { email: 'private@hist.example' } })).json();
    const cross = await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/leads/${lead.id}/events`, auth: { token: t.orgB.token } });
    expect(cross.statusCode).toBe(404);
    const project2 = (await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/projects`, auth: owner(), payload: { name: 'Hist P2' } })).json();
    const bound = await t.key(t.orgA.orgId, ['leads:read'], project2.id);
    expect((await t.call({ method: 'GET', url: `${base}/${lead.id}/events`, auth: { apiKey: bound } })).statusCode).toBe(404);
    const writer = await t.key(t.orgA.orgId, ['workflows:read']);
    expect((await t.call({ method: 'GET', url: `${base}/${lead.id}/events`, auth: { apiKey: writer } })).statusCode).toBe(403);
  });
});
