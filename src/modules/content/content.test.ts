import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { startSocialStandIn, type StandIn } from '../../../test/social-stand-in.ts';
import { integrations } from '../integrations/tables.ts';
import { eventsOf } from '../../../test/helpers.ts';

let t: TestApp;
let api: StandIn;
let base: string;
const owner = () => ({ token: t.orgA.token });

beforeAll(async () => {
  api = await startSocialStandIn();
  t = await buildTestApp({ env: { LINKEDIN_API_URL: api.url, X_API_URL: api.url, PUBLISH_RETRY_DELAYS_S: '0.05', PUBLISHER_POLL_MS: '50' } });
  base = `/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  await t.close();
  await api.close();
});

const create = (payload: Record<string, unknown>, auth: { token?: string; apiKey?: string } = owner()) =>
  t.call({ method: 'POST', url: `${base}/content`, auth, payload });

async function connect(provider: 'x' | 'linkedin', token: string, orgBase = base, auth = owner()) {
  const credentials = provider === 'x' ? { accessToken: token } : { accessToken: token, author: 'urn:li:organization:42' };
  const res = await t.call({ method: 'POST', url: `${orgBase}/integrations`, auth, payload: { provider, name: `${provider} ${token}`, credentials } });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string };
}

describe('drafts', () => {
  it('creates a draft with 201 and post.created', async () => {
    const res = await create({ platform: 'LINKEDIN', body: 'Launch day!', hashtags: ['#launch', '#b2b'], scheduledAt: '2030-01-02T09:00:00+02:00' });
    expect(res.statusCode).toBe(201);
    const post = res.json();
    expect(post).toMatchObject({
      projectId: t.orgA.projectId,
      platform: 'LINKEDIN',
      body: 'Launch day!',
      hashtags: ['#launch', '#b2b'],
      status: 'DRAFT',
      scheduledAt: '2030-01-02T07:00:00.000Z',
      integrationId: null,
      externalId: null,
      url: null,
      createdBy: { type: 'user', id: t.orgA.ownerId },
    });
    expect(post.id).toMatch(/^post_/);
    const created = (await eventsOf(t, t.orgA.orgId, 'post.created')).find((e) => (e.payload as { post: { id: string } }).post.id === post.id);
    expect(created?.projectId).toBe(t.orgA.projectId);
    expect((created!.payload as { post: unknown }).post).toMatchObject({
      id: post.id,
      platform: 'LINKEDIN',
      body: 'Launch day!',
      status: 'DRAFT',
      scheduledAt: '2030-01-02T07:00:00.000Z',
      integrationId: null,
    });
  });

  it('counts X length as X does: links 23, emoji and CJK 2, hashtags included', async () => {
    expect((await create({ platform: 'X', body: 'a'.repeat(280) })).statusCode).toBe(201);
    expect((await create({ platform: 'X', body: 'a'.repeat(281) })).statusCode).toBe(400);
    // 140 CJK characters weigh 280; one more is over.
    expect((await create({ platform: 'X', body: '日'.repeat(140) })).statusCode).toBe(201);
    const cjk = await create({ platform: 'X', body: '日'.repeat(141) });
    expect(cjk.statusCode).toBe(400);
    expect(cjk.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(cjk.json().message).toContain('282');
    // A 200-character URL counts 23: 256 + 1 + 23 = 280.
    expect((await create({ platform: 'X', body: 'b'.repeat(256) + ' https://example.com/' + 'p'.repeat(180) })).statusCode).toBe(201);
    expect((await create({ platform: 'X', body: '😀'.repeat(140) })).statusCode).toBe(201);
    expect((await create({ platform: 'X', body: '😀'.repeat(141) })).statusCode).toBe(400);
    // A ZWJ family (7 code points) and a flag are one emoji each; a bare domain is a link: 2 * 2 + 23 + 253 = 280.
    const family = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}';
    expect((await create({ platform: 'X', body: `${family}\u{1F1EB}\u{1F1F7}example.org/launch-notes ${'d'.repeat(252)}` })).statusCode).toBe(201);
    expect((await create({ platform: 'X', body: `${family}\u{1F1EB}\u{1F1F7}example.org/launch-notes ${'d'.repeat(253)}` })).statusCode).toBe(400);
    // Hashtags are published with the body: 270 + "\n\n" + "#abcdefghi" (10) = 282.
    expect((await create({ platform: 'X', body: 'c'.repeat(270), hashtags: ['#abcdefghi'] })).statusCode).toBe(400);
  });

  it('allows 3,000 characters on LinkedIn and refuses more', async () => {
    expect((await create({ platform: 'LINKEDIN', body: 'x'.repeat(3000) })).statusCode).toBe(201);
    const res = await create({ platform: 'LINKEDIN', body: 'x'.repeat(3001) });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('3000');
  });

  it('refuses hashtags without #, unknown platforms, scheduledAt without an offset, and unknown fields', async () => {
    for (const payload of [
      { platform: 'X', body: 'hi', hashtags: ['nohash'] },
      { platform: 'X', body: 'hi', hashtags: ['#two words'] },
      { platform: 'MYSPACE', body: 'hi' },
      { platform: 'X', body: 'hi', scheduledAt: '2030-01-02T09:00:00' },
      { platform: 'X', body: 'hi', scheduledAt: 'tomorrow' },
      { platform: 'X', body: '   ' },
      { platform: 'X', body: 'hi', extra: 1 },
    ]) {
      const res = await create(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
  });

  it('refuses an integration of another provider, another organization or unknown media', async () => {
    const li = await connect('linkedin', 'ok-li-1');
    const wrong = await create({ platform: 'X', body: 'hi', integrationId: li.id });
    expect(wrong.statusCode).toBe(400);
    const other = await connect('x', 'ok-b', `/api/v1/orgs/${t.orgB.orgId}`, { token: t.orgB.token });
    const foreign = await create({ platform: 'X', body: 'hi', integrationId: other.id });
    expect(foreign.statusCode).toBe(422);
    expect(foreign.json().code).toBe('INTEGRATION_MISSING');
    const media = await create({ platform: 'X', body: 'hi', mediaIds: ['med_nope'] });
    expect(media.statusCode).toBe(400);
  });

  it('lists with status, platform and projectId filters; bad filters are 400', async () => {
    const project = (await t.call({ method: 'POST', url: `${base}/projects`, auth: owner(), payload: { name: 'Social' } })).json();
    const inProject = (await create({ platform: 'X', body: 'project post', projectId: project.id })).json();
    const all = (await t.call({ method: 'GET', url: `${base}/content`, auth: owner(), query: { pageSize: '100' } })).json();
    expect(all.total).toBeGreaterThan(5);
    const byProject = (await t.call({ method: 'GET', url: `${base}/content`, auth: owner(), query: { projectId: project.id } })).json();
    expect(byProject.items.map((p: { id: string }) => p.id)).toEqual([inProject.id]);
    const xs = (await t.call({ method: 'GET', url: `${base}/content`, auth: owner(), query: { platform: 'X', status: 'DRAFT', pageSize: '100' } })).json();
    expect(xs.items.length).toBeGreaterThan(0);
    expect(xs.items.every((p: { platform: string; status: string }) => p.platform === 'X' && p.status === 'DRAFT')).toBe(true);
    const search = (await t.call({ method: 'GET', url: `${base}/content`, auth: owner(), query: { q: 'project post' } })).json();
    expect(search.items.map((p: { id: string }) => p.id)).toContain(inProject.id);
    expect((await t.call({ method: 'GET', url: `${base}/content`, auth: owner(), query: { status: 'GONE' } })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: `${base}/content`, auth: owner(), query: { sort: 'body' } })).statusCode).toBe(400);
  });

  it('gets, changes and deletes a draft', async () => {
    const post = (await create({ platform: 'X', body: 'first' })).json();
    expect((await t.call({ method: 'GET', url: `${base}/content/${post.id}`, auth: owner() })).json()).toMatchObject({ id: post.id, body: 'first' });
    const patched = await t.call({ method: 'PATCH', url: `${base}/content/${post.id}`, auth: owner(), payload: { body: 'second', hashtags: ['#new'] } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ body: 'second', hashtags: ['#new'], status: 'DRAFT' });
    expect((await t.call({ method: 'PATCH', url: `${base}/content/${post.id}`, auth: owner(), payload: { body: 'z'.repeat(281) } })).statusCode).toBe(400);
    expect((await t.call({ method: 'DELETE', url: `${base}/content/${post.id}`, auth: owner() })).statusCode).toBe(204);
    expect((await t.call({ method: 'GET', url: `${base}/content/${post.id}`, auth: owner() })).statusCode).toBe(404);
  });
});

describe('approval without publishing', () => {
  it('approves with an edited body: post.approved carries approvedBy and editedBody; no integration stays APPROVED', async () => {
    const post = (await create({ platform: 'LINKEDIN', body: 'draft text' })).json();
    const res = await t.call({ method: 'POST', url: `${base}/content/${post.id}/approve`, auth: owner(), payload: { body: 'final text' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'APPROVED', body: 'final text', approvedBy: { type: 'user', id: t.orgA.ownerId } });
    const approved = (await eventsOf(t, t.orgA.orgId, 'post.approved')).find((e) => (e.payload as { post: { id: string } }).post.id === post.id)!;
    expect(approved.payload).toMatchObject({
      approvedBy: { type: 'user', id: t.orgA.ownerId },
      editedBody: 'final text',
      post: { id: post.id, status: 'APPROVED', body: 'final text' },
    });
    // Approving twice is a conflict; publishing without an integration is INTEGRATION_MISSING.
    expect((await t.call({ method: 'POST', url: `${base}/content/${post.id}/approve`, auth: owner(), payload: {} })).statusCode).toBe(409);
    const publish = await t.call({ method: 'POST', url: `${base}/content/${post.id}/publish`, auth: owner() });
    expect(publish.statusCode).toBe(422);
    expect(publish.json().code).toBe('INTEGRATION_MISSING');
  });

  it('approval without an edit has no editedBody; an edited text too long for the platform is 400', async () => {
    const post = (await create({ platform: 'X', body: 'short' })).json();
    expect((await t.call({ method: 'POST', url: `${base}/content/${post.id}/approve`, auth: owner(), payload: { body: 'y'.repeat(300) } })).statusCode).toBe(
      400,
    );
    expect((await t.call({ method: 'POST', url: `${base}/content/${post.id}/approve`, auth: owner() })).statusCode).toBe(200);
    const approved = (await eventsOf(t, t.orgA.orgId, 'post.approved')).find((e) => (e.payload as { post: { id: string } }).post.id === post.id)!;
    expect(approved.payload).not.toHaveProperty('editedBody');
  });

  it('a future schedule needs an integration: 422 INTEGRATION_MISSING', async () => {
    const post = (await create({ platform: 'X', body: 'later', scheduledAt: '2031-05-01T10:00:00Z' })).json();
    const res = await t.call({ method: 'POST', url: `${base}/content/${post.id}/approve`, auth: owner() });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('INTEGRATION_MISSING');
    expect((await t.call({ method: 'GET', url: `${base}/content/${post.id}`, auth: owner() })).json().status).toBe('DRAFT');
  });

  it('a future schedule with an integration is SCHEDULED; editing the text sends it back to DRAFT; a new time reschedules', async () => {
    const x = await connect('x', 'ok-sched');
    const post = (await create({ platform: 'X', body: 'later', scheduledAt: '2031-05-01T10:00:00Z', integrationId: x.id })).json();
    const approved = (await t.call({ method: 'POST', url: `${base}/content/${post.id}/approve`, auth: owner() })).json();
    expect(approved.status).toBe('SCHEDULED');
    const moved = (
      await t.call({ method: 'PATCH', url: `${base}/content/${post.id}`, auth: owner(), payload: { scheduledAt: '2031-06-01T10:00:00+01:00' } })
    ).json();
    expect(moved).toMatchObject({ status: 'SCHEDULED', scheduledAt: '2031-06-01T09:00:00.000Z' });
    const unscheduled = (await t.call({ method: 'PATCH', url: `${base}/content/${post.id}`, auth: owner(), payload: { scheduledAt: null } })).json();
    expect(unscheduled.status).toBe('APPROVED');
    const again = (
      await t.call({ method: 'PATCH', url: `${base}/content/${post.id}`, auth: owner(), payload: { scheduledAt: '2031-06-01T10:00:00Z' } })
    ).json();
    expect(again.status).toBe('SCHEDULED');
    const edited = (await t.call({ method: 'PATCH', url: `${base}/content/${post.id}`, auth: owner(), payload: { body: 'new words' } })).json();
    expect(edited).toMatchObject({ status: 'DRAFT', approvedBy: null });
    expect(api.postCalls('ok-sched')).toHaveLength(0);
  });
});

describe('integrations', () => {
  it('connects with encrypted credentials, never returned, and emits integration.connected without an envelope projectId', async () => {
    const res = await t.call({
      method: 'POST',
      url: `${base}/integrations`,
      auth: owner(),
      payload: { provider: 'linkedin', name: 'Company page', credentials: { accessToken: 'super-secret-token', author: 'urn:li:organization:99' } },
    });
    expect(res.statusCode).toBe(201);
    const integration = res.json();
    expect(integration).toMatchObject({ provider: 'linkedin', name: 'Company page', status: 'connected', projectId: null });
    expect(JSON.stringify(integration)).not.toContain('super-secret-token');
    const [row] = await t.database.db.select().from(integrations).where(eq(integrations.id, integration.id));
    expect(row!.credentialsSealed).not.toContain('super-secret-token');
    const list = (await t.call({ method: 'GET', url: `${base}/integrations`, auth: owner() })).json();
    expect(list.items.map((i: { id: string }) => i.id)).toContain(integration.id);
    expect(JSON.stringify(list)).not.toContain('super-secret-token');
    const event = (await eventsOf(t, t.orgA.orgId, 'integration.connected')).find(
      (e) => (e.payload as { integrationId: string }).integrationId === integration.id,
    )!;
    expect(event.projectId).toBeNull();
    expect(event.payload).toEqual({ integrationId: integration.id, provider: 'linkedin', name: 'Company page' });
    expect((await t.call({ method: 'DELETE', url: `${base}/integrations/${integration.id}`, auth: owner() })).statusCode).toBe(204);
    expect((await t.call({ method: 'GET', url: `${base}/integrations/${integration.id}`, auth: owner() })).statusCode).toBe(404);
  });

  it('checks credentials per provider', async () => {
    const noAuthor = await t.call({
      method: 'POST',
      url: `${base}/integrations`,
      auth: owner(),
      payload: { provider: 'linkedin', name: 'x', credentials: { accessToken: 't' } },
    });
    expect(noAuthor.statusCode).toBe(400);
    const noToken = await t.call({ method: 'POST', url: `${base}/integrations`, auth: owner(), payload: { provider: 'x', name: 'x', credentials: {} } });
    expect(noToken.statusCode).toBe(400);
    const unknown = await t.call({
      method: 'POST',
      url: `${base}/integrations`,
      auth: owner(),
      payload: { provider: 'myspace', name: 'x', credentials: { accessToken: 't' } },
    });
    expect(unknown.statusCode).toBe(400);
  });

  it('a project integration carries projectId in its event payload', async () => {
    const res = await t.call({
      method: 'POST',
      url: `${base}/integrations`,
      auth: owner(),
      payload: { provider: 'x', name: 'Project X', projectId: t.orgA.projectId, credentials: { accessToken: 'ok-p' } },
    });
    expect(res.json().projectId).toBe(t.orgA.projectId);
    const event = (await eventsOf(t, t.orgA.orgId, 'integration.connected')).find(
      (e) => (e.payload as { integrationId: string }).integrationId === res.json().id,
    )!;
    expect(event.payload).toMatchObject({ projectId: t.orgA.projectId });
    expect(event.projectId).toBeNull();
  });
});

describe('calendar', () => {
  it('places scheduled posts by day in the window; a date `to` is included, a timestamp `to` excluded', async () => {
    const x = await connect('x', 'ok-cal');
    const make = async (at: string, body: string) => {
      const post = (await create({ platform: 'X', body, scheduledAt: at, integrationId: x.id })).json();
      expect((await t.call({ method: 'POST', url: `${base}/content/${post.id}/approve`, auth: owner() })).json().status).toBe('SCHEDULED');
      return post.id as string;
    };
    const late = await make('2032-03-03T18:00:00Z', 'Evening post\nsecond line');
    const early = await make('2032-03-01T08:00:00Z', 'Morning post');
    const edge = await make('2032-03-04T00:00:00Z', 'Midnight post');
    await create({ platform: 'X', body: 'a draft is not on the calendar', scheduledAt: '2032-03-02T08:00:00Z' });
    const res = await t.call({ method: 'GET', url: `${base}/content/calendar`, auth: owner(), query: { from: '2032-03-01', to: '2032-03-03' } });
    expect(res.statusCode).toBe(200);
    const cal = res.json();
    expect(cal.from).toBe('2032-03-01T00:00:00.000Z');
    expect(cal.to).toBe('2032-03-04T00:00:00.000Z');
    expect(cal.days.map((d: { date: string }) => d.date)).toEqual(['2032-03-01', '2032-03-02', '2032-03-03']);
    expect(cal.entries.map((e: { postId: string }) => e.postId)).toEqual([early, late]);
    expect(cal.days[0].entries[0]).toMatchObject({ postId: early, platform: 'X', status: 'SCHEDULED', at: '2032-03-01T08:00:00.000Z', title: 'Morning post' });
    expect(cal.days[1].entries).toEqual([]);
    expect(cal.days[2].entries[0]).toMatchObject({ postId: late, title: 'Evening post' });
    const exclusive = (
      await t.call({ method: 'GET', url: `${base}/content/calendar`, auth: owner(), query: { from: '2032-03-01T00:00:00Z', to: '2032-03-04T00:00:00Z' } })
    ).json();
    expect(exclusive.entries.map((e: { postId: string }) => e.postId)).toEqual([early, late]);
    const inclusive = (await t.call({ method: 'GET', url: `${base}/content/calendar`, auth: owner(), query: { from: '2032-03-01', to: '2032-03-04' } })).json();
    expect(inclusive.entries.map((e: { postId: string }) => e.postId)).toEqual([early, late, edge]);
    // In Tokyo the evening post falls on 4 March.
    const tokyo = (
      await t.call({ method: 'GET', url: `${base}/content/calendar`, auth: owner(), query: { from: '2032-03-01', to: '2032-03-04', timezone: 'Asia/Tokyo' } })
    ).json();
    expect(tokyo.days.find((d: { date: string }) => d.date === '2032-03-04').entries.map((e: { postId: string }) => e.postId)).toEqual([late, edge]);
    for (const query of [
      { from: 'soon', to: '2032-03-04' },
      { from: '2032-03-04', to: '2032-03-01' },
      { from: '2032-03-01', to: '2032-02-30' },
      { from: '2032-03-01', to: '2032-03-02', timezone: 'Mars/Base' },
    ] as Record<string, string>[]) {
      expect((await t.call({ method: 'GET', url: `${base}/content/calendar`, auth: owner(), query })).statusCode, JSON.stringify(query)).toBe(400);
    }
  });
});

describe('access', () => {
  it("another organization's posts and integrations are 404", async () => {
    const post = (await create({ platform: 'X', body: 'mine' })).json();
    const integration = await connect('x', 'ok-mine');
    const asB = { token: t.orgB.token };
    expect((await t.call({ method: 'GET', url: `${base}/content/${post.id}`, auth: asB })).statusCode).toBe(404);
    const bBase = `/api/v1/orgs/${t.orgB.orgId}`;
    for (const [method, url] of [
      ['GET', `${bBase}/content/${post.id}`],
      ['PATCH', `${bBase}/content/${post.id}`],
      ['DELETE', `${bBase}/content/${post.id}`],
      ['POST', `${bBase}/content/${post.id}/approve`],
      ['POST', `${bBase}/content/${post.id}/publish`],
      ['GET', `${bBase}/integrations/${integration.id}`],
      ['DELETE', `${bBase}/integrations/${integration.id}`],
    ] as const) {
      const res = await t.call({ method, url, auth: asB, ...(method === 'PATCH' ? { payload: { body: 'stolen' } } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    expect((await t.call({ method: 'GET', url: `${base}/content`, auth: { apiKey: t.orgB.apiKey } })).statusCode).toBe(404);
    const bList = (await t.call({ method: 'GET', url: `${bBase}/content`, auth: asB })).json();
    expect(bList.items.map((p: { id: string }) => p.id)).not.toContain(post.id);
  });

  it('scopes: content:read reads but cannot write; viewers read only; members cannot connect accounts', async () => {
    const reader = await t.key(t.orgA.orgId, ['content:read']);
    expect((await t.call({ method: 'GET', url: `${base}/content`, auth: { apiKey: reader } })).statusCode).toBe(200);
    expect(
      (await t.call({ method: 'GET', url: `${base}/content/calendar`, auth: { apiKey: reader }, query: { from: '2032-01-01', to: '2032-01-02' } })).statusCode,
    ).toBe(200);
    const denied = await create({ platform: 'X', body: 'no' }, { apiKey: reader });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('INSUFFICIENT_SCOPE');
    const leadsOnly = await t.key(t.orgA.orgId, ['leads:read']);
    expect((await t.call({ method: 'GET', url: `${base}/content`, auth: { apiKey: leadsOnly } })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${base}/integrations`, auth: { apiKey: leadsOnly } })).statusCode).toBe(403);
    const writer = await t.key(t.orgA.orgId, ['content:write']);
    expect((await create({ platform: 'X', body: 'yes' }, { apiKey: writer })).statusCode).toBe(201);
    const viewer = await t.member(t.orgA.orgId, 'viewer');
    expect((await t.call({ method: 'GET', url: `${base}/content`, auth: { token: viewer.token } })).statusCode).toBe(200);
    expect((await create({ platform: 'X', body: 'no' }, { token: viewer.token })).statusCode).toBe(403);
    const member = await t.member(t.orgA.orgId, 'member');
    expect((await create({ platform: 'X', body: 'member post' }, { token: member.token })).statusCode).toBe(201);
    const connectAsMember = await t.call({
      method: 'POST',
      url: `${base}/integrations`,
      auth: { token: member.token },
      payload: { provider: 'x', name: 'n', credentials: { accessToken: 'ok' } },
    });
    expect(connectAsMember.statusCode).toBe(403);
  });

  it('an API key bound to a project only sees and writes that project', async () => {
    const other = (await t.call({ method: 'POST', url: `${base}/projects`, auth: owner(), payload: { name: 'Bound' } })).json();
    const bound = await t.key(t.orgA.orgId, ['content:read', 'content:write'], other.id);
    const mine = await create({ platform: 'X', body: 'bound post' }, { apiKey: bound });
    expect(mine.json().projectId).toBe(other.id);
    // Naming another project is refused (CONTRACT §2).
    expect((await create({ platform: 'X', body: 'elsewhere', projectId: t.orgA.projectId }, { apiKey: bound })).statusCode).toBe(403);
    const outside = (await create({ platform: 'X', body: 'outside' })).json();
    expect((await t.call({ method: 'GET', url: `${base}/content/${outside.id}`, auth: { apiKey: bound } })).statusCode).toBe(404);
    const list = (await t.call({ method: 'GET', url: `${base}/content`, auth: { apiKey: bound } })).json();
    expect(list.items.map((p: { id: string }) => p.id)).toEqual([mine.json().id]);
  });
});
