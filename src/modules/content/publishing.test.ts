import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, asc, eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { startSocialStandIn, type StandIn } from '../../../test/social-stand-in.ts';
import { formData } from '../integrations/connectors/http.ts';
import { events } from '../events/tables.ts';
import { notifications } from '../notifications/tables.ts';
import { posts } from './tables.ts';
import { eventually } from '../../../test/helpers.ts';

let t: TestApp;
let api: StandIn;
let base: string;
const owner = () => ({ token: t.orgA.token });
const FINAL = ['PUBLISHED', 'FAILED'];

beforeAll(async () => {
  api = await startSocialStandIn();
  t = await buildTestApp({
    env: { LINKEDIN_API_URL: api.url, X_API_URL: api.url, PUBLISH_RETRY_DELAYS_S: '0.05,0.05,0.05', PUBLISHER_POLL_MS: '50' },
  });
  base = `/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  await t.close();
  await api.close();
});

async function connect(provider: 'x' | 'linkedin', token: string) {
  const credentials = provider === 'x' ? { accessToken: token } : { accessToken: token, author: 'urn:li:organization:42' };
  const res = await t.call({ method: 'POST', url: `${base}/integrations`, auth: owner(), payload: { provider, name: `${provider} ${token}`, credentials } });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; name: string };
}

async function draft(payload: Record<string, unknown>) {
  const res = await t.call({ method: 'POST', url: `${base}/content`, auth: owner(), payload });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string };
}

const get = async (id: string) => (await t.call({ method: 'GET', url: `${base}/content/${id}`, auth: owner() })).json();
const settled = (id: string) =>
  eventually(async () => {
    const post = await get(id);
    return FINAL.includes(post.status) ? post : undefined;
  });

async function eventsFor(type: string, postId: string) {
  const rows = await t.database.db
    .select()
    .from(events)
    .where(and(eq(events.orgId, t.orgA.orgId), eq(events.type, type)))
    .orderBy(asc(events.id));
  return rows.filter((e) => (e.payload as { post?: { id: string } }).post?.id === postId);
}

async function approve(id: string, body?: string) {
  const res = await t.call({ method: 'POST', url: `${base}/content/${id}/approve`, auth: owner(), payload: body ? { body } : {} });
  expect(res.statusCode).toBe(200);
  return res.json();
}

describe('publishing now', () => {
  it('X: approved with an integration goes PUBLISHING → PUBLISHED with the id and URL; post.published', async () => {
    const x = await connect('x', 'ok-x-1');
    const post = await draft({ platform: 'X', body: 'Hello X', hashtags: ['#hello', '#world'], integrationId: x.id });
    const approved = await approve(post.id);
    expect(approved.status).toBe('PUBLISHING');
    const done = await settled(post.id);
    expect(done.status).toBe('PUBLISHED');
    expect(done.externalId).toMatch(/^18\d+$/);
    expect(done.url).toBe(`https://x.com/i/web/status/${done.externalId}`);
    expect(done.publishedAt).toBeTruthy();
    const [call] = api.postCalls('ok-x-1');
    expect(call!.headers.authorization).toBe('Bearer ok-x-1');
    expect(JSON.parse(call!.body.toString())).toEqual({ text: 'Hello X\n\n#hello #world' });
    const [published] = await eventsFor('post.published', post.id);
    expect(published!.payload).toMatchObject({
      externalId: done.externalId,
      url: done.url,
      publishedAt: done.publishedAt,
      post: { id: post.id, status: 'PUBLISHED' },
    });
    expect(api.postCalls('ok-x-1')).toHaveLength(1);
  });

  it('LinkedIn: Posts API with author URN, version headers and escaped commentary; the URN from x-restli-id', async () => {
    const li = await connect('linkedin', 'ok-li-1');
    const post = await draft({ platform: 'LINKEDIN', body: 'We (finally) ship #v2 today', hashtags: ['#launch'], integrationId: li.id });
    await approve(post.id);
    const done = await settled(post.id);
    expect(done.status).toBe('PUBLISHED');
    expect(done.externalId).toMatch(/^urn:li:share:7\d+$/);
    expect(done.url).toBe(`https://www.linkedin.com/feed/update/${done.externalId}`);
    const [call] = api.postCalls('ok-li-1');
    expect(call!.path).toBe('/rest/posts');
    expect(call!.headers['linkedin-version']).toMatch(/^\d{6}$/);
    expect(call!.headers['x-restli-protocol-version']).toBe('2.0.0');
    const sent = JSON.parse(call!.body.toString());
    expect(sent).toMatchObject({
      author: 'urn:li:organization:42',
      visibility: 'PUBLIC',
      lifecycleState: 'PUBLISHED',
      distribution: { feedDistribution: 'MAIN_FEED' },
    });
    expect(sent.commentary).toBe('We \\(finally\\) ship \\#v2 today\n\n{hashtag|\\#|launch}');
  });

  it('LinkedIn with an image: uploaded through the Images API, then attached by URN', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const form = formData({}, { name: 'file', filename: 'pixel.png', contentType: 'image/png', bytes: png });
    const upload = await t.call({
      method: 'POST',
      url: `${base}/media/upload`,
      auth: owner(),
      headers: { 'content-type': form.contentType },
      payload: form.body,
    });
    expect(upload.statusCode).toBe(201);
    const li = await connect('linkedin', 'ok-li-img');
    const post = await draft({ platform: 'LINKEDIN', body: 'With a picture', integrationId: li.id, mediaIds: [upload.json().id] });
    await approve(post.id);
    expect((await settled(post.id)).status).toBe('PUBLISHED');
    const calls = api.received.filter((r) => r.token === 'ok-li-img');
    expect(calls.map((c) => `${c.method} ${c.path.split('?')[0]}`)).toEqual([
      'POST /rest/images',
      'PUT /upload/' + calls[1]!.path.split('/').pop(),
      'POST /rest/posts',
    ]);
    expect(calls[1]!.body.equals(png)).toBe(true);
    const sent = JSON.parse(calls[2]!.body.toString());
    expect(sent.content.media.id).toMatch(/^urn:li:image:C\d+$/);
  });

  it('X with an image: uploaded to /2/media/upload and attached by media id', async () => {
    const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
    const form = formData({}, { name: 'file', filename: 'dot.gif', contentType: 'image/gif', bytes: gif });
    const media = (
      await t.call({ method: 'POST', url: `${base}/media/upload`, auth: owner(), headers: { 'content-type': form.contentType }, payload: form.body })
    ).json();
    const x = await connect('x', 'ok-x-img');
    const post = await draft({ platform: 'X', body: 'gif', integrationId: x.id, mediaIds: [media.id] });
    await approve(post.id);
    expect((await settled(post.id)).status).toBe('PUBLISHED');
    const [tweet] = api.postCalls('ok-x-img');
    expect(JSON.parse(tweet!.body.toString()).media.media_ids).toHaveLength(1);
  });
});

