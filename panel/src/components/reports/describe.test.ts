import { describe, expect, it } from 'vitest';
import { describeAction, describeResult, metricLabel, metricValue, reportTypeLabel } from './describe';
import { blocks } from './markdown';

describe('recommendations in words', () => {
  it('says what an action will do', () => {
    expect(describeAction({ type: 'tag_leads', params: { leadIds: ['lead_1', 'lead_2'], tags: ['campaign-fair'] } })).toBe(
      'Adds the tag campaign-fair to 2 leads.',
    );
    expect(describeAction({ type: 'set_lead_status', params: { leadIds: ['lead_1'], status: 'QUALIFIED' } })).toBe('Sets 1 lead to QUALIFIED.');
    expect(describeAction({ type: 'run_agent', params: { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads' } })).toBe(
      'Runs the lead qualifier agent: “Qualify the new leads”.',
    );
  });

  it('says what applying did and where to see it', () => {
    expect(describeResult('org_1', { type: 'tag_leads', params: { tags: ['a', 'b'] } }, { action: 'tag', matched: 3, updated: 2 })).toEqual({
      text: '2 of 3 leads updated.',
      href: '/orgs/org_1/leads?tags=a%2Cb',
      linkLabel: 'See the leads',
    });
    expect(describeResult('org_1', { type: 'run_agent' }, { id: 'arun_1', status: 'QUEUED' })).toEqual({
      text: 'Agent run started (QUEUED).',
      href: '/orgs/org_1/agents/runs/arun_1',
      linkLabel: 'Watch the agent run',
    });
    expect(describeResult('org_1', { type: 'use_template' }, { id: 'wf_1', name: 'Capture leads' }).href).toBe('/orgs/org_1/workflows/wf_1');
    expect(describeResult('org_1', { type: 'create_draft' }, { id: 'post_1' }).href).toBe('/orgs/org_1/content?post=post_1');
    expect(describeResult('org_1', { type: 'start_workflow' }, { id: 'run_1', status: 'QUEUED' }).href).toBe('/orgs/org_1/runs/run_1');
  });
});

describe('report figures', () => {
  it('labels metrics and types for people', () => {
    expect(metricLabel('totalLeads')).toBe('Total leads');
    expect(metricLabel('aiCostUsd')).toBe('AI cost (USD)');
    expect(metricLabel('leadsLast30Days')).toBe('Leads last 30 days');
    expect(reportTypeLabel('SEO_AUDIT')).toBe('SEO audit');
    expect(reportTypeLabel('MARKET_RESEARCH')).toBe('Market research');
  });

  it('formats values by kind', () => {
    expect(metricValue('topSource', null)).toBe('—');
    expect(metricValue('totalLeads', 1234)).toBe((1234).toLocaleString());
    expect(metricValue('budgetPct', 12.345)).toBe('12.35 %');
    expect(metricValue('themes', ['a', 'b'])).toBe('a, b');
    expect(metricValue('nested', { a: 1 })).toBe('{"a":1}');
  });
});

describe('a report body', () => {
  it('becomes headings, lists and paragraphs', () => {
    expect(blocks('## Pipeline\n- Leads: 3\n- Score: n/a\n\nSome text\non two lines\n### Sources\n1. fair')).toEqual([
      { kind: 'heading', level: 3, text: 'Pipeline' },
      { kind: 'list', items: ['Leads: 3', 'Score: n/a'] },
      { kind: 'paragraph', text: 'Some text on two lines' },
      { kind: 'heading', level: 4, text: 'Sources' },
      { kind: 'list', items: ['fair'] },
    ]);
  });
});
