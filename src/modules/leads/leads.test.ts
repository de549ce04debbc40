import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { onPostgres } from '../../../test/database.ts';
import { eventsOf } from '../../../test/helpers.ts';

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await buildTestApp();
  url = `/api/v1/orgs/${t.orgA.orgId}/leads`;
});
afterAll(async () => {
  await t.close();
});

const owner = () => ({ token: t.orgA.token });
const create = (payload: Record<string, unknown>, auth: { token?: string; apiKey?: string } = owner()) => t.call({ method: 'POST', url, auth, payload });

/** Organization A's events of a type about one lead. */
async function leadEvents(type: string, leadId: string) {
  return (await eventsOf(t, t.orgA.orgId, type)).filter((r) => r.payload.lead.id === leadId);
}

describe('create and de-duplication', () => {
  it('creates a lead with 201, defaults and a lead.created event in the envelope shape', async () => {
    const res = await create({
      name: 'Ada Lovelace',
      email: ' Ada@Example.COM ',
      phone: '+44 20 7946 0958',
      company: 'Engines',
      website: 'https://www.analytical.example/about',
      source: 'form',
      tags: ['vip', 'vip', 'uk'],
      custom: { plan: 'pro' },
    });
    expect(res.statusCode).toBe(201);
    const lead = res.json();
    expect(lead).toMatchObject({
      projectId: t.orgA.projectId,
      name: 'Ada Lovelace',
      email: 'Ada@Example.COM',
      phone: '+442079460958',
      company: 'Engines',
      website: 'https://www.analytical.example/about',
      source: 'form',
      status: 'NEW',
      score: 0,
      tags: ['vip', 'uk'],
      custom: { plan: 'pro' },
    });
    expect(lead.id).toMatch(/^lead_/);
    expect(lead.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(lead.deduplicated).toBeUndefined();
    const [event] = await leadEvents('lead.created', lead.id);
    expect(event).toMatchObject({ orgId: t.orgA.orgId, projectId: t.orgA.projectId, type: 'lead.created' });
    expect(event!.id).toMatch(/^evt_/);
    expect((event!.payload as { lead: unknown }).lead).toMatchObject({ id: lead.id, email: 'Ada@Example.COM', status: 'NEW', tags: ['vip', 'uk'] });
  });

  it('matches on email (trimmed, any case): 200, fields overwrite, tags united, custom merged, lead.updated with changes and actor', async () => {
    const first = (await create({ name: 'Grace', email: 'grace@navy.example', tags: ['a'], custom: { x: 1, y: 1 } })).json();
    const res = await create({ email: '  GRACE@navy.example', company: 'Navy', tags: ['b', 'a'], custom: { y: 2, z: 3 } });
    expect(res.statusCode).toBe(200);
    const merged = res.json();
    expect(merged).toMatchObject({
      id: first.id,
      name: 'Grace',
      company: 'Navy',
      tags: ['a', 'b'],
      custom: { x: 1, y: 2, z: 3 },
      deduplicated: { matchedOn: 'email' },
    });
    const [updated] = await leadEvents('lead.updated', first.id);
    const payload = updated!.payload as { changes: Record<string, unknown>; actor: unknown };
    expect(payload.changes).toMatchObject({ company: { from: null, to: 'Navy' }, tags: { from: ['a'], to: ['a', 'b'] } });
    expect(payload.actor).toEqual({ type: 'user', id: t.orgA.ownerId });
  });

  it('matches on phone in E.164 whatever the formatting', async () => {
    const first = (await create({ name: 'Phone person', phone: '+1 (415) 555-0100' })).json();
    const res = await create({ phone: '+14155550100', source: 'call' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: first.id, phone: '+14155550100', source: 'call', deduplicated: { matchedOn: 'phone' } });
  });

  it('matches on website host without www', async () => {
    const first = (await create({ company: 'Site Co', website: 'http://www.site.example/contact' })).json();
    expect(first.id).toBeDefined();
    const res = await create({ website: 'site.example', name: 'Site owner' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: first.id, name: 'Site owner', deduplicated: { matchedOn: 'website' } });
  });

  it('does not match across projects or organizations', async () => {
    await create({ email: 'same@person.example' });
    const project = (await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/projects`, auth: owner(), payload: { name: 'Other' } })).json();
    expect((await create({ email: 'same@person.example', projectId: project.id })).statusCode).toBe(201);
    const inB = await t.call({
      method: 'POST',
      url: `/api/v1/orgs/${t.orgB.orgId}/leads`,
      auth: { token: t.orgB.token },
      payload: { email: 'same@person.example' },
    });
    expect(inB.statusCode).toBe(201);
  });

  it('a repeat that changes nothing is 200 and writes no event', async () => {
    const first = (await create({ email: 'quiet@example.com', name: 'Quiet' })).json();
    const again = await create({ email: 'quiet@example.com', name: 'Quiet' });
    expect(again.statusCode).toBe(200);
    expect(await leadEvents('lead.updated', first.id)).toHaveLength(0);
  });

  it('needs one of name, email, phone, website; rejects bad phone, website, email and extra fields', async () => {
    for (const payload of [
      {},
      { company: 'Only company' },
      { phone: '12345' },
      { website: 'not a url' },
      { email: 'nope' },
      { name: 'x', color: 'red' },
      { name: 'x', tags: 'a' },
    ]) {
      const res = await create(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
      expect(res.json().details.length).toBeGreaterThan(0);
    }
  });

  it('rejects a project of another organization with 404', async () => {
    const res = await create({ name: 'x', projectId: t.orgB.projectId });
    expect(res.statusCode).toBe(404);
  });

  it('twenty concurrent creates of one person give one lead', async () => {
    const email = `race-${Date.now()}@example.com`;
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => create({ email: i % 2 ? email.toUpperCase() : email, tags: [`t${i}`], phone: '+33 1 23 45 67 89' })),
    );
    const ids = new Set(responses.map((r) => r.json().id));
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.statusCode === 201)).toHaveLength(1);
    expect(responses.filter((r) => r.statusCode === 200)).toHaveLength(19);
    const lead = (await t.call({ method: 'GET', url: `${url}/${[...ids][0]}`, auth: owner() })).json();
    expect(lead.tags).toHaveLength(20);
    const list = await t.call({ method: 'GET', url, auth: owner(), query: { q: email } });
    expect(list.json().total).toBe(1);
    if (onPostgres) expect(t.database.kind).toBe('postgres');
  });

  it('concurrent creates sharing only some keys still meet: one lead carrying all of them', async () => {
    const email = `partial-${Date.now()}@example.com`;
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        create(i % 3 === 0 ? { email, phone: '+33 6 12 34 56 78' } : i % 3 === 1 ? { email, website: 'partial.example' } : { email, name: `Partial ${i}` }),
      ),
    );
    expect(new Set(responses.map((r) => r.json().id)).size).toBe(1);
    expect(responses.filter((r) => r.statusCode === 201)).toHaveLength(1);
    const lead = (await t.call({ method: 'GET', url: `${url}/${responses[0]!.json().id}`, auth: owner() })).json();
    expect(lead).toMatchObject({ email, phone: '+33612345678', website: 'https://partial.example' });
  });

  it('a burst of creates (written together) answers each as if it came alone: new people, a known one, one known in part', async () => {
    const stamp = Date.now();
    const known = (await create({ name: 'Known in the burst', email: `burst-known-${stamp}@example.com` })).json();
    const bodies = [
      ...Array.from({ length: 16 }, (_, i) => ({ name: `Burst ${i}`, email: `burst-${stamp}-${i}@example.com` })),
      { email: `burst-known-${stamp}@example.com`, company: 'Known Co' },
      { email: `burst-known-${stamp}@example.com`, phone: '+33 6 55 44 33 22' },
    ];
    const responses = await Promise.all(bodies.map((payload) => create(payload)));
    expect(responses.slice(0, 16).map((r) => r.statusCode)).toEqual(Array(16).fill(201));
    expect(responses.slice(16).map((r) => [r.statusCode, r.json().id])).toEqual([
      [200, known.id],
      [200, known.id],
    ]);
    const lead = (await t.call({ method: 'GET', url: `${url}/${known.id}`, auth: owner() })).json();
    expect(lead).toMatchObject({ company: 'Known Co', phone: '+33655443322' });
    for (const response of responses.slice(0, 16)) {
      const created = await leadEvents('lead.created', response.json().id);
      expect(created).toHaveLength(1);
      expect(created[0]!.payload.lead).toMatchObject({ name: response.json().name, email: response.json().email });
    }
  });

  it('a person whose email was changed away, or whose lead was deleted, is new again', async () => {
    const first = (await create({ name: 'Mover', email: 'old-address@example.com' })).json();
    await t.call({ method: 'PATCH', url: `${url}/${first.id}`, auth: owner(), payload: { email: 'new-address@example.com' } });
    const again = await create({ name: 'Someone else', email: 'old-address@example.com' });
    expect(again.statusCode).toBe(201);
    expect(again.json().id).not.toBe(first.id);
    const byNew = await create({ email: 'NEW-address@example.com', company: 'Moved Co' });
    expect(byNew.statusCode).toBe(200);
    expect(byNew.json()).toMatchObject({ id: first.id, company: 'Moved Co', deduplicated: { matchedOn: 'email' } });
    await t.call({ method: 'DELETE', url: `${url}/${again.json().id}`, auth: owner() });
    const afterDelete = await create({ email: 'old-address@example.com' });
    expect(afterDelete.statusCode).toBe(201);
  });

  it('a key two leads came to share still matches the one left after the other is deleted (single and bulk delete)', async () => {
    for (const [n, remove] of [
      [1, (id: string) => t.call({ method: 'DELETE', url: `${url}/${id}`, auth: owner() })],
      [2, (id: string) => t.call({ method: 'POST', url: `${url}/bulk`, auth: owner(), payload: { ids: [id], action: 'delete' } })],
    ] as const) {
      const phone = `+1 415 555 01${n}0`;
      const keeper = (await create({ email: `keeper-${n}@example.com` })).json();
      const other = (await create({ phone, name: `Phone owner ${n}` })).json();
      // Matched on email, the keeper takes the phone too: two leads now carry it.
      const merged = await create({ email: `keeper-${n}@example.com`, phone });
      expect(merged.json()).toMatchObject({ id: keeper.id, deduplicated: { matchedOn: 'email' } });
      expect((await remove(other.id)).statusCode).toBeLessThan(300);
      const byPhone = await create({ phone, company: 'Still known' });
      expect(byPhone.statusCode).toBe(200);
      expect(byPhone.json()).toMatchObject({ id: keeper.id, deduplicated: { matchedOn: 'phone' } });
    }
  });
});

describe('read, change, delete', () => {
  it("gets a lead; another organization's lead is 404", async () => {
    const lead = (await create({ name: 'Readable' })).json();
    expect((await t.call({ method: 'GET', url: `${url}/${lead.id}`, auth: owner() })).json()).toMatchObject({ id: lead.id, name: 'Readable' });
    const bLead = (await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgB.orgId}/leads`, auth: { token: t.orgB.token }, payload: { name: 'B' } })).json();
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const res = await t.call({ method, url: `${url}/${bLead.id}`, auth: owner(), payload: method === 'PATCH' ? { name: 'hijack' } : undefined });
      expect(res.statusCode).toBe(404);
    }
    expect((await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/leads/${bLead.id}`, auth: owner() })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: `${url}/lead_missing`, auth: owner() })).statusCode).toBe(404);
  });

  it('patches fields, status and score; QUALIFIED emits lead.qualified once', async () => {
    const lead = (await create({ name: 'To qualify', email: 'q@example.com' })).json();
    const res = await t.call({
      method: 'PATCH',
      url: `${url}/${lead.id}`,
      auth: owner(),
      payload: { status: 'QUALIFIED', score: 87, scoreReason: 'Budget and need', company: 'Q Inc' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'QUALIFIED', score: 87, company: 'Q Inc' });
    const [updated] = await leadEvents('lead.updated', lead.id);
    expect((updated!.payload as { changes: object }).changes).toMatchObject({ status: { from: 'NEW', to: 'QUALIFIED' }, score: { from: 0, to: 87 } });
    const qualified = await leadEvents('lead.qualified', lead.id);
    expect(qualified).toHaveLength(1);
    expect(qualified[0]!.payload).toMatchObject({ score: 87, scoreReason: 'Budget and need' });
    await t.call({ method: 'PATCH', url: `${url}/${lead.id}`, auth: owner(), payload: { score: 90 } });
    expect(await leadEvents('lead.qualified', lead.id)).toHaveLength(1);
  });

  it('a patch clearing a field uses null; invalid values are 400; duplicate contact is 409', async () => {
    const a = (await create({ name: 'A', email: 'a-unique@example.com', company: 'Co' })).json();
    await create({ name: 'B', email: 'b-unique@example.com' });
    const cleared = await t.call({ method: 'PATCH', url: `${url}/${a.id}`, auth: owner(), payload: { company: null } });
    expect(cleared.json().company).toBeNull();
    expect((await t.call({ method: 'PATCH', url: `${url}/${a.id}`, auth: owner(), payload: { status: 'WON' } })).statusCode).toBe(400);
    expect((await t.call({ method: 'PATCH', url: `${url}/${a.id}`, auth: owner(), payload: { score: 101 } })).statusCode).toBe(400);
    expect((await t.call({ method: 'PATCH', url: `${url}/${a.id}`, auth: owner(), payload: {} })).statusCode).toBe(400);
    const clash = await t.call({ method: 'PATCH', url: `${url}/${a.id}`, auth: owner(), payload: { email: 'B-UNIQUE@example.com' } });
    expect(clash.statusCode).toBe(409);
    expect(clash.json().code).toBe('CONFLICT');
  });

  it('deletes with 204, then 404', async () => {
    const lead = (await create({ name: 'Gone soon' })).json();
    expect((await t.call({ method: 'DELETE', url: `${url}/${lead.id}`, auth: owner() })).statusCode).toBe(204);
    expect((await t.call({ method: 'GET', url: `${url}/${lead.id}`, auth: owner() })).statusCode).toBe(404);
    expect((await t.call({ method: 'DELETE', url: `${url}/${lead.id}`, auth: owner() })).statusCode).toBe(404);
  });
});

describe('list', () => {
  let t2: TestApp;
  let base: string;
  beforeAll(async () => {
    t2 = await buildTestApp();
    base = `/api/v1/orgs/${t2.orgA.orgId}/leads`;
    const seed = [
      { name: 'Alice Hot', email: 'alice@acme.example', company: 'Acme', tags: ['vip', 'eu'], source: 'form' },
      { name: 'Bob Warm', email: 'bob@beta.example', company: 'Beta', tags: ['eu'], source: 'ads' },
      { name: 'Carol Cold', phone: '+4915112345678', company: 'Gamma', tags: ['vip'], source: 'form' },
      { name: 'Dan', website: 'dan.example', tags: [] },
    ];
    for (const lead of seed) await t2.call({ method: 'POST', url: base, auth: { token: t2.orgA.token }, payload: lead });
    const all = (await t2.call({ method: 'GET', url: base, auth: { token: t2.orgA.token } })).json().items as { id: string; name: string }[];
    const byName = Object.fromEntries(all.map((l) => [l.name, l.id]));
    await t2.call({ method: 'PATCH', url: `${base}/${byName['Alice Hot']}`, auth: { token: t2.orgA.token }, payload: { status: 'QUALIFIED', score: 90 } });
    await t2.call({ method: 'PATCH', url: `${base}/${byName['Bob Warm']}`, auth: { token: t2.orgA.token }, payload: { status: 'CONTACTED', score: 50 } });
    await t2.call({ method: 'PATCH', url: `${base}/${byName['Carol Cold']}`, auth: { token: t2.orgA.token }, payload: { score: 10 } });
  });
  afterAll(async () => {
    await t2.close();
  });
  const list = async (query: Record<string, string>) => {
    const res = await t2.call({ method: 'GET', url: base, auth: { token: t2.orgA.token }, query });
    return { res, names: (res.json().items ?? []).map((l: { name: string }) => l.name) as string[] };
  };

  it('returns the envelope, newest first by default', async () => {
    const { res, names } = await list({});
    expect(res.json()).toMatchObject({ total: 4, page: 1, pageSize: 20 });
    expect(names).toEqual(['Dan', 'Carol Cold', 'Bob Warm', 'Alice Hot']);
  });

  it('filters by status, minScore, tags (all of them), source and q', async () => {
    expect((await list({ status: 'QUALIFIED' })).names).toEqual(['Alice Hot']);
    expect((await list({ status: 'QUALIFIED,CONTACTED', sort: 'name' })).names).toEqual(['Alice Hot', 'Bob Warm']);
    expect((await list({ minScore: '50', sort: '-score' })).names).toEqual(['Alice Hot', 'Bob Warm']);
    expect((await list({ tags: 'vip', sort: 'name' })).names).toEqual(['Alice Hot', 'Carol Cold']);
    expect((await list({ tags: 'vip,eu' })).names).toEqual(['Alice Hot']);
    expect((await list({ source: 'form', sort: 'name' })).names).toEqual(['Alice Hot', 'Carol Cold']);
    expect((await list({ q: 'beta' })).names).toEqual(['Bob Warm']);
    expect((await list({ q: 'ALICE@' })).names).toEqual(['Alice Hot']);
    expect((await list({ q: '4915112' })).names).toEqual(['Carol Cold']);
    expect((await list({ q: 'dan.example' })).names).toEqual(['Dan']);
    expect((await list({ q: '100%_' })).names).toEqual([]);
  });

  it('pages and sorts on allowed fields only', async () => {
    const p1 = await list({ pageSize: '3', page: '1', sort: 'name' });
    const p2 = await list({ pageSize: '3', page: '2', sort: 'name' });
    expect(p1.names).toEqual(['Alice Hot', 'Bob Warm', 'Carol Cold']);
    expect(p2.names).toEqual(['Dan']);
    expect(p2.res.json()).toMatchObject({ total: 4, page: 2, pageSize: 3 });
    expect((await list({ sort: 'passwordHash' })).res.statusCode).toBe(400);
    expect((await list({ pageSize: '101' })).res.statusCode).toBe(400);
    expect((await list({ page: '0' })).res.statusCode).toBe(400);
    expect((await list({ status: 'WON' })).res.statusCode).toBe(400);
  });

  it('computes stats', async () => {
    const res = await t2.call({ method: 'GET', url: `${base}/stats`, auth: { token: t2.orgA.token } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      total: 4,
      byStatus: { NEW: 2, CONTACTED: 1, ENGAGED: 0, QUALIFIED: 1, UNQUALIFIED: 0, CUSTOMER: 0, LOST: 0 },
      bySource: { form: 2, ads: 1, unknown: 1 },
      averageScore: 37.5, // (90 + 50 + 10 + 0) / 4: an unscored lead counts as 0
      createdLast7Days: 4,
      createdLast30Days: 4,
    });
    const usageKey = await t2.key(t2.orgA.orgId, ['usage:read']);
    expect((await t2.call({ method: 'GET', url: `${base}/stats`, auth: { apiKey: usageKey } })).statusCode).toBe(200);
    const contentKey = await t2.key(t2.orgA.orgId, ['content:read']);
    expect((await t2.call({ method: 'GET', url: `${base}/stats`, auth: { apiKey: contentKey } })).statusCode).toBe(403);
    expect((await t2.call({ method: 'GET', url: `/api/v1/orgs/${t2.orgB.orgId}/leads/stats`, auth: { token: t2.orgA.token } })).statusCode).toBe(404);
  });
});

describe('bulk', () => {
  it('tags, untags, sets status and deletes, counting matched and updated', async () => {
    const ids = [] as string[];
    for (const name of ['Bulk 1', 'Bulk 2', 'Bulk 3']) ids.push((await create({ name, tags: name === 'Bulk 1' ? ['hot'] : [] })).json().id);
    const bLead = (
      await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgB.orgId}/leads`, auth: { token: t.orgB.token }, payload: { name: 'B bulk' } })
    ).json();
    const bulk = (payload: object) => t.call({ method: 'POST', url: `${url}/bulk`, auth: owner(), payload });

    const tag = await bulk({ ids: [...ids, bLead.id], action: 'tag', value: 'hot' });
    expect(tag.json()).toEqual({ action: 'tag', matched: 3, updated: 2 });
    const untag = await bulk({ ids, action: 'untag', value: ['hot', 'missing'] });
    expect(untag.json()).toEqual({ action: 'untag', matched: 3, updated: 3 });
    const status = await bulk({ ids, action: 'setStatus', value: 'QUALIFIED' });
    expect(status.json()).toEqual({ action: 'setStatus', matched: 3, updated: 3 });
    expect(await leadEvents('lead.qualified', ids[0]!)).toHaveLength(1);
    const del = await bulk({ ids: [...ids, bLead.id], action: 'delete' });
    expect(del.json()).toEqual({ action: 'delete', matched: 3, updated: 3 });
    expect((await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/leads/${bLead.id}`, auth: { token: t.orgB.token } })).statusCode).toBe(200);

    expect((await bulk({ ids, action: 'setStatus', value: 'WON' })).statusCode).toBe(400);
    expect((await bulk({ ids, action: 'tag' })).statusCode).toBe(400);
    expect((await bulk({ ids, action: 'explode' })).statusCode).toBe(400);
    expect((await bulk({ ids: [], action: 'delete' })).statusCode).toBe(400);
  });
});

describe('access', () => {
  it('viewers read but do not write; scopes are enforced for keys', async () => {
    const viewer = await t.member(t.orgA.orgId, 'viewer');
    expect((await t.call({ method: 'GET', url, auth: { token: viewer.token } })).statusCode).toBe(200);
    const denied = await create({ name: 'no' }, { token: viewer.token });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('FORBIDDEN');
    const member = await t.member(t.orgA.orgId, 'member');
    expect((await create({ name: 'member lead' }, { token: member.token })).statusCode).toBe(201);

    const readKey = await t.key(t.orgA.orgId, ['leads:read']);
    expect((await t.call({ method: 'GET', url, auth: { apiKey: readKey } })).statusCode).toBe(200);
    for (const req of [
      { method: 'POST' as const, url, payload: { name: 'x' } },
      { method: 'POST' as const, url: `${url}/bulk`, payload: { ids: ['lead_x'], action: 'delete' } },
      { method: 'PATCH' as const, url: `${url}/lead_x`, payload: { name: 'x' } },
      { method: 'DELETE' as const, url: `${url}/lead_x` },
    ]) {
      const res = await t.call({ ...req, auth: { apiKey: readKey } });
      expect(res.statusCode, `${req.method} ${req.url}`).toBe(403);
      expect(res.json().code).toBe('INSUFFICIENT_SCOPE');
    }
    const writeOnly = await t.key(t.orgA.orgId, ['leads:write']);
    expect((await t.call({ method: 'GET', url, auth: { apiKey: writeOnly } })).json().code).toBe('INSUFFICIENT_SCOPE');
    const res = await create({ name: 'by key' }, { apiKey: writeOnly });
    expect(res.statusCode).toBe(201);
    const [event] = await leadEvents('lead.created', res.json().id);
    expect((event!.payload as { actor: { type: string } }).actor.type).toBe('apiKey');
  });

  it('no credentials: 401 on every lead route', async () => {
    for (const [method, path] of [
      ['GET', url],
      ['POST', url],
      ['GET', `${url}/stats`],
      ['POST', `${url}/bulk`],
      ['GET', `${url}/x`],
      ['PATCH', `${url}/x`],
      ['DELETE', `${url}/x`],
    ] as const) {
      const res = await t.call({ method, url: path, payload: method === 'POST' || method === 'PATCH' ? {} : undefined });
      expect(res.statusCode, `${method} ${path}`).toBe(401);
      expect(res.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized', code: 'UNAUTHORIZED' });
    }
  });
});
