/**
 * The dashboard's numbers, shaped for the charts: the range a preset (or the URL's dates) stands
 * for, the `stats/query` series merged into one row per bucket, and the budget's share. Pure, so
 * the component tests pin them.
 */

export type Granularity = 'hour' | 'day' | 'week' | 'month';
export const GRANULARITIES: readonly Granularity[] = ['day', 'week', 'month'];

export const RANGE_PRESETS = ['7d', '30d', '90d', '12m'] as const;
export type RangePreset = (typeof RANGE_PRESETS)[number];
export const RANGE_LABELS: Record<RangePreset, string> = { '7d': 'Last 7 days', '30d': 'Last 30 days', '90d': 'Last 90 days', '12m': 'Last 12 months' };

/** What the dashboard charts, in the order the API is asked. */
export const DASHBOARD_METRICS = ['leads.created', 'leads.qualified', 'runs.succeeded', 'runs.failed', 'posts.published', 'usage.costUsd'] as const;
export type DashboardMetric = (typeof DASHBOARD_METRICS)[number];

export interface Range {
  from: string;
  to: string;
  granularity: Granularity;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A calendar date (YYYY-MM-DD) in the browser's time zone, or in `timeZone`. */
export function localDate(at: Date, timeZone?: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1;
}

export function isDate(value: unknown): value is string {
  return typeof value === 'string' && DATE.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`));
}

/** The bucket size that keeps a range readable: days up to two months, weeks up to a year, then months. */
export function autoGranularity(from: string, to: string): Granularity {
  const days = daysBetween(from, to);
  return days <= 62 ? 'day' : days <= 366 ? 'week' : 'month';
}

/**
 * The dates a range covers (both included, as the API reads dates): a preset ends today; explicit
 * `from`/`to` (the URL's) win over the preset; `granularity` overrides the automatic choice.
 */
export function resolveRange(input: { range?: RangePreset; from?: string; to?: string; granularity?: Granularity }, today: string): Range {
  let from: string;
  let to: string;
  if (input.from && input.to && input.from <= input.to) {
    from = input.from;
    to = input.to;
  } else {
    to = today;
    const preset = input.range ?? '30d';
    if (preset === '12m') {
      const [y, m] = today.split('-').map(Number) as [number, number];
      const start = new Date(Date.UTC(y, m - 1 - 11, 1));
      from = start.toISOString().slice(0, 10);
    } else {
      from = addDays(today, -(Number(preset.slice(0, -1)) - 1));
    }
  }
  const auto = input.range === '12m' && !input.from ? 'month' : autoGranularity(from, to);
  return { from, to, granularity: input.granularity ?? auto };
}

/** A bucket's label on the axis: "Mar 5" for days and weeks, "Mar 2026" for months, "14:00" for hours. */
export function bucketLabel(at: string, granularity: Granularity, options: { locale?: string; timeZone?: string } = {}): string {
  const format: Intl.DateTimeFormatOptions =
    granularity === 'month'
      ? { month: 'short', year: 'numeric' }
      : granularity === 'hour'
        ? { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }
        : { month: 'short', day: 'numeric' };
  return new Intl.DateTimeFormat(options.locale, { ...format, timeZone: options.timeZone }).format(new Date(at));
}

export interface Series {
  metric: string;
  total: number;
  points: { at: string; value: number }[];
}

export type ChartRow = { at: string; label: string } & Record<string, number | string>;

/**
 * One row per bucket with a column per metric, in time order. Buckets one series lacks count 0
 * (the API sends every bucket, but a chart must not draw a gap if one did not).
 */
export function chartRows(series: readonly Series[], granularity: Granularity, options: { locale?: string; timeZone?: string } = {}): ChartRow[] {
  const byAt = new Map<string, ChartRow>();
  for (const s of series) {
    for (const p of s.points) {
      const key = new Date(p.at).toISOString();
      let row = byAt.get(key);
      if (!row) {
        row = { at: key, label: bucketLabel(key, granularity, options) } as ChartRow;
        byAt.set(key, row);
      }
      row[s.metric] = (typeof row[s.metric] === 'number' ? (row[s.metric] as number) : 0) + p.value;
    }
  }
  const rows = [...byAt.values()].sort((a, b) => a.at.localeCompare(b.at));
  for (const row of rows) for (const s of series) if (typeof row[s.metric] !== 'number') row[s.metric] = 0;
  return rows;
}

/** Each metric's total over the range (0 for a metric the answer lacks). */
export function totals(series: readonly Series[], metrics: readonly string[]): Record<string, number> {
  return Object.fromEntries(metrics.map((m) => [m, series.find((s) => s.metric === m)?.total ?? 0]));
}

/** Whether any of the metrics has a non-zero point: a chart of only zeros says "nothing yet". */
export function hasData(rows: readonly ChartRow[], metrics: readonly string[]): boolean {
  return rows.some((r) => metrics.some((m) => typeof r[m] === 'number' && (r[m] as number) !== 0));
}

export interface BudgetShare {
  /** Percent of the limit spent (may pass 100), null without a limit. */
  pct: number | null;
  /** The bar's width, 0–100. */
  width: number;
  tone: 'none' | 'ok' | 'warning' | 'over';
}

/**
 * This month's spend against the monthly limit, as the service counts it (a zero limit is spent at
 * the first cent): a warning from 80 % (when budget.warning fires), over past 100 %.
 */
export function budgetShare(usedUsd: number, limitUsd: number | null | undefined): BudgetShare {
  if (limitUsd === null || limitUsd === undefined) return { pct: null, width: 0, tone: 'none' };
  const pct = limitUsd <= 0 ? (usedUsd > 0 ? 100 : 0) : Math.round((usedUsd / limitUsd) * 1000) / 10;
  const tone = usedUsd > limitUsd || (limitUsd > 0 && pct >= 100) ? 'over' : pct >= 80 ? 'warning' : 'ok';
  return { pct, width: Math.min(100, Math.max(0, pct)), tone };
}
