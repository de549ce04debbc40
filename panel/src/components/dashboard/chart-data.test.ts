import { describe, expect, it } from 'vitest';
import { autoGranularity, budgetShare, bucketLabel, chartRows, hasData, resolveRange, totals, type Series } from './chart-data';

const opts = { locale: 'en-US', timeZone: 'UTC' };

describe('the dashboard range', () => {
  it('ends a preset today, both days included', () => {
    expect(resolveRange({ range: '7d' }, '2026-03-10')).toEqual({ from: '2026-03-04', to: '2026-03-10', granularity: 'day' });
    expect(resolveRange({}, '2026-03-10')).toEqual({ from: '2026-02-09', to: '2026-03-10', granularity: 'day' });
    expect(resolveRange({ range: '90d' }, '2026-03-10')).toEqual({ from: '2025-12-11', to: '2026-03-10', granularity: 'week' });
  });

  it('takes twelve whole months by month, across a year boundary', () => {
    expect(resolveRange({ range: '12m' }, '2026-03-10')).toEqual({ from: '2025-04-01', to: '2026-03-10', granularity: 'month' });
  });

  it('lets explicit dates win over the preset and a chosen granularity win over the automatic one', () => {
    expect(resolveRange({ range: '7d', from: '2026-01-01', to: '2026-01-31' }, '2026-03-10')).toEqual({
      from: '2026-01-01',
      to: '2026-01-31',
      granularity: 'day',
    });
    expect(resolveRange({ from: '2026-01-01', to: '2026-01-31', granularity: 'week' }, '2026-03-10').granularity).toBe('week');
    // Reversed dates are not a range: the preset stands.
    expect(resolveRange({ from: '2026-02-01', to: '2026-01-01' }, '2026-03-10').from).toBe('2026-02-09');
  });

  it('keeps buckets readable as the range grows', () => {
    expect(autoGranularity('2026-01-01', '2026-03-03')).toBe('day');
    expect(autoGranularity('2026-01-01', '2026-03-04')).toBe('week');
    expect(autoGranularity('2024-01-01', '2026-01-01')).toBe('month');
  });
});

describe('chart rows', () => {
  const series: Series[] = [
    {
      metric: 'leads.created',
      total: 5,
      points: [
        { at: '2026-03-02T00:00:00.000Z', value: 2 },
        { at: '2026-03-01T00:00:00.000Z', value: 3 },
      ],
    },
    { metric: 'leads.qualified', total: 1, points: [{ at: '2026-03-02T00:00:00.000Z', value: 1 }] },
  ];

  it('puts every metric of a bucket on one row, in time order, with 0 where a series lacks the bucket', () => {
    expect(chartRows(series, 'day', opts)).toEqual([
      { at: '2026-03-01T00:00:00.000Z', label: 'Mar 1', 'leads.created': 3, 'leads.qualified': 0 },
      { at: '2026-03-02T00:00:00.000Z', label: 'Mar 2', 'leads.created': 2, 'leads.qualified': 1 },
    ]);
  });

  it('merges the same instant written with an offset', () => {
    const rows = chartRows(
      [
        { metric: 'a', total: 1, points: [{ at: '2026-03-01T01:00:00+01:00', value: 1 }] },
        { metric: 'b', total: 2, points: [{ at: '2026-03-01T00:00:00.000Z', value: 2 }] },
      ],
      'day',
      opts,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ a: 1, b: 2 });
  });

  it('labels buckets by their size', () => {
    expect(bucketLabel('2026-03-01T00:00:00.000Z', 'month', opts)).toBe('Mar 2026');
    expect(bucketLabel('2026-03-01T14:00:00.000Z', 'hour', opts)).toBe('14:00');
    expect(bucketLabel('2026-03-02T00:00:00.000Z', 'week', opts)).toBe('Mar 2');
  });

  it('totals each metric, 0 for one the answer lacks', () => {
    expect(totals(series, ['leads.created', 'runs.failed'])).toEqual({ 'leads.created': 5, 'runs.failed': 0 });
  });

  it('tells a chart of zeros from one with data', () => {
    const rows = chartRows(series, 'day', opts);
    expect(hasData(rows, ['leads.qualified'])).toBe(true);
    expect(hasData(rows, ['posts.published'])).toBe(false);
    expect(hasData([], ['leads.created'])).toBe(false);
  });
});

describe('the budget share', () => {
  it('is nothing without a limit', () => {
    expect(budgetShare(3, null)).toEqual({ pct: null, width: 0, tone: 'none' });
  });

  it('warns from 80 % and is over past the limit, the bar never wider than full', () => {
    expect(budgetShare(5, 10)).toEqual({ pct: 50, width: 50, tone: 'ok' });
    expect(budgetShare(8, 10)).toEqual({ pct: 80, width: 80, tone: 'warning' });
    expect(budgetShare(12.5, 10)).toEqual({ pct: 125, width: 100, tone: 'over' });
  });

  it('counts a zero limit as the service does: spent at the first cent', () => {
    expect(budgetShare(0, 0)).toEqual({ pct: 0, width: 0, tone: 'ok' });
    expect(budgetShare(0.01, 0)).toEqual({ pct: 100, width: 100, tone: 'over' });
  });
});
