import { Type } from 'typebox';
import { ANALYTICS_METRICS } from '../../stats/index.ts';
import type { ToolDef } from './types.ts';

const DAY = 86_400_000;
const METRICS = Object.keys(ANALYTICS_METRICS);
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The synced GA4 and Search Console numbers (CONTRACT §10) for the analytics reports
 * (ANALYTICS_REVIEW, SEO_AUDIT, TRAFFIC_STRATEGY): the last `days` complete days against the
 * `days` before them, through stats/query — so the figures are the ones the dashboard shows.
 */
export const analyticsSummary: ToolDef = {
  name: 'analytics_summary',
  description:
    'Website analytics synced from Google (GA4: sessions, users, conversions; Search Console: clicks, impressions, ctr, average position) for the last `days` complete days ' +
    '(default 28) and the same number of days before them: totals per metric for both periods, the change in percent, and the daily values of the recent period. ' +
    '`hasData` false means no Google property or site has been synced yet.',
  input: Type.Object({ days: Type.Optional(Type.Integer({ minimum: 1, maximum: 183 })) }, { additionalProperties: false }),
  available: (ports) => Boolean(ports.stats),
  async execute(ctx, input) {
    const stats = ctx.stats;
    if (!stats) return { error: 'Analytics are not available' };
    const days = Number(input.days ?? 28);
    // Complete days only: today's numbers are still coming in.
    const today = Date.parse(isoDay(ctx.clock.now().getTime()));
    const current = { from: isoDay(today - days * DAY), to: isoDay(today - DAY) };
    const previous = { from: isoDay(today - 2 * days * DAY), to: isoDay(today - (days + 1) * DAY) };
    const query = (range: { from: string; to: string }) => stats.query(ctx.leadScope, { metrics: METRICS, ...range, granularity: 'day' });
    const [now, before] = await Promise.all([query(current), query(previous)]);
    const totals = (answer: typeof now) => Object.fromEntries(answer.series.map((s) => [s.metric, s.total]));
    const cur = totals(now);
    const prev = totals(before);
    const changePct = Object.fromEntries(METRICS.map((m) => [m, prev[m] ? Math.round(((cur[m]! - prev[m]!) / prev[m]!) * 1000) / 10 : null]));
    const daily = now.series[0]!.points.map((p, i) => ({
      date: isoDay(new Date(p.at).getTime()),
      ...Object.fromEntries(now.series.map((s) => [s.metric, s.points[i]!.value])),
    }));
    const hasData = [...now.series, ...before.series].some((s) => s.points.some((p) => p.value !== 0));
    return { days, current: { ...current, totals: cur }, previous: { ...previous, totals: prev }, changePct, daily, hasData };
  },
};
