/**
 * The Analytics page's numbers, shaped for its charts and figures (CONTRACT §10): the synced daily
 * rows (`{ date, source, integrationId, metrics }`) into one row per day with a column per metric,
 * and the range's figures (sums for counts; CTR and average position weighted by impressions, as
 * Search Console computes them). Pure, so the component tests pin them.
 */

export type Source = 'ga4' | 'gsc';
export type MetricKind = 'count' | 'ratio' | 'position';

export interface MetricSpec {
  /** The `stats/query` name (and a rule's `metric`). */
  key: string;
  source: Source;
  /** The field of a daily row's `metrics`. */
  field: string;
  label: string;
  kind: MetricKind;
}

export const METRICS = [
  { key: 'ga4.sessions', source: 'ga4', field: 'sessions', label: 'Sessions', kind: 'count' },
  { key: 'ga4.users', source: 'ga4', field: 'users', label: 'Users', kind: 'count' },
  { key: 'ga4.conversions', source: 'ga4', field: 'conversions', label: 'Conversions', kind: 'count' },
  { key: 'gsc.clicks', source: 'gsc', field: 'clicks', label: 'Clicks', kind: 'count' },
  { key: 'gsc.impressions', source: 'gsc', field: 'impressions', label: 'Impressions', kind: 'count' },
  { key: 'gsc.ctr', source: 'gsc', field: 'ctr', label: 'CTR', kind: 'ratio' },
  { key: 'gsc.position', source: 'gsc', field: 'position', label: 'Average position', kind: 'position' },
] as const satisfies readonly MetricSpec[];

export type MetricKey = (typeof METRICS)[number]['key'];
export const SOURCE_LABELS: Record<Source, string> = { ga4: 'Google Analytics 4', gsc: 'Search Console' };

export function metricSpec(key: string): MetricSpec | undefined {
  return METRICS.find((m) => m.key === key);
}

export interface DailyItem {
  date: string;
  source: string;
  integrationId?: string;
  metrics: Record<string, number | undefined>;
}

/** One day: a column per metric; null where the day has no synced row of that metric's source. */
export type DayRow = { date: string; label: string } & Record<MetricKey, number | null>;

function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** "May 4": a day's label on the axis (dates are the property's calendar days, not instants). */
export function dayLabel(date: string, locale?: string): string {
  return new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric', timeZone: 'UTC' }).format(new Date(`${date}T00:00:00Z`));
}

interface Sums {
  counts: Record<string, number>;
  /** Σ position·impressions, to weight the average position. */
  positionWeighted: number;
}

const emptySums = (): Sums => ({ counts: {}, positionWeighted: 0 });
const num = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

function add(sums: Sums, item: DailyItem): void {
  const m = item.metrics;
  for (const spec of METRICS) {
    if (spec.source !== item.source || spec.kind !== 'count') continue;
    sums.counts[spec.key] = (sums.counts[spec.key] ?? 0) + num(m[spec.field]);
  }
  if (item.source === 'gsc') sums.positionWeighted += num(m.position) * num(m.impressions);
}

/** CTR is clicks over impressions and the position is weighted by impressions, as Search Console aggregates them. */
function ratios(sums: Sums): { ctr: number | null; position: number | null } {
  const impressions = sums.counts['gsc.impressions'] ?? 0;
  if (impressions <= 0) return { ctr: 0, position: null };
  return { ctr: (sums.counts['gsc.clicks'] ?? 0) / impressions, position: sums.positionWeighted / impressions };
}

/**
 * Every day of `from`…`to` (both included), in order. Several rows of a source on one day (more than
 * one integration) add up; a day the sync has not reached is null (a gap, not a zero: the service
 * stores a day the provider had nothing for as zeros, so a zero is a real zero).
 */
