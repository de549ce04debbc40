import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { rows } from '../../platform/db.ts';
import { buildTestApp, type Credentials, type TestApp } from '../../../test/harness.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';
import { follow, OAuthStandIn } from '../../../test/oauth-provider.ts';
import { GoogleStandIn } from '../../../test/google-stand-in.ts';
import { evaluate, windowValue } from './rules.ts';

/**
 * GA4 and Search Console analytics end to end: a google integration connected through the real
 * OAuth flow (the OAuth stand-in), Google's APIs as loopback servers in their wire formats, the
 * sync worker's loop, the rules, and the events and notifications people see.
 */

/** The app's and the providers' clock: 2026-03-10, 02:00 UTC, before the daily sync hour (04:00). */
const clock = { ms: Date.parse('2026-03-10T02:00:00Z'), now: () => new Date(clock.ms) };

let t: TestApp;
let oauth: OAuthStandIn;
let google: GoogleStandIn;
let base: string;
const ownerA = (): Credentials => ({ apiKey: t.orgA.apiKey });

beforeAll(async () => {
  oauth = await new OAuthStandIn().start();
  oauth.now = () => clock.ms;
  google = await new GoogleStandIn().start();
  // Google's APIs accept exactly the tokens Google's authorization server issued and that are still valid.
  google.isValid = (token) => oauth.isValid(token);
  t = await buildTestApp({ clock, env: { ...oauth.env(), ...google.env(), ANALYTICS_SYNC_HOUR: '4', PUBLIC_URL: 'https://app.example.com' } });
  base = `/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  await t.close();
  await google.stop();
  await oauth.stop();
});

let nextProperty = 1000;

/** The browser's round trip (start, Google's consent, the callback), then the property and site chosen. */
async function connectGoogle(
  config: { propertyId?: string; siteUrl?: string } = {},
  body: Record<string, unknown> = {},
  orgBase = base,
  auth = ownerA(),
): Promise<string> {
  oauth.forgetConsent(); // a refresh token with every consent
  const started = await t.call({ method: 'POST', url: `${orgBase}/integrations/oauth/google/start`, auth, payload: body });
  expect(started.statusCode, started.body).toBe(200);
  const callback = new URL(await follow(started.json().authorizationUrl));
  // The browser that started it comes back with the start's cookie (the flow is bound to it).
  const cookies = Object.fromEntries(started.cookies.map((c) => [c.name, c.value]));
  const back = await t.call({ method: 'GET', url: callback.pathname + callback.search, cookies });
  expect(back.statusCode, back.body).toBe(302);
  const id = new URL(back.headers.location as string).searchParams.get('connected');
  expect(id).toMatch(/^int_/);
  if (Object.keys(config).length) {
    const patched = await t.call({ method: 'PATCH', url: `${orgBase}/integrations/${id}`, auth, payload: { config } });
    expect(patched.statusCode, patched.body).toBe(200);
  }
  return id!;
}

function newProperty(): string {
  return `properties/${++nextProperty}`;
}

async function requestSync(id: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await t.call({ method: 'POST', url: `${base}/integrations/${id}/sync`, auth: ownerA(), payload: body });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().syncRunId as string;
}

interface SyncRun {
  id: string;
  status: string;
  trigger: string;
  from: string;
  to: string;
  rows: number;
  error: string | null;
  attempts: number;
  startedAt: string | null;
  finishedAt: string | null;
}

async function runs(id: string): Promise<SyncRun[]> {
  const res = await t.call({ method: 'GET', url: `${base}/integrations/${id}/sync-runs?pageSize=100`, auth: ownerA() });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items as SyncRun[];
}

async function settled(id: string, runId: string): Promise<SyncRun> {
  return eventually(async () => {
    const run = (await runs(id)).find((r) => r.id === runId);
    return run && (run.status === 'succeeded' || run.status === 'failed') ? run : null;
  });
}

async function syncNow(id: string, body: Record<string, unknown> = {}): Promise<SyncRun> {
  return settled(id, await requestSync(id, body));
}

async function daily(query: Record<string, string>) {
  const res = await t.call({ method: 'GET', url: `${base}/analytics/daily?${new URLSearchParams(query)}`, auth: ownerA() });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items as { date: string; source: string; integrationId: string; metrics: Record<string, number> }[];
}

async function createRule(payload: Record<string, unknown>) {
  const res = await t.call({ method: 'POST', url: `${base}/analytics/rules`, auth: ownerA(), payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; state: string };
}

async function rule(id: string) {
  const res = await t.call({ method: 'GET', url: `${base}/analytics/rules/${id}`, auth: ownerA() });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    id: string;
    state: string;
    lastValue: number | null;
    lastFiredAt: string | null;
    lastEvaluatedAt: string | null;
    error: string | null;
  };
}

const syncedOf = async (integrationId: string) =>
  (await eventsOf(t, t.orgA.orgId, 'analytics.synced')).filter((e) => e.payload.integrationId === integrationId);
const firedOf = async (ruleId: string) => (await eventsOf(t, t.orgA.orgId, 'analytics.threshold')).filter((e) => e.payload.ruleId === ruleId);
const wakeSync = () => t.app.workers!.loops.analytics!.wake();

describe('accounts', () => {
  it('lists the GA4 properties of every account page and the verified Search Console sites', async () => {
    google.accounts = [
      {
        account: 'accounts/1',
        displayName: 'Acme',
        properties: [
          { property: 'properties/111', displayName: 'acme.example' },
          { property: 'properties/112', displayName: 'Shop' },
        ],
      },
      { account: 'accounts/2', displayName: 'Beta', properties: [] },
      { account: 'accounts/3', displayName: 'Gamma', properties: [{ property: 'properties/333', displayName: 'Gamma site' }] },
    ];
    google.sites = [
      { siteUrl: 'https://acme.example/', permissionLevel: 'siteOwner' },
      { siteUrl: 'sc-domain:acme.example', permissionLevel: 'siteFullUser' },
      { siteUrl: 'https://unverified.example/', permissionLevel: 'siteUnverifiedUser' },
    ];
    const id = await connectGoogle();
    const res = await t.call({ method: 'GET', url: `${base}/integrations/${id}/accounts`, auth: ownerA() });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([
      { id: 'properties/111', name: 'Acme — acme.example', source: 'ga4' },
      { id: 'properties/112', name: 'Acme — Shop', source: 'ga4' },
      { id: 'properties/333', name: 'Gamma — Gamma site', source: 'ga4' },
      { id: 'https://acme.example/', name: 'https://acme.example/', source: 'gsc' },
      { id: 'sc-domain:acme.example', name: 'sc-domain:acme.example', source: 'gsc' },
    ]);
    // Two account pages (page size 2), followed by their pageToken, with the connection's token.
    const admin = google.callsTo('admin').slice(-2);
    expect(admin.map((c) => new URL(c.path, 'http://x').pathname)).toEqual(['/admin/v1beta/accountSummaries', '/admin/v1beta/accountSummaries']);
    expect(oauth.isValid(admin[0]!.token)).toBe(true);
  });

  it('one API refusing leaves the other list; a LinkedIn or X integration has none (400)', async () => {
    const id = await connectGoogle();
    google.failNext('sites', 403);
    const res = await t.call({ method: 'GET', url: `${base}/integrations/${id}/accounts`, auth: ownerA() });
    expect(res.statusCode).toBe(200);
    expect(res.json().every((a: { source: string }) => a.source === 'ga4')).toBe(true);
    google.failNext('sites', 403);
    google.failNext('admin', 403);
    const both = await t.call({ method: 'GET', url: `${base}/integrations/${id}/accounts`, auth: ownerA() });
    expect(both.statusCode).toBe(422);
    expect(both.json().message).toContain('PERMISSION_DENIED');
    const x = await t.call({
      method: 'POST',
      url: `${base}/integrations`,
      auth: ownerA(),
      payload: { provider: 'x', name: 'x', credentials: { accessToken: 'ok-x' } },
    });
    const refused = await t.call({ method: 'GET', url: `${base}/integrations/${x.json().id}/accounts`, auth: ownerA() });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toContain('google');
  });
});

describe('sync', () => {
  it('stores one row per day and source, zeros for the days Google has no row for; analytics.synced once per source', async () => {
    const property = newProperty();
    const site = 'https://zeros.example/';
    // Yesterday is 2026-03-09; the default range is the 4 days to yesterday. GA4 has no row for 03-07, Search Console none for 03-06.
    google.setGa4(property, {
      '2026-03-06': { sessions: 40, totalUsers: 30, keyEvents: 2 },
      '2026-03-08': { sessions: 55, totalUsers: 41, keyEvents: 3 },
      '2026-03-09': { sessions: 61, totalUsers: 50, keyEvents: 4 },
    });
    google.setGsc(site, {
      '2026-03-07': { clicks: 12, impressions: 300, ctr: 0.04, position: 8.5 },
      '2026-03-08': { clicks: 9, impressions: 250, ctr: 0.036, position: 9.1 },
      '2026-03-09': { clicks: 15, impressions: 310, ctr: 0.0484, position: 7.9 },
    });
    const id = await connectGoogle({ propertyId: property, siteUrl: site });
    const run = await syncNow(id);
    expect(run).toMatchObject({ status: 'succeeded', trigger: 'manual', from: '2026-03-06', to: '2026-03-09', rows: 8, error: null, attempts: 1 });
    expect(run.startedAt).toBeTruthy();
    expect(run.finishedAt).toBeTruthy();

    const items = await daily({ integrationId: id, from: '2026-03-01', to: '2026-03-31' });
    expect(items.filter((i) => i.source === 'ga4')).toEqual([
      { date: '2026-03-06', source: 'ga4', integrationId: id, metrics: { sessions: 40, users: 30, conversions: 2 } },
      { date: '2026-03-07', source: 'ga4', integrationId: id, metrics: { sessions: 0, users: 0, conversions: 0 } },
      { date: '2026-03-08', source: 'ga4', integrationId: id, metrics: { sessions: 55, users: 41, conversions: 3 } },
      { date: '2026-03-09', source: 'ga4', integrationId: id, metrics: { sessions: 61, users: 50, conversions: 4 } },
    ]);
    expect(items.filter((i) => i.source === 'gsc').map((i) => [i.date, i.metrics])).toEqual([
      ['2026-03-06', { clicks: 0, impressions: 0, ctr: 0, position: 0 }],
      ['2026-03-07', { clicks: 12, impressions: 300, ctr: 0.04, position: 8.5 }],
      ['2026-03-08', { clicks: 9, impressions: 250, ctr: 0.036, position: 9.1 }],
      ['2026-03-09', { clicks: 15, impressions: 310, ctr: 0.0484, position: 7.9 }],
    ]);
    expect((await daily({ integrationId: id, source: 'gsc', from: '2026-03-08', to: '2026-03-08' })).length).toBe(1);
    // Timestamps too (CONTRACT §6): `from`'s UTC day on, up to the day before an exclusive `to`.
    expect((await daily({ integrationId: id, source: 'gsc', from: '2026-03-08T23:00:00Z', to: '2026-03-09T00:00:00Z' })).map((d) => d.date)).toEqual([
      '2026-03-08',
    ]);
    expect((await daily({ integrationId: id, source: 'gsc', from: '2026-03-08T10:00:00+02:00', to: '2026-03-09T00:00:01Z' })).map((d) => d.date)).toEqual([
      '2026-03-08',
      '2026-03-09',
    ]);

    const synced = await syncedOf(id);
    expect(synced.map((e) => e.payload.source).sort()).toEqual(['ga4', 'gsc']);
    expect(synced.find((e) => e.payload.source === 'ga4')!.payload).toMatchObject({
      integrationId: id,
      date: '2026-03-09',
      metrics: { sessions: 61, users: 50, conversions: 4 },
      syncRunId: run.id,
    });

    // What went over the wire: the GA4 Data API's runReport and the Search Console query, as Google specifies them.
    const report = google
      .callsTo('data')
      .filter((c) => c.path.includes(property.split('/')[1]!))
      .at(-1)!;
    expect(report.path).toBe(`/data/v1beta/${property}:runReport`);
    expect(report.body).toMatchObject({
      dateRanges: [{ startDate: '2026-03-06', endDate: '2026-03-09' }],
      dimensions: [{ name: 'date' }],
      metrics: [{ name: 'sessions' }, { name: 'totalUsers' }, { name: 'keyEvents' }],
    });
    const query = google.callsTo('query').at(-1)!;
    expect(query.path).toBe('/gsc/webmasters/v3/sites/https%3A%2F%2Fzeros.example%2F/searchAnalytics/query');
    expect(query.body).toMatchObject({ startDate: '2026-03-06', endDate: '2026-03-09', dimensions: ['date'] });
  });

  it('a second sync replaces provisional numbers with the revised ones, and emits its own analytics.synced once per source', async () => {
    const property = newProperty();
    google.setGa4(property, { '2026-03-08': { sessions: 70, totalUsers: 60, keyEvents: 1 }, '2026-03-09': { sessions: 20, totalUsers: 18, keyEvents: 0 } });
    const id = await connectGoogle({ propertyId: property });
    const first = await syncNow(id);
    expect(first.rows).toBe(4);
    // GA4 processed more of yesterday, revised the day before, and found a day it had missed.
    google.setGa4(property, {
      '2026-03-07': { sessions: 5, totalUsers: 5, keyEvents: 0 },
      '2026-03-08': { sessions: 72, totalUsers: 61, keyEvents: 1 },
      '2026-03-09': { sessions: 95, totalUsers: 80, keyEvents: 3 },
    });
    const second = await syncNow(id);
    expect(second.status).toBe('succeeded');
    const items = await daily({ integrationId: id, source: 'ga4', from: '2026-03-06', to: '2026-03-09' });
    expect(items.map((i) => [i.date, i.metrics.sessions])).toEqual([
      ['2026-03-06', 0],
      ['2026-03-07', 5],
      ['2026-03-08', 72],
      ['2026-03-09', 95],
    ]);
    const synced = await syncedOf(id);
    expect(synced.map((e) => e.payload.syncRunId)).toEqual([first.id, second.id]);
    expect(synced[1]!.payload.metrics).toEqual({ sessions: 95, users: 80, conversions: 3 });
  });

  it('on demand: the days asked for, checked', async () => {
    const property = newProperty();
    google.setGa4(property, { '2026-01-15': { sessions: 9, totalUsers: 9, keyEvents: 1 } });
    const id = await connectGoogle({ propertyId: property });
    const run = await syncNow(id, { from: '2026-01-01', to: '2026-01-31' });
    expect(run).toMatchObject({ status: 'succeeded', from: '2026-01-01', to: '2026-01-31', rows: 31 });
    const items = await daily({ integrationId: id, from: '2025-12-01', to: '2026-02-28' });
    expect(items.length).toBe(31);
    expect(items.filter((i) => (i.metrics.sessions ?? 0) > 0).map((i) => i.date)).toEqual(['2026-01-15']);
    expect(google.callsTo('data').at(-1)!.body).toMatchObject({ dateRanges: [{ startDate: '2026-01-01', endDate: '2026-01-31' }] });
    // Only `to`: from the 4 days before it. Only `from`: to yesterday.
    expect(await syncNow(id, { to: '2026-02-10' })).toMatchObject({ from: '2026-02-07', to: '2026-02-10' });
    expect(await syncNow(id, { from: '2026-03-01' })).toMatchObject({ from: '2026-03-01', to: '2026-03-09' });

    const refused = async (payload: Record<string, unknown>, field: string, words: string, integrationId = id) => {
      const res = await t.call({ method: 'POST', url: `${base}/integrations/${integrationId}/sync`, auth: ownerA(), payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
      expect(res.json().message).toContain(words);
      if (field) expect(res.json().details[0].field).toBe(field);
    };
    await refused({ from: '2026-02-30' }, 'body.from', 'date');
    await refused({ from: '2026-03-05', to: '2026-03-01' }, 'body.from', 'after');
    await refused({ from: '2024-01-01', to: '2026-01-01' }, 'body.from', 'at most 500 days');
    await refused({ to: '2026-03-11' }, 'body.to', 'future');
    await refused({ from: '1999-12-31' }, 'body.from', '2000');
    await refused({ days: 3 }, '', 'days');
    const bare = await connectGoogle();
    await refused({}, 'config', 'config.propertyId', bare);
    expect((await t.call({ method: 'POST', url: `${base}/integrations/int_unknown/sync`, auth: ownerA(), payload: {} })).statusCode).toBe(404);
  });

  it("403 PERMISSION_DENIED fails the run with Google's message, the other source still stored; 429 and 5xx are tried again later", async () => {
    const property = newProperty();
    google.setGa4(property, { '2026-03-09': { sessions: 3, totalUsers: 3, keyEvents: 0 } });
    // A site the user has no access to.
    const id = await connectGoogle({ propertyId: property, siteUrl: 'https://not-mine.example/' });
    const denied = await syncNow(id);
    expect(denied.status).toBe('failed');
    expect(denied.error).toContain('Search Console');
    expect(denied.error).toContain('User does not have sufficient permission for site');
    expect(denied.rows).toBe(4);
    expect((await syncedOf(id)).map((e) => e.payload.source)).toEqual(['ga4']);

    const limited = await connectGoogle({ propertyId: property });
    google.failNext('data', 429, 1, { 'retry-after': '120' });
    const runId = await requestSync(limited);
    const waiting = await eventually(async () => {
      const run = (await runs(limited)).find((r) => r.id === runId);
      return run?.status === 'queued' && run.attempts === 1 ? run : null;
    });
    expect(waiting.error).toContain('RESOURCE_EXHAUSTED');
    expect(waiting.error).toContain('120 s');
    expect(await syncedOf(limited)).toEqual([]);
    clock.ms += 60_000;
    wakeSync();
    await new Promise((r) => setTimeout(r, 200));
    expect((await runs(limited)).find((r) => r.id === runId)!.status).toBe('queued');
    google.failNext('data', 503);
    clock.ms += 61_000;
    wakeSync();
    // The 503 puts it back once more (5 minutes), then it succeeds.
    await eventually(async () => {
      const run = (await runs(limited)).find((r) => r.id === runId)!;
      return run.status === 'queued' && run.attempts === 2 && run.error?.includes('503') ? run : null;
    });
    clock.ms += 5 * 60_000 + 1000;
    wakeSync();
    const done = await settled(limited, runId);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 3, error: null });
    expect((await syncedOf(limited)).length).toBe(1);
  });
});

describe('tokens', () => {
  it('a token that expires mid-sync is refreshed once and the sync goes on', async () => {
    const property = newProperty();
    const site = 'https://refresh.example/';
    google.setGa4(property, { '2026-03-09': { sessions: 11, totalUsers: 10, keyEvents: 1 } });
    google.setGsc(site, { '2026-03-09': { clicks: 4, impressions: 90, ctr: 0.0444, position: 5 } });
    const id = await connectGoogle({ propertyId: property, siteUrl: site });
    const refreshesBefore = oauth.refreshes('google').length;
    // GA4 is read with the token; before Search Console is asked, Google stops accepting it.
    google.onCall = (call) => {
      if (call.api === 'query') {
        google.onCall = null;
        oauth.expire(call.token);
      }
    };
    const run = await syncNow(id);
    expect(run).toMatchObject({ status: 'succeeded', rows: 8 });
    expect(oauth.refreshes('google').length).toBe(refreshesBefore + 1);
    const queries = google.callsTo('query').filter((c) => c.path.includes('refresh.example'));
    expect(queries.length).toBe(2);
    expect(queries[0]!.token).not.toBe(queries[1]!.token);
    expect(oauth.isValid(queries[1]!.token)).toBe(true);
    expect((await t.call({ method: 'GET', url: `${base}/integrations/${id}`, auth: ownerA() })).json().status).toBe('connected');
  });

  it('a dead grant: the run fails REAUTH_REQUIRED, the integration goes to error once, its rules to error', async () => {
    const property = newProperty();
    google.setGa4(property, { '2026-03-09': { sessions: 1, totalUsers: 1, keyEvents: 0 } });
    const id = await connectGoogle({ propertyId: property });
    const watched = await createRule({ name: 'sessions', integrationId: id, metric: 'ga4.sessions', compare: 'below', threshold: 10, window: 'day' });
    const token = oauth.lastAccessToken('google')!;
    oauth.expire(token);
    oauth.failRefresh = 'invalid_grant';
    try {
      const run = await syncNow(id);
      expect(run.status).toBe('failed');
      expect(run.error).toContain('connected again');
      expect((await t.call({ method: 'GET', url: `${base}/integrations/${id}`, auth: ownerA() })).json()).toMatchObject({
        status: 'error',
        lastError: { code: 'REAUTH_REQUIRED' },
      });
      expect(await rule(watched.id)).toMatchObject({ state: 'error' });
      // Further requests are refused until it is reconnected; one integration.error in all.
      const again = await t.call({ method: 'POST', url: `${base}/integrations/${id}/sync`, auth: ownerA(), payload: {} });
      expect(again.statusCode).toBe(422);
      expect(again.json().code).toBe('REAUTH_REQUIRED');
      const accounts = await t.call({ method: 'GET', url: `${base}/integrations/${id}/accounts`, auth: ownerA() });
      expect(accounts.json().code).toBe('REAUTH_REQUIRED');
      const errors = (await eventsOf(t, t.orgA.orgId, 'integration.error')).filter((e) => e.payload.integrationId === id);
      expect(errors.map((e) => e.payload.code)).toEqual(['REAUTH_REQUIRED']);
    } finally {
      oauth.failRefresh = null;
    }
  });

  it('Google refusing even a freshly refreshed token: the integration goes to error (REAUTH_REQUIRED)', async () => {
    const property = newProperty();
    google.setGa4(property, { '2026-03-09': { sessions: 1, totalUsers: 1, keyEvents: 0 } });
    const id = await connectGoogle({ propertyId: property });
    const valid = google.isValid;
    google.isValid = () => false; // access revoked on Google's side for this project
    try {
      const run = await syncNow(id);
      expect(run.status).toBe('failed');
      expect(run.error).toContain('UNAUTHENTICATED');
      expect((await t.call({ method: 'GET', url: `${base}/integrations/${id}`, auth: ownerA() })).json()).toMatchObject({
        status: 'error',
        lastError: { code: 'REAUTH_REQUIRED' },
      });
      const notes = (await t.call({ method: 'GET', url: `${base}/notifications?kind=integration.error&pageSize=100`, auth: { token: t.orgA.token } })).json();
      expect(notes.items.some((n: { link: string }) => n.link.endsWith(id))).toBe(true);
    } finally {
      google.isValid = valid;
    }
  });
});

describe('rules', () => {
  it('fires once on the move into firing (event, notification, a workflow on trigger.event), not while firing, again after clearing', async () => {
    const property = newProperty();
    const id = await connectGoogle({ propertyId: property });
    const wf = await t.call({
      method: 'POST',
      url: `${base}/workflows`,
      auth: ownerA(),
      payload: {
        name: 'on threshold',
        active: true,
        nodes: [
          { id: 't', type: 'trigger.event', params: { events: ['analytics.threshold'] } },
          { id: 's', type: 'data.set', params: { fields: { seen: true } } },
        ],
        edges: [{ from: 't', to: 's' }],
      },
    });
    expect(wf.statusCode, wf.body).toBe(201);
    const spike = await createRule({ name: 'Traffic spike', integrationId: id, metric: 'ga4.sessions', compare: 'above', threshold: 500, window: 'day' });
    expect(spike).toMatchObject({ state: 'ok', lastValue: null });

    const day = (sessions: number) => google.setGa4(property, { '2026-03-09': { sessions, totalUsers: sessions, keyEvents: 0 } });
    day(100);
    await syncNow(id);
    expect(await rule(spike.id)).toMatchObject({ state: 'ok', lastValue: 100, lastFiredAt: null });

    day(800);
    await syncNow(id);
    const firing = await rule(spike.id);
    expect(firing).toMatchObject({ state: 'firing', lastValue: 800 });
    expect(firing.lastFiredAt).toBeTruthy();
    const fired = await firedOf(spike.id);
    expect(fired.length).toBe(1);
    expect(fired[0]!.payload).toMatchObject({ ruleId: spike.id, metric: 'ga4.sessions', value: 800, threshold: 500, compare: 'above', direction: 'up' });
    const notes = async () =>
      (await t.call({ method: 'GET', url: `${base}/notifications?kind=analytics.threshold&pageSize=100`, auth: { token: t.orgA.token } }))
        .json()
        .items.filter((n: { link: string }) => n.link.endsWith(spike.id));
    expect((await notes()).length).toBe(1);
    expect((await notes())[0].title).toContain('Traffic spike');
    const run = await eventually(async () => {
      const list = (await t.call({ method: 'GET', url: `${base}/runs?workflowId=${wf.json().id}`, auth: ownerA() })).json().items;
      return list.length > 0 ? list[0] : null;
    });
    const detail = (await t.call({ method: 'GET', url: `${base}/runs/${run.id}`, auth: ownerA() })).json();
    expect(detail.input).toMatchObject({ type: 'analytics.threshold', payload: { ruleId: spike.id, value: 800 } });

    // Still over: nothing new.
    await syncNow(id);
    expect((await rule(spike.id)).state).toBe('firing');
    expect((await firedOf(spike.id)).length).toBe(1);

    day(120);
    await syncNow(id);
    expect(await rule(spike.id)).toMatchObject({ state: 'ok', lastValue: 120 });
    expect((await firedOf(spike.id)).length).toBe(1);

    day(900);
    await syncNow(id);
    expect((await rule(spike.id)).state).toBe('firing');
    expect((await firedOf(spike.id)).map((e) => e.payload.value)).toEqual([800, 900]);
    expect((await notes()).length).toBe(2);
  });

  it('pct_change against the previous window, not evaluated under minBaseline, direction up and down', async () => {
    const site = 'https://pct.example/';
    const id = await connectGoogle({ siteUrl: site });
    const week = (from: string, clicks: number) => {
      const days: Record<string, { clicks: number; impressions: number; ctr: number; position: number }> = {};
      for (let i = 0; i < 7; i++) {
        const d = new Date(Date.parse(`${from}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10);
        days[d] = { clicks, impressions: clicks * 20, ctr: 0.05, position: 6 };
      }
      google.setGsc(site, days);
    };
    const move = await createRule({
      name: 'Clicks moved',
      integrationId: id,
      metric: 'gsc.clicks',
      compare: 'pct_change',
      threshold: 50,
      window: '7d',
      minBaseline: 100,
    });
    const range = { from: '2026-02-24', to: '2026-03-09' };
    week('2026-02-24', 10); // 70 the week before: under the baseline
    week('2026-03-03', 30); // 210
    await syncNow(id, range);
    expect(await rule(move.id)).toMatchObject({ state: 'ok', lastValue: null });
    expect(await firedOf(move.id)).toEqual([]);

    week('2026-02-24', 20); // 140 → 210: +50 %
    await syncNow(id, range);
    expect(await rule(move.id)).toMatchObject({ state: 'firing', lastValue: 50 });

    week('2026-03-03', 14); // 140 → 98: −30 %, under the threshold
    await syncNow(id, range);
    expect(await rule(move.id)).toMatchObject({ state: 'ok', lastValue: -30 });

    week('2026-03-03', 5); // 140 → 35: −75 %
    await syncNow(id, range);
    expect((await rule(move.id)).state).toBe('firing');
    expect((await firedOf(move.id)).map((e) => [e.payload.direction, e.payload.value, e.payload.compare])).toEqual([
      ['up', 50, 'pct_change'],
      ['down', -75, 'pct_change'],
    ]);
  });

  it('the window arithmetic: sums over 7 and 28 days, ctr and position weighted by impressions', () => {
    const rows = [
      { date: '2026-03-08', metrics: { clicks: 10, impressions: 100, ctr: 0.1, position: 2 } },
      { date: '2026-03-09', metrics: { clicks: 30, impressions: 300, ctr: 0.1, position: 6 } },
      { date: '2026-02-01', metrics: { clicks: 1000, impressions: 1000, ctr: 1, position: 1 } },
    ];
    expect(windowValue('gsc.clicks', rows, '2026-03-03', '2026-03-09')).toBe(40);
    expect(windowValue('gsc.ctr', rows, '2026-03-03', '2026-03-09')).toBeCloseTo(0.1);
    expect(windowValue('gsc.position', rows, '2026-03-03', '2026-03-09')).toBe(5);
    const spec = { metric: 'gsc.clicks', compare: 'above', threshold: 39, window: '7d', minBaseline: null };
    expect(evaluate(spec, rows, '2026-03-09')).toMatchObject({ kind: 'value', value: 40, firing: true });
    expect(evaluate({ ...spec, window: 'day' }, rows, '2026-03-09')).toMatchObject({ value: 30, firing: false });
    expect(evaluate({ ...spec, compare: 'below', threshold: 50 }, rows, '2026-03-09')).toMatchObject({ value: 40, firing: true, direction: 'down' });
    expect(evaluate({ ...spec, compare: 'pct_change', window: '28d', threshold: 10 }, rows, '2026-03-09')).toMatchObject({
      kind: 'value',
      value: -96,
      direction: 'down',
      firing: true,
    });
    expect(evaluate(spec, [], null)).toEqual({ kind: 'no-data' });
  });

  it('CRUD with clear 400s; a change to what it watches starts it afresh', async () => {
    const id = await connectGoogle({ propertyId: newProperty() });
    const post = (payload: Record<string, unknown>) => t.call({ method: 'POST', url: `${base}/analytics/rules`, auth: ownerA(), payload });
    const valid = { name: 'Conversions low', integrationId: id, metric: 'ga4.conversions', compare: 'below', threshold: 1, window: '7d' };
    for (const [payload, field] of [
      [{ ...valid, metric: 'ga4.pageviews' }, 'body.metric'],
      [{ ...valid, compare: 'equals' }, 'body.compare'],
      [{ ...valid, window: '30d' }, 'body.window'],
      [{ ...valid, threshold: 'ten' }, 'body.threshold'],
      [{ ...valid, minBaseline: 50 }, 'body.minBaseline'],
      [{ ...valid, compare: 'pct_change', threshold: -5 }, 'body.threshold'],
      [{ ...valid, name: '' }, 'body.name'],
    ] as const) {
      const res = await post(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect((await post({ ...valid, integrationId: 'int_missing' })).statusCode).toBe(404);
    const x = await t.call({
      method: 'POST',
      url: `${base}/integrations`,
      auth: ownerA(),
      payload: { provider: 'linkedin', name: 'li', credentials: { accessToken: 'ok-li', author: 'urn:li:person:abc' } },
    });
    expect((await post({ ...valid, integrationId: x.json().id })).statusCode).toBe(400);

    const created = await createRule(valid);
    expect(created).toMatchObject({ ...valid, state: 'ok', minBaseline: null, projectId: null });
    const listed = await t.call({ method: 'GET', url: `${base}/analytics/rules?integrationId=${id}`, auth: ownerA() });
    expect(listed.json()).toMatchObject({ total: 1, items: [{ id: created.id }] });
    const renamed = await t.call({ method: 'PATCH', url: `${base}/analytics/rules/${created.id}`, auth: ownerA(), payload: { name: 'Renamed' } });
    expect(renamed.json()).toMatchObject({ name: 'Renamed', metric: 'ga4.conversions' });
    const pct = await t.call({
      method: 'PATCH',
      url: `${base}/analytics/rules/${created.id}`,
      auth: ownerA(),
      payload: { compare: 'pct_change', threshold: 25, minBaseline: 10 },
    });
    expect(pct.json()).toMatchObject({ compare: 'pct_change', threshold: 25, minBaseline: 10, state: 'ok' });
    const back = await t.call({ method: 'PATCH', url: `${base}/analytics/rules/${created.id}`, auth: ownerA(), payload: { compare: 'above' } });
    expect(back.json()).toMatchObject({ compare: 'above', minBaseline: null });
    expect((await t.call({ method: 'PATCH', url: `${base}/analytics/rules/${created.id}`, auth: ownerA(), payload: {} })).statusCode).toBe(400);
    expect((await t.call({ method: 'DELETE', url: `${base}/analytics/rules/${created.id}`, auth: ownerA() })).statusCode).toBe(204);
    expect((await t.call({ method: 'GET', url: `${base}/analytics/rules/${created.id}`, auth: ownerA() })).statusCode).toBe(404);
  });
});

