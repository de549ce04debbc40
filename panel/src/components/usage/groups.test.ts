import { describe, expect, it } from 'vitest';
import { groupLabel, lastMonth, sortGroups, thisMonth, type Group } from './groups';

const g = (key: string | null, costUsd: number, runs = 1): Group & { label: string } => ({
  key,
  label: key ?? '∅',
  costUsd,
  runs,
  inputTokens: runs * 10,
  outputTokens: runs * 5,
});

describe('usage groups', () => {
  it('sorts by cost, highest first, by default; by name or number as the URL says', () => {
    const groups = [g('b', 1), g('a', 3), g('c', 2)];
    expect(sortGroups(groups, undefined, 'model').map((x) => x.key)).toEqual(['a', 'c', 'b']);
    expect(sortGroups(groups, 'costUsd', 'model').map((x) => x.key)).toEqual(['b', 'c', 'a']);
    expect(sortGroups(groups, 'key', 'model').map((x) => x.key)).toEqual(['a', 'b', 'c']);
    expect(sortGroups([g('x', 1, 2), g('y', 1, 5)], '-runs', 'model').map((x) => x.key)).toEqual(['y', 'x']);
  });

  it('breaks ties by name so the table does not jump', () => {
    expect(sortGroups([g('b', 1), g('a', 1)], '-costUsd', 'model').map((x) => x.key)).toEqual(['a', 'b']);
  });

  it('names ids and empty keys', () => {
    const names = { workflows: new Map([['wf_1', 'Welcome']]), projects: new Map([['prj_1', 'Default']]) };
    expect(groupLabel('workflow', 'wf_1', names)).toBe('Welcome');
    expect(groupLabel('workflow', null, names)).toBe('Not in a workflow');
    expect(groupLabel('project', 'prj_1', names)).toBe('Default');
    expect(groupLabel('agentType', 'MARKET_ANALYST')).toBe('Market analyst');
    expect(groupLabel('model', 'offline')).toBe('offline');
  });

  it('knows this month and the last one in UTC', () => {
    expect(thisMonth(new Date('2026-03-10T23:00:00Z'))).toEqual({ from: '2026-03-01', to: '2026-03-10' });
    expect(lastMonth(new Date('2026-01-10T00:00:00Z'))).toEqual({ from: '2025-12-01', to: '2025-12-31' });
  });
});
