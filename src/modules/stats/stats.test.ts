import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { eventOutbox, events } from '../events/tables.ts';
import { usageRecords } from '../usage/tables.ts';
import { newId } from '../../platform/ids.ts';
import { parseRange } from '../../platform/range.ts';
import { statsHourly } from './tables.ts';
import { integrations } from '../integrations/tables.ts';
import { analyticsDaily } from '../analytics/tables.ts';
import { eq } from 'drizzle-orm';
import { eventually } from '../../../test/helpers.ts';

let t: TestApp;
let url: string;
const owner = () => ({ token: t.orgA.token });
const query = (payload: Record<string, unknown>, auth: { token?: string; apiKey?: string } = owner(), orgId = t.orgA.orgId) =>
  t.call({ method: 'POST', url: `/api/v1/orgs/${orgId}/stats/query`, auth, payload });

/**
 * An event at a chosen time: in the outbox, so the running dispatcher counts it into stats_hourly;
 * or, `dispatched`, as one dispatched before the hourly counts existed (counted only by a rebuild).
 */
async function event(type: string, at: string, orgId = t.orgA.orgId, projectId: string | null = t.orgA.projectId, dispatched = false) {
  const id = newId('event');
  await t.database.db.insert(events).values({ id, orgId, projectId, type, payload: {}, at: new Date(at) });
  if (!dispatched) await t.database.db.insert(eventOutbox).values({ id });
}

const drained = () => eventually(async () => (await t.app.services.dispatcher.pending()) === 0);

beforeAll(async () => {
  t = await buildTestApp();
  url = `/api/v1/orgs/${t.orgA.orgId}/stats/query`;
});
afterAll(async () => {
  await t.close();
});

type Series = { metric: string; total: number; points: { at: string; value: number }[] };
const seriesOf = (body: { series: Series[] }, metric: string) => body.series.find((s) => s.metric === metric)!;

