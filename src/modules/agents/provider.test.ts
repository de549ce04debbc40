import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, asc, eq } from 'drizzle-orm';
import { buildApp } from '../../app.ts';
import { buildTestApp, testConfig, type TestApp } from '../../../test/harness.ts';
import { onPostgres } from '../../../test/database.ts';
import { SseClient } from '../../../test/sse-client.ts';
import { usageRecords } from '../usage/tables.ts';
import { ModelServer, type ChatRequest, type Reply } from '../../../test/model-server.ts';
import { runAgent, waitForRun } from '../../../test/agents.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';

const MODEL = 'openai-compatible:scripted';
const PRICES = JSON.stringify({ [MODEL]: { inputPerMTok: 1000, outputPerMTok: 2000 } });
// 100 prompt tokens × 1000 USD/MTok + 20 completion tokens × 2000 USD/MTok
const CALL_COST = 0.14;

/** A real model's side of a lead qualification: search, qualify what it found, report, summarize. */
function qualifier(request: ChatRequest): Reply {
  const results = ModelServer.toolResults(request);
  const names = results.map((r) => r.name);
  if (!names.includes('search_leads'))
    return { reasoning: 'Find the new leads first.', toolCalls: [{ name: 'search_leads', arguments: { status: 'NEW', limit: 10 } }] };
  if (!names.includes('qualify_lead')) {
    const found = results.find((r) => r.name === 'search_leads')!.output as { items: { id: string }[] };
    return {
      content: 'Qualifying.',
      toolCalls: found.items.map((l) => ({ name: 'qualify_lead', arguments: { id: l.id, score: 85, reason: 'Decision maker at a target account' } })),
    };
  }
  if (!names.includes('create_report')) {
    const ids = results.filter((r) => r.name === 'qualify_lead').map((r) => (r.output as { id: string }).id);
    return {
      toolCalls: [
        {
          name: 'create_report',
          arguments: {
            type: 'LEAD_QUALIFICATION',
            title: 'Qualified by the model',
            summary: `${ids.length} qualified`,
            metrics: { qualified: ids.length },
            recommendations: [{ title: 'Tag them', action: { type: 'tag_leads', params: { leadIds: ids, tags: ['model-pick'] } } }],
          },
        },
      ],
    };
  }
  return { content: 'All new leads qualified; see the report.' };
}

let server: ModelServer;
let t: TestApp;
let base: string;
const auth = () => ({ token: t.orgA.token });