describe('isolation and access', () => {
  it('another organization gets 404 on every route, with its own credentials and ids of this one', async () => {
    const id = await connectGoogle({ propertyId: newProperty() });
    const ruleId = (await createRule({ name: 'r', integrationId: id, metric: 'ga4.sessions', compare: 'above', threshold: 1, window: 'day' })).id;
    const baseB = `/api/v1/orgs/${t.orgB.orgId}`;
    const routes: [string, string, unknown?][] = [
      ['GET', `/integrations/${id}/accounts`],
      ['POST', `/integrations/${id}/sync`, {}],
      ['GET', `/integrations/${id}/sync-runs`],
      ['GET', `/analytics/daily?integrationId=${id}&from=2026-03-01&to=2026-03-09`],
      ['GET', `/analytics/rules/${ruleId}`],
      ['PATCH', `/analytics/rules/${ruleId}`, { name: 'x' }],
      ['DELETE', `/analytics/rules/${ruleId}`],
      ['POST', '/analytics/rules', { name: 'r', integrationId: id, metric: 'ga4.sessions', compare: 'above', threshold: 1, window: 'day' }],
    ];
    for (const [method, path, payload] of routes) {
      // Organization B's owner and key, on B's own paths with A's ids: not found.
      for (const auth of [{ apiKey: t.orgB.apiKey }, { token: t.orgB.token }]) {
        const res = await t.call({ method: method as 'GET', url: `${baseB}${path}`, auth, ...(payload ? { payload: payload as object } : {}) });
        expect(res.statusCode, `${method} ${path}`).toBe(404);
      }
      // B's key on A's paths: not found either.
      const cross = await t.call({
        method: method as 'GET',
        url: `${base}${path}`,
        auth: { apiKey: t.orgB.apiKey },
        ...(payload ? { payload: payload as object } : {}),
      });
      expect(cross.statusCode, `${method} ${path}`).toBe(404);
    }
    // B's lists hold nothing of A's.
    expect((await t.call({ method: 'GET', url: `${baseB}/analytics/rules`, auth: { apiKey: t.orgB.apiKey } })).json().total).toBe(0);
    expect(
      (await t.call({ method: 'GET', url: `${baseB}/analytics/daily?from=2026-01-01&to=2026-03-09`, auth: { apiKey: t.orgB.apiKey } })).json().items,
    ).toEqual([]);
    expect((await t.call({ method: 'GET', url: `${base}/analytics/rules/${ruleId}`, auth: ownerA() })).statusCode).toBe(200);
  });

  it('scopes: content:* for the integration routes, analytics:* for daily rows and rules; viewers read only', async () => {
    const id = await connectGoogle({ propertyId: newProperty() });
    const ruleId = (await createRule({ name: 'r', integrationId: id, metric: 'ga4.users', compare: 'above', threshold: 1, window: 'day' })).id;
    const routes: [string, string, string, unknown?][] = [
      ['GET', `/integrations/${id}/accounts`, 'content:read'],
      ['POST', `/integrations/${id}/sync`, 'content:write', {}],
      ['GET', `/integrations/${id}/sync-runs`, 'content:read'],
      ['GET', '/analytics/daily?from=2026-03-01&to=2026-03-09', 'analytics:read'],
      ['GET', '/analytics/rules', 'analytics:read'],
      ['GET', `/analytics/rules/${ruleId}`, 'analytics:read'],
      ['PATCH', `/analytics/rules/${ruleId}`, 'analytics:write', { name: 'renamed' }],
      ['POST', '/analytics/rules', 'analytics:write', { name: 'r2', metric: 'gsc.clicks', compare: 'below', threshold: 1, window: 'day' }],
      ['DELETE', `/analytics/rules/${ruleId}`, 'analytics:write'],
    ];
    const wrong = await t.key(t.orgA.orgId, ['leads:read', 'leads:write', 'usage:read']);
    const viewer = (await t.member(t.orgA.orgId, 'viewer')).token;
    for (const [method, path, scope, payload] of routes) {
      const call = (auth: Credentials) => t.call({ method: method as 'GET', url: `${base}${path}`, auth, ...(payload ? { payload: payload as object } : {}) });
      const refused = await call({ apiKey: wrong });
      expect(refused.statusCode, `${method} ${path}`).toBe(403);
      expect(refused.json().code).toBe('INSUFFICIENT_SCOPE');
      if (scope.endsWith(':write')) {
        const readOnly = await call({ apiKey: await t.key(t.orgA.orgId, [scope.replace(':write', ':read')]) });
        expect(readOnly.statusCode, `${method} ${path} with the read scope`).toBe(403);
        expect((await call({ token: viewer })).statusCode, `viewer ${method} ${path}`).toBe(403);
      }
      const allowed = await call({ apiKey: await t.key(t.orgA.orgId, [scope]) });
      expect(allowed.statusCode, `${method} ${path} with ${scope}: ${allowed.body}`).toBeLessThan(300);
    }
  });

  it("a key bound to a project sees its project's and organization-wide analytics, changes only its own", async () => {
    const projectA = (await t.call({ method: 'POST', url: `${base}/projects`, auth: { token: t.orgA.token }, payload: { name: 'Site A' } })).json()
      .id as string;
    const projectB = (await t.call({ method: 'POST', url: `${base}/projects`, auth: { token: t.orgA.token }, payload: { name: 'Site B' } })).json()
      .id as string;
    const propertyA = newProperty();
    const propertyB = newProperty();
    google.setGa4(propertyA, { '2026-03-09': { sessions: 1, totalUsers: 1, keyEvents: 0 } });
    google.setGa4(propertyB, { '2026-03-09': { sessions: 2, totalUsers: 2, keyEvents: 0 } });
    const inA = await connectGoogle({ propertyId: propertyA }, { projectId: projectA });
    const inB = await connectGoogle({ propertyId: propertyB }, { projectId: projectB });
    const orgWide = await connectGoogle({ propertyId: propertyA });
    for (const id of [inA, inB, orgWide]) await syncNow(id);
    const keyA: Credentials = { apiKey: await t.key(t.orgA.orgId, ['*'], projectA) };
    const rows = (await t.call({ method: 'GET', url: `${base}/analytics/daily?from=2026-03-01&to=2026-03-09`, auth: keyA })).json().items as {
      integrationId: string;
    }[];
    const seen = new Set(rows.map((r) => r.integrationId));
    expect(seen.has(inA)).toBe(true);
    expect(seen.has(orgWide)).toBe(true);
    expect(seen.has(inB)).toBe(false);
    expect((await t.call({ method: 'GET', url: `${base}/integrations/${inB}/sync-runs`, auth: keyA })).statusCode).toBe(404);
    expect((await t.call({ method: 'POST', url: `${base}/integrations/${inB}/sync`, auth: keyA, payload: {} })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: `${base}/integrations/${orgWide}/sync-runs`, auth: keyA })).statusCode).toBe(200);
    // Organization-wide integrations are read-only for it.
    expect((await t.call({ method: 'POST', url: `${base}/integrations/${orgWide}/sync`, auth: keyA, payload: {} })).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: `${base}/integrations/${inA}/sync`, auth: keyA, payload: {} })).statusCode).toBe(202);
    // Its rules are its project's; an organization-wide rule it can read but not change.
    const own = await t.call({
      method: 'POST',
      url: `${base}/analytics/rules`,
      auth: keyA,
      payload: { name: 'mine', metric: 'ga4.sessions', compare: 'above', threshold: 5, window: 'day' },
    });
    expect(own.json().projectId).toBe(projectA);
    expect(
      (
        await t.call({
          method: 'POST',
          url: `${base}/analytics/rules`,
          auth: keyA,
          payload: { name: 'b', integrationId: inB, metric: 'ga4.sessions', compare: 'above', threshold: 5, window: 'day' },
        })
      ).statusCode,
    ).toBe(404);
    const shared = await createRule({ name: 'org', integrationId: orgWide, metric: 'ga4.sessions', compare: 'above', threshold: 5, window: 'day' });
    expect((await t.call({ method: 'GET', url: `${base}/analytics/rules/${shared.id}`, auth: keyA })).statusCode).toBe(200);
    expect((await t.call({ method: 'PATCH', url: `${base}/analytics/rules/${shared.id}`, auth: keyA, payload: { name: 'x' } })).statusCode).toBe(403);
    const ruleB = await createRule({ name: 'b', integrationId: inB, metric: 'ga4.sessions', compare: 'above', threshold: 5, window: 'day' });
    expect(ruleB).toMatchObject({ projectId: projectB });
    expect((await t.call({ method: 'GET', url: `${base}/analytics/rules/${ruleB.id}`, auth: keyA })).statusCode).toBe(404);
  });
});

