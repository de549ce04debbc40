/**
 * Threshold rules (CONTRACT §10): `{ name, integrationId?, metric, compare: above|below|pct_change,
 * threshold, window: day|7d|28d, minBaseline? }`. The form's fields as strings, their check before
 * sending (the API checks again and its 400 is shown), the body, and the rule in words. Pure.
 */
import type { Schemas } from '../../api/client';
import { formatMetric, metricSpec } from './data';

type Rule = Schemas['AnalyticsRule'];
export type Compare = Rule['compare'];
export type Window = Rule['window'];
/** The metrics a rule can watch: the `stats/query` names of the synced sources. */
export type RuleMetric = Rule['metric'];

/** Each list names every value of the API's type once (a value added there fails the type check here). */
const every = <T extends string>(values: Record<T, true>) => Object.keys(values) as T[];
export const COMPARES = every<Compare>({ above: true, below: true, pct_change: true });
export const WINDOWS = every<Window>({ day: true, '7d': true, '28d': true });
export const RULE_METRICS = every<RuleMetric>({
  'ga4.sessions': true,
  'ga4.users': true,
  'ga4.conversions': true,
  'gsc.clicks': true,
  'gsc.impressions': true,
  'gsc.ctr': true,
  'gsc.position': true,
});

export const COMPARE_LABELS: Record<Compare, string> = { above: 'Goes above', below: 'Falls below', pct_change: 'Changes by (%)' };
export const WINDOW_LABELS: Record<Window, string> = { day: 'One day', '7d': '7 days', '28d': '28 days' };

export interface RuleFields {
  name: string;
  /** '' for every Google integration of the organization. */
  integrationId: string;
  metric: RuleMetric;
  compare: Compare;
  threshold: string;
  window: Window;
  minBaseline: string;
}

/** A stored rule, or a body about to be sent (what the sentence and the form need of either). */
export type RuleLike = Pick<Rule, 'name' | 'metric' | 'compare' | 'threshold' | 'window'> & Partial<Pick<Rule, 'integrationId' | 'minBaseline'>>;

export const NAME_MAX = 200;
/** The largest number a rule takes (the API refuses more). */
const LIMIT = 1e12;

export function emptyRule(integrationId = ''): RuleFields {
  return { name: '', integrationId, metric: 'ga4.sessions', compare: 'below', threshold: '', window: '7d', minBaseline: '' };
}

/**
 * The API keeps CTR as a fraction (0.034); the form reads and writes it in percent (3.4), as it is
 * shown everywhere else. A percentage change is a percent for every metric.
 */
function scaleOf(metric: string, compare: string, field: 'threshold' | 'minBaseline'): number {
  return metric === 'gsc.ctr' && (field === 'minBaseline' || compare !== 'pct_change') ? 100 : 1;
}

const roundTrip = (value: number) => Number(value.toPrecision(12));

export function fieldsOfRule(rule: RuleLike): RuleFields {
  const threshold = roundTrip(rule.threshold * scaleOf(rule.metric, rule.compare, 'threshold'));
  const baseline =
    rule.minBaseline === null || rule.minBaseline === undefined ? null : roundTrip(rule.minBaseline * scaleOf(rule.metric, rule.compare, 'minBaseline'));
  return {
    name: rule.name,
    integrationId: rule.integrationId ?? '',
    metric: rule.metric,
    compare: rule.compare,
    threshold: String(threshold),
    window: rule.window,
    minBaseline: baseline === null ? '' : String(baseline),
  };
}

function number(text: string): number | null {
  const cleaned = text.trim().replace(/[\s,_]/g, '');
  if (cleaned === '') return null;
  const n = Number(cleaned);
  return Number.isFinite(n) ? n : NaN;
}

/** What is wrong with the fields, by field (empty when they can be sent). */
export function ruleErrors(f: RuleFields): Partial<Record<keyof RuleFields, string>> {
  const errors: Partial<Record<keyof RuleFields, string>> = {};
  if (f.name.trim() === '') errors.name = 'Give the rule a name.';
  else if (f.name.trim().length > NAME_MAX) errors.name = `At most ${NAME_MAX} characters.`;
  const threshold = number(f.threshold);
  if (threshold === null) errors.threshold = f.compare === 'pct_change' ? 'Say by how many percent.' : 'Give the value to compare with.';
  else if (Number.isNaN(threshold)) errors.threshold = 'A number, such as 100 or 2.5.';
  else if (Math.abs(threshold) > LIMIT) errors.threshold = 'That number is too large.';
  else if (f.compare === 'pct_change' && threshold <= 0) errors.threshold = 'A change of more than 0 %, such as 20 (up or down).';
  else if (f.compare !== 'pct_change' && threshold < 0) errors.threshold = 'The metrics are never negative: use 0 or more.';
  else if (f.compare !== 'pct_change' && f.metric === 'gsc.ctr' && threshold > 100) errors.threshold = 'CTR is a percentage: at most 100.';
  if (f.compare === 'pct_change') {
    const baseline = number(f.minBaseline);
    if (baseline !== null && (Number.isNaN(baseline) || baseline < 0 || baseline > LIMIT)) errors.minBaseline = 'A number of 0 or more, or leave it empty.';
  }
  return errors;
}

/** The body of `POST …/analytics/rules` (and of PATCH: the same fields; a cleared baseline is null). */
export function ruleBody(f: RuleFields): Required<RuleLike> {
  const baseline = f.compare === 'pct_change' ? number(f.minBaseline) : null;
  const threshold = number(f.threshold);
  return {
    name: f.name.trim(),
    integrationId: f.integrationId || null,
    metric: f.metric,
    compare: f.compare,
    threshold: threshold === null || Number.isNaN(threshold) ? 0 : roundTrip(threshold / scaleOf(f.metric, f.compare, 'threshold')),
    window: f.window,
    minBaseline: baseline === null || Number.isNaN(baseline) ? null : roundTrip(baseline / scaleOf(f.metric, f.compare, 'minBaseline')),
  };
}

const WINDOW_WORDS: Record<string, string> = { day: 'on the latest day', '7d': 'over the last 7 days', '28d': 'over the last 28 days' };
const PREVIOUS_WORDS: Record<string, string> = { day: 'the day before', '7d': 'the 7 days before', '28d': 'the 28 days before' };

/**
 * The rule in words: "Sessions below 500 over the last 7 days", "Clicks: a change of 20 % or more
 * over the last 7 days against the 7 days before (when the earlier figure is at least 100)".
 */
export function describeRule(rule: RuleLike, locale?: string): string {
  const label = metricSpec(rule.metric)?.label ?? rule.metric;
  const windowWords = WINDOW_WORDS[rule.window] ?? rule.window;
  if (rule.compare === 'pct_change') {
    const pct = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 }).format(rule.threshold);
    const baseline =
      rule.minBaseline !== null && rule.minBaseline !== undefined && rule.minBaseline > 0
        ? ` (when the earlier figure is at least ${formatMetric(rule.metric, rule.minBaseline, locale)})`
        : '';
    return `${label}: a change of ${pct} % or more ${windowWords} against ${PREVIOUS_WORDS[rule.window] ?? 'the period before'}${baseline}`;
  }
  return `${label} ${rule.compare === 'above' ? 'above' : 'below'} ${formatMetric(rule.metric, rule.threshold, locale)} ${windowWords}`;
}
