import { afterAll, beforeAll, expect, it } from 'vitest';
import { inArray } from 'drizzle-orm';
import { buildApp } from '../../app.ts';
import { posts } from './tables.ts';
import type { App } from '../../platform/http/types.ts';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { startSocialStandIn, type StandIn } from '../../../test/social-stand-in.ts';
import { eventually } from '../../../test/helpers.ts';

let t: TestApp;
let api: StandIn;
const apps: App[] = [];

beforeAll(async () => {
  api = await startSocialStandIn();
  t = await buildTestApp({ env: { LINKEDIN_API_URL: api.url, X_API_URL: api.url, PUBLISH_RETRY_DELAYS_S: '0.05', PUBLISHER_POLL_MS: '50' } });
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await t.database.close();
  await api.close();
});

/** Another instance of the service on the same database (what a restart or a second replica is). */
async function instance(): Promise<App> {
  const app = await buildApp({ config: t.config, database: t.database, logger: false });
  await app.ready();
  apps.push(app);
  return app;
}

function caller(app: App) {
  const base = `/api/v1/orgs/${t.orgA.orgId}`;
  const headers = { authorization: `Bearer ${t.orgA.token}` };
  return {
    post: async (url: string, payload: unknown) => (await app.inject({ method: 'POST', url: base + url, headers, payload: payload as object })).json(),
    get: async (url: string) => (await app.inject({ method: 'GET', url: base + url, headers })).json(),
  };
}

it('a restart while SCHEDULED still publishes, exactly once', async () => {
  const first = caller(t.app);
  const integration = await first.post('/integrations', { provider: 'x', name: 'X', credentials: { accessToken: 'ok-restart' } });
  const post = await first.post('/content', {
    platform: 'X',
    body: 'survives a restart',
    integrationId: integration.id,
    scheduledAt: new Date(Date.now() + 1200).toISOString(),
  });
  expect((await first.post(`/content/${post.id}/approve`, {})).status).toBe('SCHEDULED');

  // The instance stops before the post is due; nothing was sent.
  await t.app.close();
  expect(api.postCalls('ok-restart')).toHaveLength(0);

  const second = caller(await instance());
  const done = await eventually(async () => {
    const p = await second.get(`/content/${post.id}`);
    return p.status === 'PUBLISHED' || p.status === 'FAILED' ? p : undefined;
  });
  expect(done.status).toBe('PUBLISHED');
  expect(done.externalId).toBeTruthy();
  // Give any duplicate a chance to happen before counting.
  await new Promise((r) => setTimeout(r, 300));
  expect(api.postCalls('ok-restart')).toHaveLength(1);
});

it('two instances on one database publish each due post once (SKIP LOCKED)', async () => {
  const [a, b] = [caller(apps[0]!), caller(await instance())];
  const integration = await a.post('/integrations', { provider: 'linkedin', name: 'LI', credentials: { accessToken: 'ok-pair', author: 'urn:li:person:abc' } });
  const later = new Date(Date.now() + 3_600_000).toISOString();
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) {
    const post = await (i % 2 ? a : b).post('/content', { platform: 'LINKEDIN', body: `post ${i}`, integrationId: integration.id, scheduledAt: later });
    expect((await (i % 2 ? b : a).post(`/content/${post.id}/approve`, {})).status).toBe('SCHEDULED');
    ids.push(post.id);
  }
  // All of them fall due at once, with both instances polling.
  await t.database.db
    .update(posts)
    .set({ scheduledAt: new Date(Date.now() - 1000) })
    .where(inArray(posts.id, ids));
  for (const app of apps) app.workers!.loops.publisher!.wake();
  await eventually(async () => {
    const list = await a.get('/content?status=PUBLISHED&pageSize=100');
    return ids.every((id) => list.items.some((p: { id: string }) => p.id === id));
  });
  await new Promise((r) => setTimeout(r, 300));
  const bodies = api.postCalls('ok-pair').map((c) => JSON.parse(c.body.toString()).commentary);
  expect(bodies.sort()).toEqual(ids.map((_, i) => `post ${i}`).sort());
});
