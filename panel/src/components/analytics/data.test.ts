import { describe, expect, it } from 'vitest';
import { analyticsRange, dailyRows, figures, formatMetric, hasValues, type DailyItem } from './data';
import { describeRule, emptyRule, fieldsOfRule, ruleBody, ruleErrors, type RuleLike } from './rules';

const ga4 = (date: string, sessions: number, users: number, conversions: number, integrationId = 'int_1'): DailyItem => ({
  date,
  source: 'ga4',
  integrationId,
  metrics: { sessions, users, conversions },
});
const gsc = (date: string, clicks: number, impressions: number, ctr: number, position: number, integrationId = 'int_1'): DailyItem => ({
  date,
  source: 'gsc',
  integrationId,
  metrics: { clicks, impressions, ctr, position },
});

describe('the daily series', () => {
  it('has every day of the range in order; a day not synced is a gap (null), a synced zero stays 0', () => {
    const rows = dailyRows([ga4('2026-03-03', 0, 0, 0), ga4('2026-03-01', 120, 90, 4)], '2026-03-01', '2026-03-04', 'en-US');
    expect(rows.map((r) => [r.date, r.label, r['ga4.sessions']])).toEqual([
      ['2026-03-01', 'Mar 1', 120],
      ['2026-03-02', 'Mar 2', null],
      ['2026-03-03', 'Mar 3', 0],
      ['2026-03-04', 'Mar 4', null],
    ]);
    // Search Console has no row at all: its columns are gaps, and "nothing to draw".
    expect(rows.every((r) => r['gsc.clicks'] === null && r['gsc.position'] === null)).toBe(true);
    expect(hasValues(rows, ['gsc.clicks', 'gsc.impressions'])).toBe(false);
    expect(hasValues(rows, ['ga4.sessions'])).toBe(true);
  });

  it('adds up two integrations on a day, with CTR as clicks over impressions and the position weighted by impressions', () => {
    const [day] = dailyRows(
      [gsc('2026-03-01', 10, 100, 0.1, 2, 'a'), gsc('2026-03-01', 30, 300, 0.1, 10, 'b'), ga4('2026-03-01', 5, 4, 1, 'a'), ga4('2026-03-01', 7, 6, 0, 'b')],
      '2026-03-01',
      '2026-03-01',
    );
    expect(day).toMatchObject({
      'gsc.clicks': 40,
      'gsc.impressions': 400,
      'gsc.ctr': 0.1,
      'gsc.position': 8,
      'ga4.sessions': 12,
      'ga4.users': 10,
      'ga4.conversions': 1,
    });
  });

  it('leaves out rows outside the range and sources it does not know', () => {
    const rows = dailyRows([ga4('2026-02-28', 999, 1, 1), { date: '2026-03-01', source: 'matomo', metrics: { visits: 3 } }], '2026-03-01', '2026-03-01');
    expect(rows[0]!['ga4.sessions']).toBeNull();
  });
});

describe("the range's figures", () => {
  it('sum the counts and weight CTR and position by impressions; a source without rows has no figures', () => {
    const items = [
      gsc('2026-03-01', 10, 1000, 0.01, 4),
      gsc('2026-03-02', 30, 1000, 0.03, 6),
      ga4('2026-03-01', 1200, 800, 12),
      ga4('2026-03-02', 1300, 850, 9),
    ];
    const f = figures(items, '2026-03-01', '2026-03-02');
    expect(f.sources).toEqual(['ga4', 'gsc']);
    expect(f.values).toMatchObject({
      'ga4.sessions': 2500,
      'ga4.users': 1650,
      'ga4.conversions': 21,
      'gsc.clicks': 40,
      'gsc.impressions': 2000,
      'gsc.ctr': 0.02,
      'gsc.position': 5,
    });
    const onlyGa4 = figures(
      items.filter((i) => i.source === 'ga4'),
      '2026-03-01',
      '2026-03-02',
    );
    expect(onlyGa4.sources).toEqual(['ga4']);
    expect(onlyGa4.values['gsc.clicks']).toBeNull();
    // A site with no impressions at all: CTR 0, no position.
    expect(figures([gsc('2026-03-01', 0, 0, 0, 0)], '2026-03-01', '2026-03-01').values).toMatchObject({ 'gsc.ctr': 0, 'gsc.position': null });
  });

  it('read as people read them: thousands separated, CTR in percent, position with one decimal', () => {
    expect(formatMetric('ga4.sessions', 12345, 'en-US')).toBe('12,345');
    expect(formatMetric('gsc.ctr', 0.0345, 'en-US')).toBe('3.45 %');
    expect(formatMetric('gsc.ctr', 0.125, 'en-US')).toBe('12.5 %');
    expect(formatMetric('gsc.position', 7, 'en-US')).toBe('7.0');
    expect(formatMetric('gsc.position', null)).toBe('—');
  });

  it("cover the URL's dates when they make a range, else the preset ending today (28 days by default)", () => {
    expect(analyticsRange({}, '2026-03-28')).toEqual({ from: '2026-03-01', to: '2026-03-28', custom: false });
    expect(analyticsRange({ range: '7d' }, '2026-03-28')).toEqual({ from: '2026-03-22', to: '2026-03-28', custom: false });
    expect(analyticsRange({ range: '7d', from: '2026-01-01', to: '2026-01-31' }, '2026-03-28')).toEqual({ from: '2026-01-01', to: '2026-01-31', custom: true });
    // Backwards, or longer than the page shows: the preset.
    expect(analyticsRange({ from: '2026-02-01', to: '2026-01-01' }, '2026-03-28').custom).toBe(false);
    expect(analyticsRange({ from: '2020-01-01', to: '2026-01-01' }, '2026-03-28').custom).toBe(false);
  });
});

