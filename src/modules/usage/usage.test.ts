import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { runAgent, type Auth } from '../../../test/agents.ts';
import { PriceTable } from './pricing.ts';
import { parseRange } from './range.ts';
import { usageRecords } from './tables.ts';
import { eventsOf } from '../../../test/helpers.ts';

const PRICE = 100; // USD per million tokens, input and output, for the offline model
let t: TestApp;
let base: string;
const owner = (): Auth => ({ token: t.orgA.token });

beforeAll(async () => {
  t = await buildTestApp({ env: { MODEL_PRICES: JSON.stringify({ offline: { inputPerMTok: PRICE, outputPerMTok: PRICE } }) } });
  base = `/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  await t.close();
});

const usage = async (query: Record<string, string> = {}, auth: Auth = owner()) => t.call({ method: 'GET', url: `${base}/usage`, auth, query });
const budget = async () => (await t.call({ method: 'GET', url: `${base}/budget`, auth: owner() })).json();
const setBudget = (monthlyLimitUsd: number | null, auth: Auth = owner()) =>
  t.call({ method: 'PUT', url: `${base}/budget`, auth, payload: { monthlyLimitUsd } });

describe('cost arithmetic and usage figures', () => {
  let runId: string;

  it('costs each model call tokens × price and sums them on the run', async () => {
    const run = await runAgent(t, t.orgA.orgId, owner(), { type: 'REPORT_WRITER', task: 'Digest', projectId: t.orgA.projectId });
    runId = run.id;
    expect(run.status).toBe('succeeded');
    const rows = await t.database.db
      .select()
      .from(usageRecords)
      .where(and(eq(usageRecords.orgId, t.orgA.orgId), eq(usageRecords.agentRunId, run.id)));
    expect(rows.length).toBeGreaterThanOrEqual(2);
    let sum = 0;
    for (const r of rows) {
      expect(r.costUsd).toBeCloseTo(((r.inputTokens + r.outputTokens) * PRICE) / 1e6, 9);
      expect(r).toMatchObject({ modelId: 'offline', agentType: 'REPORT_WRITER', projectId: t.orgA.projectId });
      sum += r.costUsd;
    }
    expect(run.usage.costUsd).toBeCloseTo(sum, 9);
    expect(run.usage.inputTokens).toBe(rows.reduce((a, r) => a + r.inputTokens, 0));
    expect(run.usage.outputTokens).toBe(rows.reduce((a, r) => a + r.outputTokens, 0));
  });

  it('GET /usage: totals, every groupBy, budget figures, date ranges', async () => {
    await runAgent(t, t.orgA.orgId, owner(), { type: 'LEAD_QUALIFIER', task: 'Qualify' });
    await t.app.services.agents.runInline({
      orgId: t.orgA.orgId,
      projectId: null,
      type: 'REPORT_WRITER',
      task: 'From a workflow',
      workflowId: 'wf_usage',
      workflowRunId: 'run_usage',
    });
    const all = (await usage()).json();
    const rows = await t.database.db.select().from(usageRecords).where(eq(usageRecords.orgId, t.orgA.orgId));
    expect(all.totals).toMatchObject({
      runs: 3,
      inputTokens: rows.reduce((a, r) => a + r.inputTokens, 0),
      outputTokens: rows.reduce((a, r) => a + r.outputTokens, 0),
    });
    expect(all.totals.costUsd).toBeCloseTo(
      rows.reduce((a, r) => a + r.costUsd, 0),
      9,
    );
    expect(all.budget).toEqual({ limitUsd: null, usedUsd: all.totals.costUsd, pct: null });
    expect(all.groups).toEqual([]);

    const byModel = (await usage({ groupBy: 'model' })).json();
    expect(byModel.groups).toEqual([{ key: 'offline', ...all.totals }]);
    const today = new Date().toISOString().slice(0, 10);
    expect((await usage({ groupBy: 'day' })).json().groups).toEqual([{ key: today, ...all.totals }]);
    const byType = (await usage({ groupBy: 'agentType' })).json().groups;
    expect(byType.map((g: { key: string; runs: number }) => [g.key, g.runs])).toEqual([
      ['LEAD_QUALIFIER', 1],
      ['REPORT_WRITER', 2],
    ]);
    const byWorkflow = (await usage({ groupBy: 'workflow' })).json().groups;
    expect(byWorkflow.map((g: { key: string | null; runs: number }) => [g.key, g.runs])).toEqual([
      ['wf_usage', 1],
      [null, 2],
    ]);
    const byProject = (await usage({ groupBy: 'project' })).json().groups;
    expect(byProject.find((g: { key: string | null }) => g.key === t.orgA.projectId).runs).toBe(1);
    const costs = [byType, byWorkflow, byProject].map((groups) => groups.reduce((a: number, g: { costUsd: number }) => a + g.costUsd, 0));
    for (const c of costs) expect(c).toBeCloseTo(all.totals.costUsd, 9);

    // A date is that whole UTC day; a timestamp `to` is exclusive.
    const day = (await usage({ from: today, to: today })).json();
    expect(day.from).toBe(`${today}T00:00:00.000Z`);
    expect(day.to).toBe(new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString());
    expect(day.totals.runs).toBe(3);
    const before = (await usage({ from: '2020-01-01', to: `${today}T00:00:00+00:00` })).json();
    expect(before.totals).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0, runs: 0 });
    const offset = (await usage({ from: `${today}T00:00:00+03:00` })).json();
    expect(offset.from).toBe(new Date(Date.parse(`${today}T00:00:00+03:00`)).toISOString());
    for (const query of [{ from: 'yesterday' }, { from: '2026-02-30' }, { from: today, to: '2020-01-01' }, { groupBy: 'color' }] as Record<string, string>[]) {
      expect((await usage(query)).statusCode, JSON.stringify(query)).toBe(400);
    }
    expect(runId).toBeDefined();
  });

  it('usage needs usage:read and stays inside the organization', async () => {
    const key = await t.key(t.orgA.orgId, ['usage:read']);
    expect((await usage({}, { apiKey: key })).statusCode).toBe(200);
    const agentsKey = await t.key(t.orgA.orgId, ['agents:read']);
    expect((await usage({}, { apiKey: agentsKey })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${base}/usage`, auth: { token: t.orgB.token } })).statusCode).toBe(404);
    const b = (await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/usage`, auth: { token: t.orgB.token } })).json();
    expect(b.totals.runs).toBe(0);
  });
});

describe('monthly budget', () => {
  it('GET and PUT; only owners/admins (or all-scope keys) set it', async () => {
    expect(await budget()).toMatchObject({ monthlyLimitUsd: null, pct: null, period: new Date().toISOString().slice(0, 7) });
    const member = await t.member(t.orgA.orgId, 'member');
    expect((await setBudget(10, { token: member.token })).statusCode).toBe(403);
    const reader = await t.key(t.orgA.orgId, ['usage:read']);
    expect((await setBudget(10, { apiKey: reader })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${base}/budget`, auth: { apiKey: reader } })).statusCode).toBe(200);
    expect((await t.call({ method: 'PUT', url: `/api/v1/orgs/${t.orgB.orgId}/budget`, auth: owner(), payload: { monthlyLimitUsd: 1 } })).statusCode).toBe(404);
    expect((await setBudget(-1)).statusCode).toBe(400);
    const set = await setBudget(1000, { apiKey: t.orgA.apiKey });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ monthlyLimitUsd: 1000, usedUsd: expect.any(Number), pct: expect.any(Number) });
    expect((await setBudget(null)).json().monthlyLimitUsd).toBeNull();
  });

  it('warns once at 80 %, stops a run before it passes the limit (budget.exceeded with runId), then refuses new runs with 429', async () => {
    const used = (await budget()).usedUsd as number;
    const probe = await runAgent(t, t.orgA.orgId, owner(), { type: 'REPORT_WRITER', task: 'Probe' });
    const cost = probe.usage.costUsd as number;
    // After one more run of about the same cost the organization is at ~90 %.
    const limit = Math.round(((used + cost + cost) / 0.9) * 1e6) / 1e6;
    expect((await setBudget(limit)).statusCode).toBe(200);
    const first = await runAgent(t, t.orgA.orgId, owner(), { type: 'REPORT_WRITER', task: 'Spend to 90 %' });
    expect(first.status).toBe('succeeded');
    let warnings = await eventsOf(t, t.orgA.orgId, 'budget.warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.projectId).toBeNull();
    expect(warnings[0]!.payload).toMatchObject({ scope: 'organization', limitUsd: limit });
    expect(warnings[0]!.payload.pct).toBeGreaterThanOrEqual(80);

    const second = await runAgent(t, t.orgA.orgId, owner(), { type: 'REPORT_WRITER', task: 'Spend past it' });
    expect(second.status).toBe('budget_exceeded');
    const state = await budget();
    expect(state.usedUsd).toBeLessThanOrEqual(limit);
    expect(second.steps.at(-1)).toMatchObject({ type: 'error', text: expect.stringContaining('Budget exceeded (organization)') });
    const exceeded = (await eventsOf(t, t.orgA.orgId, 'budget.exceeded')).find((e) => e.payload.runId === second.id)!;
    expect(exceeded.projectId).toBeNull();
    expect(exceeded.payload).toMatchObject({ scope: 'organization', limitUsd: limit, runId: second.id });
    const finished = (await eventsOf(t, t.orgA.orgId, 'agent.run.finished')).find((e) => e.payload.agentRunId === second.id)!;
    expect(finished.payload.status).toBe('budget_exceeded');
    // Still one warning this month.
    warnings = await eventsOf(t, t.orgA.orgId, 'budget.warning');
    expect(warnings).toHaveLength(1);
    const notes = (await t.call({ method: 'GET', url: `${base}/notifications`, auth: owner(), query: { pageSize: '100' } })).json().items;
    expect(notes.filter((n: { kind: string }) => n.kind === 'budget.warning')).toHaveLength(1);
    expect(notes.some((n: { kind: string; body: string }) => n.kind === 'budget.exceeded' && n.body.includes(second.id))).toBe(true);

    // Spent: new runs are refused until the limit rises (or the month ends).
    await setBudget(state.usedUsd);
    const refused = await t.call({ method: 'POST', url: `${base}/agents/run`, auth: owner(), payload: { type: 'REPORT_WRITER', task: 'x' } });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe('BUDGET_EXCEEDED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const agent = (await t.call({ method: 'POST', url: `${base}/agents`, auth: owner(), payload: { name: 'Saved', type: 'REPORT_WRITER' } })).json();
    expect((await t.call({ method: 'POST', url: `${base}/agents/${agent.id}/run`, auth: owner(), payload: { task: 'x' } })).statusCode).toBe(429);
    // Other organizations are not affected.
    expect(
      (
        await t.call({
          method: 'POST',
          url: `/api/v1/orgs/${t.orgB.orgId}/agents/run`,
          auth: { token: t.orgB.token },
          payload: { type: 'REPORT_WRITER', task: 'x' },
        })
      ).statusCode,
    ).toBe(202);
    await setBudget(null);
    expect((await t.call({ method: 'POST', url: `${base}/agents/run`, auth: owner(), payload: { type: 'REPORT_WRITER', task: 'x' } })).statusCode).toBe(202);
  });
});

