import { describe, expect, it } from 'vitest';
import { compact, listSearch } from './list';
import { panelPath } from './links';

describe('list search params', () => {
  it('reads page, size, sort and q from a URL, dropping what is unusable and what is the default', () => {
    expect(listSearch({ page: '3', pageSize: '50', sort: '-name', q: 'acme' }, ['name', 'createdAt'])).toEqual({
      page: 3,
      pageSize: 50,
      sort: '-name',
      q: 'acme',
    });
    expect(listSearch({ page: '0', pageSize: '1000', sort: 'password', q: '  ' }, ['name'])).toEqual({
      page: undefined,
      pageSize: undefined,
      sort: undefined,
      q: undefined,
    });
    expect(listSearch({ page: 'x', pageSize: 20 }, [])).toEqual({ page: undefined, pageSize: undefined, sort: undefined, q: undefined });
    expect(listSearch({ page: 2.5 }, [])).toMatchObject({ page: undefined });
  });

  it('keeps only what is set', () => {
    expect(compact({ a: 1, b: undefined, c: '', d: 'x', e: null })).toEqual({ a: 1, d: 'x' });
  });
});

describe('notification links', () => {
  it('lead to the page that shows the thing, from relative and from API paths', () => {
    expect(panelPath('org_1', '/runs/run_9')).toBe('/orgs/org_1/runs/run_9');
    expect(panelPath('org_1', '/approvals/ap_1')).toBe('/orgs/org_1/approvals?approval=ap_1');
    expect(panelPath('org_1', '/api/v1/orgs/org_1/content/post_2')).toBe('/orgs/org_1/content?post=post_2');
    expect(panelPath('org_1', '/api/v1/orgs/org_1/webhook-endpoints/we_3')).toBe('/orgs/org_1/webhooks/we_3');
    expect(panelPath('org_1', '/agent-runs/ar_1')).toBe('/orgs/org_1/agents/runs/ar_1');
    expect(panelPath('org_1', '/usage')).toBe('/orgs/org_1/usage');
    expect(panelPath('org_1', '/reports/r 1')).toBe('/orgs/org_1/reports/r%201');
    expect(panelPath('org_1', '/campaigns/cmp_1')).toBe('/orgs/org_1/campaigns/cmp_1');
    expect(panelPath('org_1', '/api/v1/orgs/org_1/integrations/int_1')).toBe('/orgs/org_1/settings/integrations');
    expect(panelPath('org_1', '/api/v1/orgs/org_1/analytics/rules/arl_1')).toBe('/orgs/org_1/analytics');
    expect(panelPath('org_1', null)).toBeNull();
    expect(panelPath('org_1', '/something-else/1')).toBeNull();
  });
});