beforeAll(async () => {
  server = new ModelServer();
  const url = await server.start();
  t = await buildTestApp({ env: { OPENAI_COMPATIBLE_BASE_URL: url, MODEL_PRICES: PRICES } });
  base = `/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  await t.close();
  await server.stop();
});

async function seedLead(email: string) {
  const res = await t.call({ method: 'POST', url: `${base}/leads`, auth: auth(), payload: { name: email.split('@')[0], email } });
  return res.json().id as string;
}

describe('real provider path, streamed (OpenAI-compatible server on loopback)', () => {
  it("drives the tools with the model's tool calls, records usage and cost per call, and qualifies through the leads service", async () => {
    server.script = qualifier;
    server.requests.length = 0;
    const leadId = await seedLead('cto@target.example');
    const run = await runAgent(t, t.orgA.orgId, auth(), { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads', modelId: MODEL });
    expect(run).toMatchObject({ status: 'succeeded', summary: 'All new leads qualified; see the report.', modelId: MODEL });
    expect(run.usage).toEqual({ inputTokens: 400, outputTokens: 80, costUsd: 4 * CALL_COST, modelId: MODEL });
    // The requests were real streamed Chat Completions calls offering the type's tools.
    expect(server.requests).toHaveLength(4);
    expect(server.requests[0]).toMatchObject({ model: 'scripted', stream: true });
    const offered = server.requests[0]!.tools!.map((x) => x.function.name);
    expect(offered).toEqual(expect.arrayContaining(['search_leads', 'qualify_lead', 'update_lead', 'create_report', 'handoff']));
    expect(server.requests[0]!.messages[0]).toMatchObject({ role: 'system' });
    // Steps, stored as they happened, with indexes 0..n-1.
    const types = run.steps.map((s: { type: string; name?: string }) => `${s.type}${s.name ? ':' + s.name : ''}`);
    expect(types).toEqual([
      'thinking',
      'tool_call:search_leads',
      'tool_result:search_leads',
      'message',
      ...run.steps.filter((s: { name?: string }) => s.name === 'qualify_lead').map((s: { type: string }) => `${s.type}:qualify_lead`),
      'tool_call:create_report',
      'tool_result:create_report',
      'message',
    ]);
    expect(run.steps.map((s: { index: number }) => s.index)).toEqual(run.steps.map((_: unknown, i: number) => i));
    const result = run.steps.find((s: { type: string; name?: string }) => s.type === 'tool_result' && s.name === 'search_leads');
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(JSON.parse(result.output).items.map((l: { id: string }) => l.id)).toContain(leadId);
    expect(run.steps.find((s: { type: string; name?: string }) => s.type === 'tool_call' && s.name === 'search_leads').input).toEqual({
      status: 'NEW',
      limit: 10,
    });
    // One usage record per model call.
    const rows = await t.database.db
      .select()
      .from(usageRecords)
      .where(and(eq(usageRecords.orgId, t.orgA.orgId), eq(usageRecords.agentRunId, run.id)))
      .orderBy(asc(usageRecords.id));
    expect(rows).toHaveLength(4);
    for (const r of rows) expect(r).toMatchObject({ modelId: MODEL, inputTokens: 100, outputTokens: 20, costUsd: CALL_COST, agentType: 'LEAD_QUALIFIER' });
    // The lead was qualified by the agent: lead.qualified carries score, scoreReason and agentRunId.
    const lead = (await t.call({ method: 'GET', url: `${base}/leads/${leadId}`, auth: auth() })).json();
    expect(lead).toMatchObject({ status: 'QUALIFIED', score: 85, scoreReason: 'Decision maker at a target account' });
    const qualified = (await eventsOf(t, t.orgA.orgId, 'lead.qualified')).find((e) => e.payload.lead.id === leadId)!;
    expect(qualified.payload).toMatchObject({ score: 85, scoreReason: 'Decision maker at a target account', agentRunId: run.id });
    const updated = (await eventsOf(t, t.orgA.orgId, 'lead.updated')).find((e) => e.payload.lead.id === leadId)!;
    expect(updated.payload.actor).toEqual({ type: 'agent', id: run.id });
    // agent.run.finished with usage.modelId and the report id.
    const finished = (await eventsOf(t, t.orgA.orgId, 'agent.run.finished')).find((e) => e.payload.agentRunId === run.id)!;
    expect(finished.payload).toMatchObject({
      type: 'LEAD_QUALIFIER',
      status: 'succeeded',
      reportId: run.reportId,
      usage: { modelId: MODEL, costUsd: 4 * CALL_COST, inputTokens: 400, outputTokens: 80 },
    });
    const report = (await t.call({ method: 'GET', url: `${base}/reports/${run.reportId}`, auth: auth() })).json();
    expect(report).toMatchObject({
      type: 'LEAD_QUALIFICATION',
      title: 'Qualified by the model',
      agentRunId: run.id,
      recommendations: [{ index: 0, action: { type: 'tag_leads' } }],
    });
  });

  it('returns tool errors to the model (unknown tool, invalid input) and goes on', async () => {
    server.requests.length = 0;
    server.script = (request) => {
      const results = ModelServer.toolResults(request);
      if (results.length === 0)
        return {
          toolCalls: [
            { name: 'delete_everything', arguments: {} },
            { name: 'search_leads', arguments: { limit: 'many' } },
            { name: 'get_lead', arguments: '{not json' },
          ],
        };
      return { content: `Saw ${results.length} errors.` };
    };
    const run = await runAgent(t, t.orgA.orgId, auth(), { type: 'LEAD_QUALIFIER', task: 'Misbehave', modelId: MODEL });
    expect(run.status).toBe('succeeded');
    const outputs = run.steps.filter((s: { type: string }) => s.type === 'tool_result').map((s: { output: string }) => JSON.parse(s.output));
    expect(outputs).toHaveLength(3);
    for (const o of outputs) expect(o.error).toEqual(expect.any(String));
    expect(outputs[0].error).toContain('not available');
    // The model saw the errors as tool results.
    expect(ModelServer.toolResults(server.requests[1]!).map((r) => (r.output as { error?: string }).error)).toHaveLength(3);
  });

  it('ends failed with an error step when the model server fails', async () => {
    server.script = () => ({ status: 500 });
    const run = await runAgent(t, t.orgA.orgId, auth(), { type: 'REPORT_WRITER', task: 'Digest', modelId: MODEL });
    expect(run.status).toBe('failed');
    expect(run.error).toContain('500');
    expect(run.steps.at(-1)).toMatchObject({ type: 'error' });
    expect(run.usage.costUsd).toBe(0);
  });

  it("ends max_steps when the saved agent's step limit is reached", async () => {
    server.script = () => ({ toolCalls: [{ name: 'lead_stats', arguments: {} }] });
    const agent = (
      await t.call({ method: 'POST', url: `${base}/agents`, auth: auth(), payload: { name: 'Looper', type: 'MARKET_ANALYST', modelId: MODEL, maxSteps: 2 } })
    ).json();
    const started = await t.call({ method: 'POST', url: `${base}/agents/${agent.id}/run`, auth: auth(), payload: { task: 'Loop forever' } });
    expect(started.statusCode).toBe(202);
    const run = await waitForRun(t, t.orgA.orgId, started.json().id, auth());
    expect(run).toMatchObject({ status: 'max_steps', agentId: agent.id, maxSteps: 2 });
    expect(run.usage.costUsd).toBe(2 * CALL_COST);
    expect(run.steps.filter((s: { type: string }) => s.type === 'tool_call')).toHaveLength(2);
    expect(run.steps.at(-1)).toMatchObject({ type: 'error' });
  });

  it('ends budget_exceeded before a call that would pass the run budget, with budget.exceeded', async () => {
    // A model that counts its prompt like a real one: about four characters a token.
    server.script = (request) => ({
      toolCalls: [{ name: 'lead_stats', arguments: {} }],
      usage: { prompt: Math.ceil(JSON.stringify(request).length / 4), completion: 20 },
    });
    const agent = (
      await t.call({ method: 'POST', url: `${base}/agents`, auth: auth(), payload: { name: 'Capped', type: 'MARKET_ANALYST', modelId: MODEL, budgetUsd: 5 } })
    ).json();
    const started = (await t.call({ method: 'POST', url: `${base}/agents/${agent.id}/run`, auth: auth(), payload: { task: 'Spend' } })).json();
    const run = await waitForRun(t, t.orgA.orgId, started.id, auth());
    expect(run.status).toBe('budget_exceeded');
    // About 1.5 USD a call: the call that would pass 5 USD is not made.
    expect(run.usage.costUsd).toBeLessThanOrEqual(5);
    expect(run.usage.costUsd).toBeGreaterThan(2.5);
    const calls = await t.database.db.select().from(usageRecords).where(eq(usageRecords.agentRunId, run.id));
    expect(run.steps.filter((s: { type: string }) => s.type === 'tool_call')).toHaveLength(calls.length);
    expect(calls.reduce((a, c) => a + c.costUsd, 0)).toBeCloseTo(run.usage.costUsd, 9);
    const exceeded = (await eventsOf(t, t.orgA.orgId, 'budget.exceeded')).find((e) => e.payload.runId === run.id)!;
    expect(exceeded.payload).toMatchObject({ scope: 'agent', limitUsd: 5, usedUsd: run.usage.costUsd, agentRunId: run.id });
    const finished = (await eventsOf(t, t.orgA.orgId, 'agent.run.finished')).find((e) => e.payload.agentRunId === run.id)!;
    expect(finished.payload.status).toBe('budget_exceeded');
  });

  it('cancels mid-call: the held model request is aborted, the run is canceled and its stream ends with done', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address() as { port: number };
    server.script = () => ({ hold: true });
    const started = (
      await t.call({ method: 'POST', url: `${base}/agents/run`, auth: auth(), payload: { type: 'REPORT_WRITER', task: 'Wait forever', modelId: MODEL } })
    ).json();
    await server.waitForHeld();
    const heldIndex = server.requests.length - 1;
    const sse = await SseClient.open(`http://127.0.0.1:${address.port}${base}/agent-runs/${started.id}/events`, { authorization: `Bearer ${t.orgA.token}` });
    const canceled = await t.call({ method: 'POST', url: `${base}/agent-runs/${started.id}/cancel`, auth: auth() });
    expect(canceled.statusCode).toBe(200);
    expect(canceled.json()).toMatchObject({ id: started.id, status: 'canceled' });
    await eventually(async () => server.aborted.includes(heldIndex));
    await sse.waitForEnd();
    const done = sse.events('done');
    expect(done).toHaveLength(1);
    expect(done[0]!.data).toMatchObject({ type: 'done', run: { id: started.id, status: 'canceled' } });
    const run = await waitForRun(t, t.orgA.orgId, started.id, auth());
    expect(run.status).toBe('canceled');
    const finished = (await eventsOf(t, t.orgA.orgId, 'agent.run.finished')).filter((e) => e.payload.agentRunId === started.id);
    expect(finished).toHaveLength(1);
    expect(finished[0]!.payload.status).toBe('canceled');
    // Canceling again: the run already ended.
    expect((await t.call({ method: 'POST', url: `${base}/agent-runs/${started.id}/cancel`, auth: auth() })).statusCode).toBe(409);
  });

  it.skipIf(!onPostgres)('across app instances: a second instance streams the steps and cancels the call in flight on the first', async () => {
    const second = await buildApp({
      config: testConfig({ OPENAI_COMPATIBLE_BASE_URL: t.config.openaiCompatibleBaseUrl!, MODEL_PRICES: PRICES }),
      database: t.database,
      logger: false,
      workers: false,
    });
    await second.listen({ port: 0, host: '127.0.0.1' });
    const url = (id: string) => `http://127.0.0.1:${(second.server.address() as { port: number }).port}${base}/agent-runs/${id}/events`;
    const headers = { authorization: `Bearer ${t.orgA.token}` };
    try {
      // The first answer comes late, so the second instance's stream is open before any step exists.
      server.script = (request) => ({ ...qualifier(request), ...(ModelServer.toolResults(request).length === 0 ? { delayMs: 300 } : {}) });
      await seedLead('cross@instance.example');
      const live = (
        await t.call({ method: 'POST', url: `${base}/agents/run`, auth: auth(), payload: { type: 'LEAD_QUALIFIER', task: 'Qualify', modelId: MODEL } })
      ).json();
      const sse = await SseClient.open(url(live.id), headers);
      await sse.waitForEnd();
      const run = await waitForRun(t, t.orgA.orgId, live.id, auth());
      expect(run.steps.length).toBeGreaterThan(4);
      expect(sse.events('step').map((m) => (m.data as { step: { index: number } }).step.index)).toEqual(run.steps.map((x: { index: number }) => x.index));
      expect(sse.events('done')[0]!.data).toMatchObject({ run: { id: live.id, status: 'succeeded' } });

      server.script = () => ({ hold: true });
      const held = (
        await t.call({ method: 'POST', url: `${base}/agents/run`, auth: auth(), payload: { type: 'REPORT_WRITER', task: 'Hold', modelId: MODEL } })
      ).json();
      await server.waitForHeld();
      const heldIndex = server.requests.length - 1;
      const watcher = await SseClient.open(url(held.id), headers);
      const canceled = await second.inject({ method: 'POST', url: `${base}/agent-runs/${held.id}/cancel`, headers });
      expect(canceled.json().status).toBe('canceled');
      await eventually(async () => server.aborted.includes(heldIndex));
      await watcher.waitForEnd();
      expect(watcher.events('done')[0]!.data).toMatchObject({ run: { status: 'canceled' } });
    } finally {
      await second.close();
    }
  });

  it('refuses unknown and unconfigured models with 422 MODEL_NOT_ALLOWED', async () => {
    for (const modelId of ['openai:gpt-4.1-mini', 'anthropic:claude-sonnet-4', 'mystery:model', 'gpt-4', 'openai-compatible:']) {
      const res = await t.call({ method: 'POST', url: `${base}/agents/run`, auth: auth(), payload: { type: 'LEAD_QUALIFIER', task: 'x', modelId } });
      expect(res.statusCode, modelId).toBe(422);
      expect(res.json().code).toBe('MODEL_NOT_ALLOWED');
    }
    const saved = await t.call({
      method: 'POST',
      url: `${base}/agents`,
      auth: auth(),
      payload: { name: 'x', type: 'LEAD_QUALIFIER', modelId: 'openai:gpt-4o' },
    });
    expect(saved.statusCode).toBe(422);
  });
});