describe('prices and ranges (units)', () => {
  it('merges MODEL_PRICES over the built-in table and matches dated variants by prefix', () => {
    const prices = new PriceTable({
      'openai:gpt-4.1-mini': { inputPerMTok: 1, outputPerMTok: 2 },
      'openai-compatible:qwen2.5': { inputPerMTok: 0.5, outputPerMTok: 0.5 },
    });
    expect(prices.cost('openai:gpt-4.1-mini', 1_000_000, 500_000)).toBe(2);
    expect(prices.cost('openai:gpt-4.1', 1000, 1000)).toBeCloseTo((1000 * 2 + 1000 * 8) / 1e6, 12);
    expect(prices.cost('anthropic:claude-sonnet-4-20250514', 1_000_000, 0)).toBe(3);
    expect(prices.cost('openai-compatible:qwen2.5', 2_000_000, 0)).toBe(1);
    expect(prices.cost('openai-compatible:unknown', 1e6, 1e6)).toBe(0);
    expect(prices.cost('offline', 1e6, 1e6)).toBe(0);
  });

  it('parses dates as whole UTC days and timestamps as given', () => {
    const fallback = { from: new Date(0), to: new Date(1) };
    expect(parseRange('2026-11-01', '2026-11-30', fallback)).toEqual({ from: new Date('2026-11-01T00:00:00Z'), to: new Date('2026-12-01T00:00:00Z') });
    expect(parseRange('2026-11-01T10:00:00+02:00', '2026-11-02T00:00:00Z', fallback)).toEqual({
      from: new Date('2026-11-01T08:00:00Z'),
      to: new Date('2026-11-02T00:00:00Z'),
    });
    expect(parseRange(undefined, undefined, fallback)).toEqual(fallback);
  });
});