export function dailyRows(items: readonly DailyItem[], from: string, to: string, locale?: string): DayRow[] {
  const byDay = new Map<string, { ga4?: Sums; gsc?: Sums }>();
  for (const item of items) {
    if (item.source !== 'ga4' && item.source !== 'gsc') continue;
    if (item.date < from || item.date > to) continue;
    const day = byDay.get(item.date) ?? {};
    const sums = (day[item.source] ??= emptySums());
    add(sums, item);
    byDay.set(item.date, day);
  }
  const rows: DayRow[] = [];
  for (let date = from, guard = 0; date <= to && guard < 3700; date = addDays(date, 1), guard++) {
    const day = byDay.get(date);
    const row = { date, label: dayLabel(date, locale) } as DayRow;
    for (const spec of METRICS) {
      const sums = day?.[spec.source];
      if (!sums) {
        row[spec.key] = null;
        continue;
      }
      if (spec.kind === 'count') row[spec.key] = sums.counts[spec.key] ?? 0;
      else {
        const r = ratios(sums);
        row[spec.key] = spec.kind === 'ratio' ? r.ctr : r.position;
      }
    }
    rows.push(row);
  }
  return rows;
}

export interface Figures {
  /** Which sources have any synced row in the range. */
  sources: Source[];
  values: Record<MetricKey, number | null>;
}

/** The range's figures: counts summed over the days, CTR and position weighted by impressions. */
export function figures(items: readonly DailyItem[], from: string, to: string): Figures {
  const sums = emptySums();
  const sources = new Set<Source>();
  for (const item of items) {
    if ((item.source !== 'ga4' && item.source !== 'gsc') || item.date < from || item.date > to) continue;
    sources.add(item.source);
    add(sums, item);
  }
  const r = ratios(sums);
  const values = {} as Record<MetricKey, number | null>;
  for (const spec of METRICS) {
    if (!sources.has(spec.source)) values[spec.key] = null;
    else if (spec.kind === 'count') values[spec.key] = sums.counts[spec.key] ?? 0;
    else values[spec.key] = spec.kind === 'ratio' ? r.ctr : r.position;
  }
  return { sources: (['ga4', 'gsc'] as const).filter((s) => sources.has(s)), values };
}

/** A metric's value as it is read: "1,234", "3.4 %", "7.2"; "—" when there is none. */
export function formatMetric(key: string, value: number | null | undefined, locale?: string): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const kind = metricSpec(key)?.kind ?? 'count';
  if (kind === 'ratio') return `${new Intl.NumberFormat(locale, { maximumFractionDigits: value < 0.1 ? 2 : 1 }).format(value * 100)} %`;
  if (kind === 'position') return new Intl.NumberFormat(locale, { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(value);
  return new Intl.NumberFormat(locale, { maximumFractionDigits: 2 }).format(value);
}

/** Whether a series has something to draw (a chart of only gaps says "nothing synced"). */
export function hasValues(rows: readonly DayRow[], keys: readonly MetricKey[]): boolean {
  return rows.some((r) => keys.some((k) => r[k] !== null));
}

export const RANGES = ['7d', '28d', '90d', '365d'] as const;
export type RangePreset = (typeof RANGES)[number];
export const RANGE_LABELS: Record<RangePreset, string> = { '7d': 'Last 7 days', '28d': 'Last 28 days', '90d': 'Last 90 days', '365d': 'Last 12 months' };
/** The longest range the page asks for (a year and a bit of daily rows). */
export const MAX_DAYS = 400;

/**
 * The days the page shows, both included: the URL's `from`/`to` when they make a range of at most
 * MAX_DAYS, else the preset (28 days by default) ending today.
 */
export function analyticsRange(input: { range?: RangePreset; from?: string; to?: string }, today: string): { from: string; to: string; custom: boolean } {
  if (input.from && input.to && input.from <= input.to && daysBetween(input.from, input.to) <= MAX_DAYS)
    return { from: input.from, to: input.to, custom: true };
  const days = Number((input.range ?? '28d').slice(0, -1));
  return { from: addDays(today, -(days - 1)), to: today, custom: false };
}

export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1;
}