describe('the rule form', () => {
  it('asks for a name and a number, a positive percentage for a change, and a baseline of 0 or more', () => {
    expect(ruleErrors(emptyRule())).toEqual({ name: 'Give the rule a name.', threshold: 'Give the value to compare with.' });
    const base = { ...emptyRule(), name: 'Traffic drop' };
    expect(ruleErrors({ ...base, threshold: 'lots' })).toEqual({ threshold: 'A number, such as 100 or 2.5.' });
    expect(ruleErrors({ ...base, threshold: '-5' })).toEqual({ threshold: 'The metrics are never negative: use 0 or more.' });
    expect(ruleErrors({ ...base, threshold: '1,500' })).toEqual({});
    expect(ruleErrors({ ...base, compare: 'pct_change', threshold: '0' })).toEqual({ threshold: 'A change of more than 0 %, such as 20 (up or down).' });
    expect(ruleErrors({ ...base, compare: 'pct_change', threshold: '20', minBaseline: '-1' })).toEqual({
      minBaseline: 'A number of 0 or more, or leave it empty.',
    });
    // A baseline only counts for a change: left over from an earlier choice, it is not checked.
    expect(ruleErrors({ ...base, compare: 'above', threshold: '20', minBaseline: 'x' })).toEqual({});
    expect(ruleErrors({ ...base, metric: 'gsc.ctr', compare: 'above', threshold: '120' })).toEqual({ threshold: 'CTR is a percentage: at most 100.' });
    expect(ruleErrors({ ...base, name: 'x'.repeat(201), threshold: '1' })).toEqual({ name: 'At most 200 characters.' });
  });

  it('sends the minimum baseline only with a change, all accounts as null, and CTR as the fraction the API keeps', () => {
    const base = { ...emptyRule(), name: ' Traffic drop ', threshold: '1,500', minBaseline: '100' };
    expect(ruleBody(base)).toEqual({
      name: 'Traffic drop',
      integrationId: null,
      metric: 'ga4.sessions',
      compare: 'below',
      threshold: 1500,
      window: '7d',
      minBaseline: null,
    });
    expect(ruleBody({ ...base, compare: 'pct_change', threshold: '25', integrationId: 'int_1' })).toMatchObject({
      compare: 'pct_change',
      threshold: 25,
      minBaseline: 100,
      integrationId: 'int_1',
    });
    expect(ruleBody({ ...base, compare: 'pct_change', threshold: '25', minBaseline: '' }).minBaseline).toBeNull();
    expect(ruleBody({ ...base, metric: 'gsc.ctr', compare: 'below', threshold: '2.5' }).threshold).toBe(0.025);
    // A change of CTR is a percentage of its own: no scaling.
    expect(ruleBody({ ...base, metric: 'gsc.ctr', compare: 'pct_change', threshold: '30', minBaseline: '1' })).toMatchObject({
      threshold: 30,
      minBaseline: 0.01,
    });
  });

  it('reads a stored rule back into the same fields (a round trip changes nothing)', () => {
    const stored: RuleLike = { name: 'CTR low', integrationId: null, metric: 'gsc.ctr', compare: 'below', threshold: 0.025, window: '28d', minBaseline: null };
    const fields = fieldsOfRule(stored);
    expect(fields).toEqual({ name: 'CTR low', integrationId: '', metric: 'gsc.ctr', compare: 'below', threshold: '2.5', window: '28d', minBaseline: '' });
    expect(ruleBody(fields)).toEqual(stored);
  });

  it('says the rule in words', () => {
    expect(describeRule({ name: 'a', metric: 'ga4.sessions', compare: 'below', threshold: 500, window: '7d' }, 'en-US')).toBe(
      'Sessions below 500 over the last 7 days',
    );
    expect(describeRule({ name: 'a', metric: 'gsc.ctr', compare: 'above', threshold: 0.05, window: 'day' }, 'en-US')).toBe('CTR above 5 % on the latest day');
    expect(describeRule({ name: 'a', metric: 'gsc.clicks', compare: 'pct_change', threshold: 20, window: '28d', minBaseline: 1000 }, 'en-US')).toBe(
      'Clicks: a change of 20 % or more over the last 28 days against the 28 days before (when the earlier figure is at least 1,000)',
    );
  });
});