describe('failures', () => {
  it('401: FAILED, not retried, integration in error, integration.error, and a notification linking to the post', async () => {
    const x = await connect('x', 'revoked-1');
    const post = await draft({ platform: 'X', body: 'will fail', integrationId: x.id });
    await approve(post.id);
    const done = await settled(post.id);
    expect(done).toMatchObject({ status: 'FAILED', externalId: null, url: null, error: { code: 'INTEGRATION_AUTH', retryable: false } });
    expect(api.postCalls('revoked-1')).toHaveLength(1);
    const [failed] = await eventsFor('post.failed', post.id);
    expect(failed!.payload).toMatchObject({ error: { code: 'INTEGRATION_AUTH', retryable: false }, post: { id: post.id, status: 'FAILED' } });
    const integration = (await t.call({ method: 'GET', url: `${base}/integrations/${x.id}`, auth: owner() })).json();
    expect(integration).toMatchObject({ status: 'error', lastError: { code: 'INTEGRATION_AUTH' } });
    const errorEvents = (
      await t.database.db
        .select()
        .from(events)
        .where(and(eq(events.orgId, t.orgA.orgId), eq(events.type, 'integration.error')))
    ).filter((e) => (e.payload as { integrationId: string }).integrationId === x.id);
    expect(errorEvents).toHaveLength(1);
    expect(errorEvents[0]!.payload).toMatchObject({ integrationId: x.id, provider: 'x', code: 'INTEGRATION_AUTH' });
    expect(errorEvents[0]!.projectId).toBeNull();
    const notes = await t.database.db.select().from(notifications).where(eq(notifications.orgId, t.orgA.orgId));
    const note = notes.find((n) => n.link === `/api/v1/orgs/${t.orgA.orgId}/content/${post.id}`);
    expect(note).toMatchObject({ kind: 'integration.error' });
  });

  it('429 then success: retried after Retry-After, then PUBLISHED', async () => {
    const x = await connect('x', 'flaky-1');
    const post = await draft({ platform: 'X', body: 'second time lucky', integrationId: x.id });
    await approve(post.id);
    const done = await settled(post.id);
    expect(done.status).toBe('PUBLISHED');
    expect(done.attempts).toBe(2);
    expect(api.postCalls('flaky-1')).toHaveLength(2);
    const [row] = await t.database.db.select().from(posts).where(eq(posts.id, post.id));
    const [first] = row!.attemptLog;
    expect(first).toMatchObject({ ok: false, code: 'RATE_LIMIT', retryable: true });
    // The retry was planned no earlier than the platform's Retry-After (1 s), not after the 0.05 s default.
    expect(Date.parse(first!.nextAttemptAt!) - Date.parse(first!.at)).toBeGreaterThanOrEqual(1000);
  });

  it('500 forever: retried a bounded number of times, then FAILED (retryable) with post.failed and a notification', async () => {
    const li = await connect('linkedin', 'down-1');
    const post = await draft({ platform: 'LINKEDIN', body: 'server trouble', integrationId: li.id });
    await approve(post.id);
    const done = await settled(post.id);
    expect(done).toMatchObject({ status: 'FAILED', externalId: null, error: { code: 'UPSTREAM', retryable: true } });
    // 1 attempt + 3 retries (PUBLISH_RETRY_DELAYS_S has three delays), never more.
    expect(api.postCalls('down-1')).toHaveLength(4);
    expect(done.attempts).toBe(4);
    expect(await eventsFor('post.failed', post.id)).toHaveLength(1);
    expect(await eventsFor('post.published', post.id)).toHaveLength(0);
    const notes = await t.database.db.select().from(notifications).where(eq(notifications.orgId, t.orgA.orgId));
    expect(notes.find((n) => n.link?.endsWith(post.id))).toMatchObject({ kind: 'post.failed' });
    const integration = (await t.call({ method: 'GET', url: `${base}/integrations/${li.id}`, auth: owner() })).json();
    expect(integration.status).toBe('connected');
  });

  it('a Retry-After beyond the 15-minute window fails at once instead of waiting', async () => {
    const x = await connect('x', 'throttled-1');
    const post = await draft({ platform: 'X', body: 'too busy', integrationId: x.id });
    await approve(post.id);
    const done = await settled(post.id);
    expect(done).toMatchObject({ status: 'FAILED', error: { code: 'RATE_LIMIT', retryable: true } });
    expect(api.postCalls('throttled-1')).toHaveLength(1);
  });

  it('a 2xx without the platform id is never PUBLISHED', async () => {
    for (const [provider, platform] of [
      ['x', 'X'],
      ['linkedin', 'LINKEDIN'],
    ] as const) {
      const integration = await connect(provider, `noid-${provider}`);
      const post = await draft({ platform, body: 'ghost', integrationId: integration.id });
      await approve(post.id);
      const done = await settled(post.id);
      expect(done).toMatchObject({ status: 'FAILED', externalId: null, url: null, error: { code: 'NO_EXTERNAL_ID', retryable: false } });
      expect(await eventsFor('post.published', post.id)).toHaveLength(0);
    }
  });

  it('an integration deleted before publishing: the publish endpoint is 422, a due post FAILS with INTEGRATION_MISSING', async () => {
    const x = await connect('x', 'ok-gone');
    const post = await draft({ platform: 'X', body: 'orphan', integrationId: x.id, scheduledAt: new Date(Date.now() + 600).toISOString() });
    expect((await approve(post.id)).status).toBe('SCHEDULED');
    expect((await t.call({ method: 'DELETE', url: `${base}/integrations/${x.id}`, auth: owner() })).statusCode).toBe(204);
    const done = await settled(post.id);
    expect(done).toMatchObject({ status: 'FAILED', error: { code: 'INTEGRATION_MISSING', retryable: false } });
    const publish = await t.call({ method: 'POST', url: `${base}/content/${post.id}/publish`, auth: owner() });
    expect(publish.statusCode).toBe(422);
    expect(publish.json().code).toBe('INTEGRATION_MISSING');
    expect(api.postCalls('ok-gone')).toHaveLength(0);
  });

  it('an attempt whose outcome was never recorded is not repeated: FAILED with OUTCOME_UNKNOWN', async () => {
    const x = await connect('x', 'ok-unknown');
    const post = await draft({ platform: 'X', body: 'lost in flight', integrationId: x.id });
    // What an instance that died mid-call leaves behind: in flight, lease expired.
    await t.database.db
      .update(posts)
      .set({ status: 'PUBLISHING', inFlight: true, attempts: 1, lockedUntil: new Date(Date.now() - 1000), approvedAt: new Date() })
      .where(eq(posts.id, post.id));
    t.app.workers!.loops.publisher!.wake();
    const done = await settled(post.id);
    expect(done).toMatchObject({ status: 'FAILED', error: { code: 'OUTCOME_UNKNOWN', retryable: false } });
    expect(api.postCalls('ok-unknown')).toHaveLength(0);
  });
});

