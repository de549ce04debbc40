import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type OrgFixture, type TestApp } from '../../../test/harness.ts';
import { eventually } from '../../../test/helpers.ts';
import { newId } from '../../platform/ids.ts';
import { integrations } from '../integrations/tables.ts';
import { analyticsDaily } from '../analytics/tables.ts';

/**
 * The analytics reports (CONTRACT §10: ANALYTICS_REVIEW, SEO_AUDIT, TRAFFIC_STRATEGY) written by the
 * offline model through the analytics_summary tool from synced days, with a fixed "today".
 */
let t: TestApp;
const clock = {
  at: Date.parse('2032-04-01T12:00:00Z'),
  now() {
    return new Date(this.at);
  },
};

beforeAll(async () => {
  t = await buildTestApp({ clock });
});
afterAll(async () => {
  await t?.close();
});

const call = (method: 'GET' | 'POST', url: string, payload?: object, org: OrgFixture = t.orgA) =>
  t.call({ method, url: `/api/v1/orgs/${org.orgId}${url}`, auth: { apiKey: org.apiKey }, ...(payload ? { payload } : {}) });

/** Synced days of one Google integration: GA4 and Search Console rows for each date. */
async function synced(org: OrgFixture, days: { date: string; sessions: number; clicks: number; impressions: number; position: number }[]) {
  const id = newId('integration');
  await t.database.db
    .insert(integrations)
    .values({ id, orgId: org.orgId, projectId: null, provider: 'google', name: 'Google', credentialsSealed: 'sealed', authType: 'oauth' });
  await t.database.db.insert(analyticsDaily).values(
    days.flatMap((d): (typeof analyticsDaily.$inferInsert)[] => [
      {
        integrationId: id,
        orgId: org.orgId,
        source: 'ga4',
        date: d.date,
        metrics: { sessions: d.sessions, users: Math.round(d.sessions * 0.8), conversions: 1 },
      },
      {
        integrationId: id,
        orgId: org.orgId,
        source: 'gsc',
        date: d.date,
        metrics: { clicks: d.clicks, impressions: d.impressions, ctr: d.clicks / d.impressions, position: d.position },
      },
    ]),
  );
}

async function report(type: string, reportType: string, org: OrgFixture = t.orgA) {
  const started = await call('POST', '/agents/run', { type, task: 'How is the website doing?', input: { reportType, days: 7 } }, org);
  expect(started.statusCode, started.body).toBe(202);
  const done = await eventually(async () => {
    const r = (await call('GET', `/agent-runs/${started.json().id}`, undefined, org)).json();
    return ['succeeded', 'failed', 'canceled'].includes(r.status) ? r : undefined;
  });
  expect(done.status, done.error).toBe('succeeded');
  return (await call('GET', `/reports/${done.reportId}`, undefined, org)).json();
}

const date = (day: number) => `2032-03-${String(day).padStart(2, '0')}`;

describe('analytics reports', () => {
  it('with nothing synced, say how to connect Google and still recommend a step that applies', async () => {
    const empty = await report('REPORT_WRITER', 'ANALYTICS_REVIEW', t.orgB);
    expect(empty.metrics).toMatchObject({ 'ga4.sessions': 0, 'gsc.clicks': 0, sessionsChangePct: null });
    expect(empty.summary).toContain('connect Google under Settings → Integrations');
    expect(empty.recommendations.length).toBeGreaterThan(0);
    const applied = await call('POST', `/reports/${empty.id}/apply-recommendation`, { index: empty.recommendations[0].index }, t.orgB);
    expect(applied.statusCode, applied.body).toBe(200);
  });

  it('quote the synced numbers of the last 7 complete days against the 7 before (another organization not counted), and recommend actions that apply', async () => {
    // 18–24 March: 100 sessions and 20 clicks a day; 25–31 March: 80 and 10; 1 April (today) is not complete.
    await synced(t.orgA, [
      ...Array.from({ length: 7 }, (_, i) => ({ date: date(18 + i), sessions: 100, clicks: 20, impressions: 1000, position: 12 })),
      ...Array.from({ length: 7 }, (_, i) => ({ date: date(25 + i), sessions: 80, clicks: 10, impressions: 1000, position: 12 })),
      { date: '2032-04-01', sessions: 5000, clicks: 5000, impressions: 5000, position: 1 },
    ]);
    await synced(t.orgB, [{ date: date(28), sessions: 99_999, clicks: 99_999, impressions: 99_999, position: 1 }]);

    const review = await report('REPORT_WRITER', 'ANALYTICS_REVIEW');
    expect(review).toMatchObject({
      type: 'ANALYTICS_REVIEW',
      metrics: { 'ga4.sessions': 560, 'ga4.users': 448, 'ga4.conversions': 7, 'gsc.clicks': 70, sessionsChangePct: -20, clicksChangePct: -50 },
    });
    expect(review.summary).toContain('560 sessions (-20 %)');
    expect(review.body).toContain('2032-03-25 – 2032-03-31');

    const seo = await report('MARKET_ANALYST', 'SEO_AUDIT');
    expect(seo).toMatchObject({ type: 'SEO_AUDIT', metrics: { 'gsc.clicks': 70, 'gsc.impressions': 7000, 'gsc.ctr': 0.01, 'gsc.position': 12 } });
    expect(seo.summary).toContain('click-through rate 1 %');
    const titles = seo.recommendations.map((r: { title: string }) => r.title);
    expect(titles).toEqual(expect.arrayContaining(['Win the lost traffic back with new content', 'Raise the click-through rate from search']));

    const strategy = await report('REPORT_WRITER', 'TRAFFIC_STRATEGY');
    expect(strategy.type).toBe('TRAFFIC_STRATEGY');
    const plan = strategy.recommendations.find((r: { title: string }) => r.title === 'Keep a steady publishing rhythm');
    const applied = await call('POST', `/reports/${strategy.id}/apply-recommendation`, { index: plan.index });
    expect(applied.statusCode, applied.body).toBe(200);
    const runs = (await call('GET', '/agent-runs?type=CONTENT_WRITER')).json();
    expect(runs.items.length).toBe(1);
  });
});