// Last: moving the clock past the sync hour schedules every connected google integration of the file.
describe('the daily schedule', () => {
  it("queues one run per integration at ANALYTICS_SYNC_HOUR (UTC): first the last 90 days, then each source's lookback, once a day", async () => {
    const property = newProperty();
    const site = 'https://daily.example/';
    google.setGa4(property, { '2026-03-09': { sessions: 8, totalUsers: 8, keyEvents: 1 } });
    google.setGsc(site, { '2026-03-09': { clicks: 2, impressions: 40, ctr: 0.05, position: 3 } });
    const id = await connectGoogle({ propertyId: property, siteUrl: site });
    const scheduled = async () => (await runs(id)).filter((r) => r.trigger === 'schedule' || r.trigger === 'backfill');

    clock.ms = Date.parse('2026-03-10T03:59:00Z');
    wakeSync();
    await new Promise((r) => setTimeout(r, 300));
    expect(await scheduled()).toEqual([]);

    clock.ms = Date.parse('2026-03-10T04:00:00Z');
    wakeSync();
    const first = await eventually(async () => {
      const list = await scheduled();
      return list.length === 1 && list[0]!.status === 'succeeded' ? list[0] : null;
    });
    // Nothing synced yet: the history, 90 days ending yesterday, for both sources.
    expect(first).toMatchObject({ trigger: 'backfill', from: '2025-12-10', to: '2026-03-09', rows: 180 });
    expect(
      google
        .callsTo('data')
        .filter((c) => c.path.includes(property))
        .at(-1)!.body,
    ).toMatchObject({ dateRanges: [{ startDate: '2025-12-10', endDate: '2026-03-09' }] });
    expect((await syncedOf(id)).filter((e) => e.payload.syncRunId === first.id).length).toBe(2);

    clock.ms = Date.parse('2026-03-10T23:30:00Z');
    wakeSync();
    await new Promise((r) => setTimeout(r, 300));
    expect((await scheduled()).length).toBe(1);

    clock.ms = Date.parse('2026-03-11T04:05:00Z');
    wakeSync();
    const second = await eventually(async () => {
      const list = await scheduled();
      return list.length === 2 && list[0]!.status === 'succeeded' ? list[0] : null;
    });
    // From then on, GA4 re-fetches 3 days, Search Console 4, both ending yesterday.
    expect(second).toMatchObject({ trigger: 'schedule', from: '2026-03-07', to: '2026-03-10', rows: 7 });
    expect(
      google
        .callsTo('data')
        .filter((c) => c.path.includes(property))
        .at(-1)!.body,
    ).toMatchObject({ dateRanges: [{ startDate: '2026-03-08', endDate: '2026-03-10' }] });
    expect(
      google
        .callsTo('query')
        .filter((c) => c.path.includes('daily.example'))
        .at(-1)!.body,
    ).toMatchObject({ startDate: '2026-03-07', endDate: '2026-03-10' });
    // A day without any GA4 row yet (2026-03-10) is stored as zeros.
    const items = await daily({ integrationId: id, source: 'ga4', from: '2026-03-10', to: '2026-03-10' });
    expect(items.map((i) => i.metrics)).toEqual([{ sessions: 0, users: 0, conversions: 0 }]);
  });

  it("a sync asked for that covers the day's run stands for it, and a run already waiting for the days answers a sync asked for", async () => {
    const property = newProperty();
    google.setGa4(property, { '2026-03-11': { sessions: 5, totalUsers: 4, keyEvents: 0 } });
    const scheduled = async (id: string) => (await runs(id)).filter((r) => r.trigger !== 'manual');
    /** The runs the schedule queued at `at` (for the other integrations of this file) all finished. */
    const tickDone = (at: string) =>
      eventually(async () => {
        const [counted] = await rows<{ queued: number; busy: number }>(
          t.database.db,
          sql`select count(*)::int as queued,
        count(*) filter (where status in ('queued', 'running'))::int as busy
        from analytics_sync_runs where created_at = ${at}::timestamptz and trigger <> 'manual'`,
        );
        return counted!.queued > 0 && counted!.busy === 0 ? true : null;
      });

    // Before the sync hour, the history asked for by hand ("Sync now" with 90 days).
    clock.ms = Date.parse('2026-03-12T03:00:00Z');
    const asked = await connectGoogle({ propertyId: property });
    const manual = await syncNow(asked, { from: '2025-12-12', to: '2026-03-11' });
    expect(manual).toMatchObject({ status: 'succeeded', trigger: 'manual', rows: 90 });
    // At the sync hour the other integrations get their run; this one's days are already fetched.
    clock.ms = Date.parse('2026-03-12T04:00:00Z');
    wakeSync();
    await tickDone('2026-03-12T04:00:00Z');
    expect(await scheduled(asked)).toEqual([]);

    // Connected after the hour: its history is queued at once; Google is down for its first try.
    const late = await connectGoogle({ propertyId: property });
    google.failNext('data', 503);
    clock.ms = Date.parse('2026-03-12T04:01:00Z');
    wakeSync();
    const backfill = await eventually(async () => {
      const [run] = await scheduled(late);
      return run?.status === 'queued' && run.attempts === 1 ? run : null;
    });
    expect(backfill).toMatchObject({ trigger: 'backfill', from: '2025-12-12', to: '2026-03-11' });
    // "Sync now" for the same 90 days, or fewer of them, is that run; days it does not cover are a run of their own.
    expect(await requestSync(late, { from: '2025-12-12', to: '2026-03-11' })).toBe(backfill.id);
    expect(await requestSync(late)).toBe(backfill.id);
    const today = await requestSync(late, { from: '2026-03-12', to: '2026-03-12' });
    expect(today).not.toBe(backfill.id);
    expect((await runs(late)).map((r) => r.id).sort()).toEqual([backfill.id, today].sort());
    clock.ms += 5 * 60_000;
    wakeSync();
    expect(await settled(late, backfill.id)).toMatchObject({ status: 'succeeded', attempts: 2, rows: 90 });
  });
});