describe('stats/query', () => {
  it('sums equal what was created through the API today', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/leads`, auth: owner(), payload: { email: `stats${i}@example.com` } })).json().id,
      );
    for (const id of ids.slice(0, 2))
      await t.call({ method: 'PATCH', url: `/api/v1/orgs/${t.orgA.orgId}/leads/${id}`, auth: owner(), payload: { status: 'QUALIFIED' } });
    for (let i = 0; i < 3; i++)
      await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/content`, auth: owner(), payload: { platform: 'X', body: `post ${i}` } });
    // Another organization's activity is not counted.
    await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgB.orgId}/leads`, auth: { token: t.orgB.token }, payload: { email: 'b@example.com' } });
    const today = new Date().toISOString().slice(0, 10);
    const res = await query({ metrics: ['leads.created', 'leads.qualified', 'posts.created', 'posts.published'], from: today, to: today, granularity: 'day' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.granularity).toBe('day');
    expect(seriesOf(body, 'leads.created').points).toEqual([{ at: `${today}T00:00:00.000Z`, value: 5 }]);
    expect(seriesOf(body, 'leads.qualified').total).toBe(2);
    expect(seriesOf(body, 'posts.created').total).toBe(3);
    expect(seriesOf(body, 'posts.published').total).toBe(0);
  });

  it('buckets by day with empty days as zero, in UTC or in a time zone', async () => {
    await event('workflow.run.finished', '2031-01-05T23:30:00Z');
    await event('workflow.run.finished', '2031-01-06T00:30:00Z');
    await event('workflow.run.finished', '2031-01-09T12:00:00Z');
    await event('workflow.run.failed', '2031-01-09T12:00:00Z');
    const utc = (await query({ metrics: ['runs.succeeded', 'runs.failed'], from: '2031-01-05', to: '2031-01-10', granularity: 'day' })).json();
    expect(seriesOf(utc, 'runs.succeeded').points).toEqual([
      { at: '2031-01-05T00:00:00.000Z', value: 1 },
      { at: '2031-01-06T00:00:00.000Z', value: 1 },
      { at: '2031-01-07T00:00:00.000Z', value: 0 },
      { at: '2031-01-08T00:00:00.000Z', value: 0 },
      { at: '2031-01-09T00:00:00.000Z', value: 1 },
      { at: '2031-01-10T00:00:00.000Z', value: 0 },
    ]);
    expect(seriesOf(utc, 'runs.failed').total).toBe(1);
    // In Paris (UTC+1) both early events fall on 6 January; days start at 23:00 UTC.
    const paris = (await query({ metrics: ['runs.succeeded'], from: '2031-01-05', to: '2031-01-06', granularity: 'day', timezone: 'Europe/Paris' })).json();
    expect(paris.timezone).toBe('Europe/Paris');
    expect(seriesOf(paris, 'runs.succeeded').points).toEqual([
      { at: '2031-01-04T23:00:00.000Z', value: 0 },
      { at: '2031-01-05T23:00:00.000Z', value: 2 },
    ]);
  });

  it('weeks start on Monday; months and hours are bucketed too', async () => {
    await event('agent.run.finished', '2031-02-02T10:00:00Z'); // a Sunday
    await event('agent.run.finished', '2031-02-03T10:00:00Z'); // Monday
    await event('agent.run.finished', '2031-02-03T10:59:00Z');
    await event('agent.run.finished', '2031-04-15T10:00:00Z');
    const weeks = (await query({ metrics: ['agent.runs'], from: '2031-02-01', to: '2031-02-14', granularity: 'week' })).json();
    expect(seriesOf(weeks, 'agent.runs').points).toEqual([
      { at: '2031-01-27T00:00:00.000Z', value: 1 },
      { at: '2031-02-03T00:00:00.000Z', value: 2 },
      { at: '2031-02-10T00:00:00.000Z', value: 0 },
    ]);
    const months = (await query({ metrics: ['agent.runs'], from: '2031-01-01', to: '2031-04-30', granularity: 'month' })).json();
    expect(seriesOf(months, 'agent.runs').points.map((p: { value: number }) => p.value)).toEqual([0, 3, 0, 1]);
    const hours = (await query({ metrics: ['agent.runs'], from: '2031-02-03T09:00:00Z', to: '2031-02-03T12:00:00Z', granularity: 'hour' })).json();
    expect(seriesOf(hours, 'agent.runs').points).toEqual([
      { at: '2031-02-03T09:00:00.000Z', value: 0 },
      { at: '2031-02-03T10:00:00.000Z', value: 2 },
      { at: '2031-02-03T11:00:00.000Z', value: 0 },
    ]);
  });

  it('days across a daylight-saving change start at local midnight', async () => {
    await event('post.published', '2031-03-09T04:30:00Z'); // 23:30 on 8 March in New York (EST)
    await event('post.published', '2031-03-10T03:30:00Z'); // 23:30 on 9 March (EDT)
    const ny = (await query({ metrics: ['posts.published'], from: '2031-03-08', to: '2031-03-10', granularity: 'day', timezone: 'America/New_York' })).json();
    expect(seriesOf(ny, 'posts.published').points).toEqual([
      { at: '2031-03-08T05:00:00.000Z', value: 1 },
      { at: '2031-03-09T05:00:00.000Z', value: 1 },
      { at: '2031-03-10T04:00:00.000Z', value: 0 },
    ]);
  });

  it('usage.costUsd and tokens sum the usage records', async () => {
    const rows = [0.25, 0.125, 1.5].map((cost, i) => ({
      id: newId('usage'),
      orgId: t.orgA.orgId,
      projectId: t.orgA.projectId,
      modelId: 'offline',
      inputTokens: 100 * (i + 1),
      outputTokens: 10,
      costUsd: cost,
      at: new Date(`2031-05-0${i + 1}T12:00:00Z`),
    }));
    await t.database.db.insert(usageRecords).values([...rows, { ...rows[0]!, id: newId('usage'), orgId: t.orgB.orgId }]);
    const res = (await query({ metrics: ['usage.costUsd', 'usage.inputTokens'], from: '2031-05-01', to: '2031-05-31', granularity: 'week' })).json();
    expect(seriesOf(res, 'usage.costUsd').total).toBe(1.875);
    expect(seriesOf(res, 'usage.inputTokens').total).toBe(600);
    expect(seriesOf(res, 'usage.costUsd').points.reduce((s: number, p: { value: number }) => s + p.value, 0)).toBe(1.875);
  });

  it('ga4.* and gsc.* come from the synced analytics days: sums per bucket, ctr and position as ratios weighted by impressions; other organizations not counted', async () => {
    const integration = async (orgId: string) => {
      const id = newId('integration');
      await t.database.db
        .insert(integrations)
        .values({ id, orgId, projectId: null, provider: 'google', name: 'Google', credentialsSealed: 'x', authType: 'oauth' });
      return id;
    };
    const mine = await integration(t.orgA.orgId);
    const theirs = await integration(t.orgB.orgId);
    const day = (
      integrationId: string,
      orgId: string,
      date: string,
      ga4: Record<string, number>,
      gsc: Record<string, number>,
    ): (typeof analyticsDaily.$inferInsert)[] => [
      { integrationId, orgId, source: 'ga4', date, metrics: ga4 },
      { integrationId, orgId, source: 'gsc', date, metrics: gsc },
    ];
    await t.database.db
      .insert(analyticsDaily)
      .values([
        ...day(mine, t.orgA.orgId, '2032-03-01', { sessions: 100, users: 80, conversions: 3 }, { clicks: 10, impressions: 100, ctr: 0.1, position: 4 }),
        ...day(mine, t.orgA.orgId, '2032-03-02', { sessions: 50, users: 40, conversions: 0 }, { clicks: 30, impressions: 300, ctr: 0.1, position: 8 }),
        ...day(mine, t.orgA.orgId, '2032-03-08', { sessions: 7, users: 7, conversions: 1 }, { clicks: 0, impressions: 0, ctr: 0, position: 0 }),
        ...day(
          theirs,
          t.orgB.orgId,
          '2032-03-01',
          { sessions: 9999, users: 9999, conversions: 9999 },
          { clicks: 9999, impressions: 9999, ctr: 1, position: 1 },
        ),
      ]);
    const metrics = ['ga4.sessions', 'ga4.users', 'ga4.conversions', 'gsc.clicks', 'gsc.impressions', 'gsc.ctr', 'gsc.position'];
    const days = (await query({ metrics, from: '2032-03-01', to: '2032-03-03', granularity: 'day' })).json();
    expect(seriesOf(days, 'ga4.sessions').points.map((p) => p.value)).toEqual([100, 50, 0]);
    expect(seriesOf(days, 'ga4.sessions').total).toBe(150);
    expect(seriesOf(days, 'ga4.users').total).toBe(120);
    expect(seriesOf(days, 'gsc.clicks').points.map((p) => p.value)).toEqual([10, 30, 0]);
    expect(seriesOf(days, 'gsc.ctr').total).toBe(0.1);
    // (4 × 100 + 8 × 300) / 400 impressions.
    expect(seriesOf(days, 'gsc.position').total).toBe(7);
    expect(seriesOf(days, 'gsc.position').points.map((p) => p.value)).toEqual([4, 8, 0]);
    const weeks = (await query({ metrics: ['ga4.sessions', 'ga4.conversions'], from: '2032-03-01', to: '2032-03-14', granularity: 'week' })).json();
    expect(seriesOf(weeks, 'ga4.sessions').points.map((p) => p.value)).toEqual([150, 7]);
    expect(seriesOf(weeks, 'ga4.conversions').total).toBe(4);
    // A day belongs to its local midnight in the query's zone.
    const tokyo = (await query({ metrics: ['ga4.sessions'], from: '2032-03-02', to: '2032-03-02', granularity: 'day', timezone: 'Asia/Tokyo' })).json();
    expect(seriesOf(tokyo, 'ga4.sessions').total).toBe(50);
  });

  it('filters by project', async () => {
    const project = (await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/projects`, auth: owner(), payload: { name: 'Stats' } })).json();
    await event('lead.created', '2031-07-01T10:00:00Z', t.orgA.orgId, project.id);
    await event('lead.created', '2031-07-01T11:00:00Z');
    const only = (await query({ metrics: ['leads.created'], from: '2031-07-01', to: '2031-07-01', granularity: 'day', projectId: project.id })).json();
    expect(seriesOf(only, 'leads.created').total).toBe(1);
    const all = (await query({ metrics: ['leads.created'], from: '2031-07-01', to: '2031-07-01', granularity: 'day' })).json();
    expect(seriesOf(all, 'leads.created').total).toBe(2);
    expect(
      (await query({ metrics: ['leads.created'], from: '2031-07-01', to: '2031-07-01', granularity: 'day', projectId: t.orgB.projectId })).statusCode,
    ).toBe(404);
  });

  it('refuses unknown metrics, granularities, time zones, bad ranges and too many buckets', async () => {
    for (const payload of [
      { metrics: ['leads.deleted'], from: '2031-01-01', to: '2031-01-02', granularity: 'day' },
      { metrics: ['leads.created'], from: '2031-01-01', to: '2031-01-02', granularity: 'fortnight' },
      { metrics: ['leads.created'], from: '2031-01-01', to: '2031-01-02', granularity: 'day', timezone: 'Nowhere/Land' },
      { metrics: ['leads.created'], from: '2031-01-05', to: '2031-01-02', granularity: 'day' },
      { metrics: ['leads.created'], from: '2031-01-01T00:00:00', to: '2031-01-02', granularity: 'day' },
      { metrics: ['leads.created'], from: '2000-01-01', to: '2031-01-02', granularity: 'hour' },
      { metrics: [], from: '2031-01-01', to: '2031-01-02', granularity: 'day' },
    ]) {
      const res = await query(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
  });

  it('needs usage:read or leads:read; another organization is 404', async () => {
    const payload = { metrics: ['leads.created'], from: '2031-01-01', to: '2031-01-02', granularity: 'day' };
    expect((await query(payload, { apiKey: await t.key(t.orgA.orgId, ['usage:read']) })).statusCode).toBe(200);
    expect((await query(payload, { apiKey: await t.key(t.orgA.orgId, ['leads:read']) })).statusCode).toBe(200);
    const denied = await query(payload, { apiKey: await t.key(t.orgA.orgId, ['content:read']) });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('INSUFFICIENT_SCOPE');
    const viewer = await t.member(t.orgA.orgId, 'viewer');
    expect((await query(payload, { token: viewer.token })).statusCode).toBe(200);
    expect((await query(payload, { token: t.orgB.token })).statusCode).toBe(404);
    expect((await query(payload, { apiKey: t.orgB.apiKey })).statusCode).toBe(404);
    expect(url).toContain(t.orgA.orgId);
  });
});

