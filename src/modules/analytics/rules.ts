import { addDays } from './days.ts';
import type { Source } from './google.ts';

/**
 * Threshold rules, the arithmetic (CONTRACT §10). A rule watches one metric — the `stats/query`
 * names — over a window ending on the newest synced day:
 *   above / below   the window's value against the threshold (value > threshold, value < threshold);
 *   pct_change      the window against the window of the same length before it,
 *                   (current − previous) / previous × 100, its absolute value against the threshold
 *                   (|change| ≥ threshold), `direction` up or down; not evaluated while the previous
 *                   window is zero or below `minBaseline` (a jump from 3 to 9 sessions is no news).
 * A window's value sums its days (over every integration the rule covers); `gsc.ctr` is clicks over
 * impressions and `gsc.position` the impression-weighted average position, as Search Console itself
 * aggregates them (and as `stats/query` does).
 */

export const METRICS = {
  'ga4.sessions': { source: 'ga4', field: 'sessions' },
  'ga4.users': { source: 'ga4', field: 'users' },
  'ga4.conversions': { source: 'ga4', field: 'conversions' },
  'gsc.clicks': { source: 'gsc', field: 'clicks' },
  'gsc.impressions': { source: 'gsc', field: 'impressions' },
  'gsc.ctr': { source: 'gsc', field: 'ctr' },
  'gsc.position': { source: 'gsc', field: 'position' },
} as const satisfies Record<string, { source: Source; field: string }>;
export type MetricName = keyof typeof METRICS;
export const METRIC_NAMES = Object.keys(METRICS) as MetricName[];

export const COMPARES = ['above', 'below', 'pct_change'] as const;
export type Compare = (typeof COMPARES)[number];
export const WINDOWS = ['day', '7d', '28d'] as const;
export type Window = (typeof WINDOWS)[number];
export const WINDOW_DAYS: Record<Window, number> = { day: 1, '7d': 7, '28d': 28 };

export interface RuleSpec {
  metric: string;
  compare: string;
  threshold: number;
  window: string;
  minBaseline: number | null;
}

export interface DayRow {
  date: string;
  metrics: Record<string, number>;
}

export type Outcome =
  /** Nothing synced yet for the metric: nothing to compare. */
  | { kind: 'no-data' }
  /** pct_change with a previous window of zero or under minBaseline: not evaluated. */
  | { kind: 'below-baseline'; previous: number }
  | { kind: 'value'; value: number; firing: boolean; direction: 'up' | 'down' };

const round = (v: number) => Math.round(v * 10_000) / 10_000;

/** The metric over the rows of [from, to] (rows may come from several integrations; missing days count as zero). */
export function windowValue(metric: MetricName, rows: DayRow[], from: string, to: string): number {
  const inside = rows.filter((r) => r.date >= from && r.date <= to);
  const sum = (field: string) => inside.reduce((s, r) => s + (Number(r.metrics[field]) || 0), 0);
  if (metric === 'gsc.ctr') {
    const impressions = sum('impressions');
    return impressions > 0 ? sum('clicks') / impressions : 0;
  }
  if (metric === 'gsc.position') {
    const impressions = sum('impressions');
    const weighted = inside.reduce((s, r) => s + (Number(r.metrics.position) || 0) * (Number(r.metrics.impressions) || 0), 0);
    return impressions > 0 ? weighted / impressions : 0;
  }
  return sum(METRICS[metric].field);
}

/** The days a rule reads, ending on the newest synced day: its window and, for pct_change, the one before. */
export function span(rule: RuleSpec, newest: string): { from: string; to: string } {
  const n = WINDOW_DAYS[rule.window as Window] ?? 1;
  return { from: addDays(newest, -(rule.compare === 'pct_change' ? 2 * n : n) + 1), to: newest };
}

export function evaluate(rule: RuleSpec, rows: DayRow[], newest: string | null): Outcome {
  if (!newest) return { kind: 'no-data' };
  const metric = rule.metric as MetricName;
  const n = WINDOW_DAYS[rule.window as Window] ?? 1;
  const current = windowValue(metric, rows, addDays(newest, -n + 1), newest);
  if (rule.compare === 'above') return { kind: 'value', value: round(current), firing: current > rule.threshold, direction: 'up' };
  if (rule.compare === 'below') return { kind: 'value', value: round(current), firing: current < rule.threshold, direction: 'down' };
  const previous = windowValue(metric, rows, addDays(newest, -2 * n + 1), addDays(newest, -n));
  if (previous === 0 || (rule.minBaseline !== null && previous < rule.minBaseline)) return { kind: 'below-baseline', previous: round(previous) };
  const change = ((current - previous) / previous) * 100;
  return { kind: 'value', value: round(change), firing: Math.abs(change) >= rule.threshold, direction: change < 0 ? 'down' : 'up' };
}