describe('status moves after publishing', () => {
  it('PUBLISHED cannot be edited, approved or published again; it can be deleted', async () => {
    const x = await connect('x', 'ok-moves');
    const post = await draft({ platform: 'X', body: 'done deal', integrationId: x.id });
    await approve(post.id);
    expect((await settled(post.id)).status).toBe('PUBLISHED');
    expect((await t.call({ method: 'PATCH', url: `${base}/content/${post.id}`, auth: owner(), payload: { body: 'edit' } })).statusCode).toBe(409);
    expect((await t.call({ method: 'POST', url: `${base}/content/${post.id}/approve`, auth: owner(), payload: {} })).statusCode).toBe(409);
    expect((await t.call({ method: 'POST', url: `${base}/content/${post.id}/publish`, auth: owner() })).statusCode).toBe(409);
    expect((await t.call({ method: 'DELETE', url: `${base}/content/${post.id}`, auth: owner() })).statusCode).toBe(204);
  });

  it('PUBLISHING cannot be edited or deleted (409)', async () => {
    const x = await connect('x', 'ok-busy');
    const post = await draft({ platform: 'X', body: 'busy', integrationId: x.id });
    // Held in PUBLISHING by a live lease of another instance.
    await t.database.db
      .update(posts)
      .set({ status: 'PUBLISHING', inFlight: true, lockedUntil: new Date(Date.now() + 60_000) })
      .where(eq(posts.id, post.id));
    expect((await t.call({ method: 'PATCH', url: `${base}/content/${post.id}`, auth: owner(), payload: { body: 'edit' } })).statusCode).toBe(409);
    expect((await t.call({ method: 'DELETE', url: `${base}/content/${post.id}`, auth: owner() })).statusCode).toBe(409);
    expect((await t.call({ method: 'POST', url: `${base}/content/${post.id}/approve`, auth: owner(), payload: {} })).statusCode).toBe(409);
    await t.database.db.update(posts).set({ status: 'DRAFT', inFlight: false, lockedUntil: null }).where(eq(posts.id, post.id));
  });

  it('FAILED: publish again, or edit (back to DRAFT) and approve again', async () => {
    const bad = await connect('x', 'revoked-moves');
    const good = await connect('x', 'ok-moves-2');
    const post = await draft({ platform: 'X', body: 'try again', integrationId: bad.id });
    await approve(post.id);
    expect((await settled(post.id)).status).toBe('FAILED');
    // Switching the integration keeps it FAILED (approved text unchanged); publishing again works.
    const switched = (await t.call({ method: 'PATCH', url: `${base}/content/${post.id}`, auth: owner(), payload: { integrationId: good.id } })).json();
    expect(switched.status).toBe('FAILED');
    const again = await t.call({ method: 'POST', url: `${base}/content/${post.id}/publish`, auth: owner() });
    expect(again.json().status).toBe('PUBLISHING');
    expect(await settled(post.id)).toMatchObject({ status: 'PUBLISHED', error: null });

    const other = await draft({ platform: 'X', body: 'second chance', integrationId: bad.id });
    await approve(other.id);
    expect((await settled(other.id)).status).toBe('FAILED');
    const edited = (
      await t.call({ method: 'PATCH', url: `${base}/content/${other.id}`, auth: owner(), payload: { body: 'second chance, edited', integrationId: good.id } })
    ).json();
    expect(edited.status).toBe('DRAFT');
    expect((await approve(other.id)).status).toBe('PUBLISHING');
    expect((await settled(other.id)).status).toBe('PUBLISHED');
  });
});

describe('scheduled publishing', () => {
  it('SCHEDULED → PUBLISHED at its time, once; the calendar shows it at its publishing time', async () => {
    const x = await connect('x', 'ok-timed');
    const at = new Date(Date.now() + 800);
    const post = await draft({ platform: 'X', body: 'on time', integrationId: x.id, scheduledAt: at.toISOString() });
    expect((await approve(post.id)).status).toBe('SCHEDULED');
    expect(api.postCalls('ok-timed')).toHaveLength(0);
    const done = await settled(post.id);
    expect(done.status).toBe('PUBLISHED');
    expect(Date.parse(done.publishedAt)).toBeGreaterThanOrEqual(at.getTime());
    expect(api.postCalls('ok-timed')).toHaveLength(1);
    const day = done.publishedAt.slice(0, 10);
    const cal = (await t.call({ method: 'GET', url: `${base}/content/calendar`, auth: owner(), query: { from: day, to: day } })).json();
    expect(cal.entries.find((e: { postId: string }) => e.postId === post.id)).toMatchObject({ status: 'PUBLISHED', at: done.publishedAt, url: done.url });
  });
});