describe('hourly counts', () => {
  it('the same answer before and after the dispatcher counts the events, edges of partial hours included', async () => {
    for (const at of [
      '2032-02-03T10:20:00Z',
      '2032-02-03T10:40:00Z',
      '2032-02-03T11:10:00Z',
      '2032-02-03T11:50:00Z',
      '2032-02-03T12:10:00Z',
      '2032-02-03T12:20:00Z',
    ]) {
      await event('lead.replied', at);
    }
    const body = { metrics: ['leads.replied'], from: '2032-02-03T10:30:00Z', to: '2032-02-03T12:15:00Z', granularity: 'hour' };
    const before = (await query(body)).json();
    await drained();
    const after = (await query(body)).json();
    expect(after).toEqual(before);
    expect(seriesOf(after, 'leads.replied').points).toEqual([
      { at: '2032-02-03T10:00:00.000Z', value: 1 },
      { at: '2032-02-03T11:00:00.000Z', value: 2 },
      { at: '2032-02-03T12:00:00.000Z', value: 1 },
    ]);
    const counted = await t.database.db.select().from(statsHourly).where(eq(statsHourly.type, 'lead.replied'));
    expect(counted.reduce((s, r) => s + r.n, 0)).toBe(6);
  });

  it('a zone with a half-hour offset is bucketed exactly (the outbox is read, not the hourly counts)', async () => {
    await event('conversation.opened', '2032-01-05T18:20:00Z'); // 23:50 on 5 January in Kolkata (+05:30)
    await event('conversation.opened', '2032-01-05T18:40:00Z'); // 00:10 on 6 January
    await drained();
    const res = (await query({ metrics: ['conversations.opened'], from: '2032-01-05', to: '2032-01-06', granularity: 'day', timezone: 'Asia/Kolkata' })).json();
    expect(seriesOf(res, 'conversations.opened').points).toEqual([
      { at: '2032-01-04T18:30:00.000Z', value: 1 },
      { at: '2032-01-05T18:30:00.000Z', value: 1 },
    ]);
  });

  it('rebuild recounts events dispatched before the counts existed', async () => {
    await event('approval.requested', '2032-04-01T10:00:00Z', t.orgA.orgId, t.orgA.projectId, true);
    await event('approval.requested', '2032-04-01T11:00:00Z', t.orgA.orgId, null, true);
    const body = { metrics: ['approvals.requested'], from: '2032-04-01', to: '2032-04-01', granularity: 'day' };
    expect(seriesOf((await query(body)).json(), 'approvals.requested').total).toBe(0);
    await t.app.services.stats.rebuild(t.orgA.orgId);
    expect(seriesOf((await query(body)).json(), 'approvals.requested').total).toBe(2);
    // Counts already kept by the dispatcher survive a rebuild unchanged.
    expect(
      seriesOf((await query({ metrics: ['leads.replied'], from: '2032-02-03', to: '2032-02-03', granularity: 'day' })).json(), 'leads.replied').total,
    ).toBe(6);
  });
});

describe('date ranges (CONTRACT §6)', () => {
  it('a date is the whole day (to included); a timestamp to is excluded; dates follow the time zone', () => {
    expect(parseRange('2026-11-01', '2026-11-01')).toEqual({ from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-11-02T00:00:00Z') });
    expect(parseRange('2026-11-01T10:00:00+02:00', '2026-11-02T00:00:00Z')).toEqual({
      from: new Date('2026-11-01T08:00:00Z'),
      to: new Date('2026-11-02T00:00:00Z'),
    });
    expect(parseRange('2026-11-01', '2026-11-01', 'Asia/Tokyo')).toEqual({ from: new Date('2026-10-31T15:00:00Z'), to: new Date('2026-11-01T15:00:00Z') });
    // New York leaves daylight time on 1 November 2026: that day lasts 25 hours.
    expect(parseRange('2026-11-01', '2026-11-01', 'America/New_York')).toEqual({
      from: new Date('2026-11-01T04:00:00Z'),
      to: new Date('2026-11-02T05:00:00Z'),
    });
  });
});