describe('real provider path, not streamed', () => {
  let plain: TestApp;
  beforeAll(async () => {
    plain = await buildTestApp({ env: { OPENAI_COMPATIBLE_BASE_URL: t.config.openaiCompatibleBaseUrl!, MODEL_PRICES: PRICES, MODEL_STREAMING: 'false' } });
  });
  afterAll(async () => {
    await plain.close();
  });

  it('runs the same loop with one plain JSON request per call', async () => {
    server.script = qualifier;
    server.requests.length = 0;
    const pAuth = { apiKey: plain.orgA.apiKey };
    await plain.call({ method: 'POST', url: `/api/v1/orgs/${plain.orgA.orgId}/leads`, auth: pAuth, payload: { email: 'vp@account.example' } });
    const run = await runAgent(plain, plain.orgA.orgId, pAuth, { type: 'LEAD_QUALIFIER', task: 'Qualify', modelId: MODEL });
    expect(run.status).toBe('succeeded');
    expect(server.requests).toHaveLength(4);
    for (const r of server.requests) expect(r.stream).toBeFalsy();
    expect(run.usage).toMatchObject({ inputTokens: 400, outputTokens: 80, costUsd: 4 * CALL_COST });
    expect(run.steps.some((s: { type: string }) => s.type === 'thinking')).toBe(true);
    const lead = (await plain.call({ method: 'GET', url: `/api/v1/orgs/${plain.orgA.orgId}/leads?status=QUALIFIED`, auth: pAuth })).json();
    expect(lead.items[0]).toMatchObject({ email: 'vp@account.example', score: 85 });
  });
});
