import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { api } from '../../../test/workflows.ts';
import { usageRecords } from '../usage/tables.ts';
import { type Auth } from '../../../test/agents.ts';
import { eventually } from '../../../test/helpers.ts';

let t: TestApp;
let w: ReturnType<typeof api>;
const owner = (): Auth => ({ token: t.orgA.token });

beforeAll(async () => {
  t = await buildTestApp({ env: { WORKFLOW_POLL_MS: '100', MODEL_PRICES: JSON.stringify({ offline: { inputPerMTok: 100, outputPerMTok: 100 } }) } });
  w = api(t);
});
afterAll(async () => {
  await t.close();
});

describe('ai.agent workflow node', () => {
  it("runs the agent on the item; its cost is the run's costUsd and its usage carries the workflow run", async () => {
    const lead = (
      await t.call({
        method: 'POST',
        url: `${w.base}/leads`,
        auth: owner(),
        payload: { name: 'Wf Lead', email: 'lead@workflow.example', company: 'Flow', phone: '+14155550155' },
      })
    ).json();
    const wf = await w.create(
      [
        { id: 'start', type: 'trigger.manual' },
        { id: 'agent', type: 'ai.agent', params: { type: 'LEAD_QUALIFIER', task: 'Qualify {{ name }}' } },
      ],
      [{ from: 'start', to: 'agent' }],
    );
    const started = await w.run(wf.id, { input: lead });
    const run = await w.until(started.id);
    expect(run.status).toBe('SUCCEEDED');
    const item = w.step(run, 'agent')!.items![0]!;
    expect(item).toMatchObject({
      status: 'succeeded',
      leadId: lead.id,
      score: expect.any(Number),
      reportId: expect.stringMatching(/^rep_/),
      agentRunId: expect.stringMatching(/^arun_/),
    });
    const agentRun = (await t.call({ method: 'GET', url: `${w.base}/agent-runs/${item.agentRunId}`, auth: owner() })).json();
    expect(agentRun).toMatchObject({ status: 'succeeded', workflowRunId: started.id, task: 'Qualify Wf Lead' });
    // Only the lead of the item was evaluated.
    expect(
      agentRun.steps.filter((s: { type: string; name?: string }) => s.type === 'tool_call' && (s.name === 'qualify_lead' || s.name === 'update_lead')),
    ).toHaveLength(1);
    expect(agentRun.usage.costUsd).toBeGreaterThan(0);
    expect((run as unknown as { costUsd: number }).costUsd).toBeCloseTo(agentRun.usage.costUsd, 9);
    const rows = await t.database.db
      .select()
      .from(usageRecords)
      .where(eq(usageRecords.agentRunId, item.agentRunId as string));
    for (const r of rows) expect(r).toMatchObject({ workflowRunId: started.id, workflowId: wf.id });
    const byWorkflow = (await t.call({ method: 'GET', url: `${w.base}/usage`, auth: owner(), query: { groupBy: 'workflow' } })).json();
    expect(byWorkflow.groups.find((g: { key: string }) => g.key === wf.id).costUsd).toBeCloseTo(agentRun.usage.costUsd, 9);
  });

  it('the workflow budget stops the agent: the run FAILS with BUDGET_EXCEEDED', async () => {
    const wf = await w.create(
      [
        { id: 'start', type: 'trigger.manual' },
        { id: 'agent', type: 'ai.agent', params: { type: 'REPORT_WRITER', task: 'Digest' } },
      ],
      [{ from: 'start', to: 'agent' }],
      { budgetUsd: 0.05 },
    );
    const started = await w.run(wf.id, {});
    const run = await w.until(started.id);
    expect(run.status).toBe('FAILED');
    expect(w.step(run, 'agent')!.error).toMatchObject({ code: 'BUDGET_EXCEEDED' });
    expect((run as unknown as { costUsd: number }).costUsd).toBeLessThanOrEqual(0.05);
    const agentRuns = (await t.call({ method: 'GET', url: `${w.base}/agent-runs`, auth: owner(), query: { status: 'budget_exceeded' } })).json();
    const stopped = agentRuns.items.find((r: { workflowRunId: string }) => r.workflowRunId === started.id);
    expect(stopped).toMatchObject({ status: 'budget_exceeded', budgetUsd: 0.05 });
  });

  it('the "Qualify new leads with AI" template qualifies each new lead end to end', async () => {
    const used = await t.call({
      method: 'POST',
      url: `${w.base}/templates/qualify-new-leads-with-ai/use`,
      auth: owner(),
      payload: { name: 'Qualify', projectId: t.orgA.projectId },
    });
    expect(used.statusCode).toBe(201);
    const strong = (
      await t.call({
        method: 'POST',
        url: `${w.base}/leads`,
        auth: owner(),
        payload: { name: 'Strong', email: 'ceo@strong.example', company: 'Strong', phone: '+14155550166', website: 'strong.example', source: 'referral' },
      })
    ).json();
    const weak = (await t.call({ method: 'POST', url: `${w.base}/leads`, auth: owner(), payload: { name: 'Weak' } })).json();
    const status = async (id: string) => (await t.call({ method: 'GET', url: `${w.base}/leads/${id}`, auth: owner() })).json().status as string;
    await eventually(async () => (await status(strong.id)) === 'QUALIFIED' && (await status(weak.id)) === 'UNQUALIFIED', 15_000);
  });
});
