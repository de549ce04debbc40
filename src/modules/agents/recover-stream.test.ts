import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { SseClient } from '../../../test/sse-client.ts';
import { eventually } from '../../../test/helpers.ts';
import { storeRunningAgentRun } from '../../../test/agents.ts';
import { agentRuns, agentSteps } from './tables.ts';
import { runChannel, type RunMessage } from './steps.ts';
import { eq } from 'drizzle-orm';

/**
 * A run whose instance died is ended `failed` by another instance's runner once its lease expires,
 * with an `error` step. A client following the run's stream live must get that step before `done`:
 * the stream promises every step in order with no gap (found by the chaos run: a reader saw steps
 * 0–7 and `done`, the run had 0–8).
 */
let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await buildTestApp({ env: { SSE_PING_MS: '500' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await t.close();
});

const stepRow = (runId: string, index: number) => ({
  runId,
  orgId: t.orgA.orgId,
  index,
  type: 'tool_call',
  name: 'lead_stats',
  input: {},
  at: new Date(),
});

/** A RUNNING run held by an instance (the test plays that instance: it writes the steps and publishes them, or not). */
const heldRun = (prefix: string) => storeRunningAgentRun(t, { prefix, task: 'Live' });

const open = (id: string) => SseClient.open(`${baseUrl}/api/v1/orgs/${t.orgA.orgId}/agent-runs/${id}/events`, { authorization: `Bearer ${t.orgA.token}` });
const indicesOf = (sse: SseClient) => sse.events('step').map((m) => (m.data as { step: { index: number } }).step.index);

describe('agent run stream when a live message is lost', () => {
  it('a step after a lost one brings the lost one first, from the store', async () => {
    const id = await heldRun('gap');
    const sse = await open(id);
    await t.database.db.insert(agentSteps).values(stepRow(id, 0));
    await t.app.services.bus.publish(runChannel(id), {
      kind: 'step',
      step: { index: 0, type: 'tool_call', at: new Date().toISOString() },
    } satisfies RunMessage);
    await sse.until(() => sse.events('step').length === 1);
    // Step 1 is stored but its message never arrives (the NOTIFY was lost); step 2's does.
    await t.database.db.insert(agentSteps).values([stepRow(id, 1), stepRow(id, 2)]);
    await t.app.services.bus.publish(runChannel(id), {
      kind: 'step',
      step: { index: 2, type: 'tool_call', at: new Date().toISOString() },
    } satisfies RunMessage);
    await sse.until(() => sse.events('step').length === 3);
    expect(indicesOf(sse)).toEqual([0, 1, 2]);
    sse.close();
  });

  it('done after a lost step sends the step first; a lost done still ends the stream', async () => {
    const id = await heldRun('done');
    const sse = await open(id);
    await t.database.db.insert(agentSteps).values(stepRow(id, 0));
    await t.database.db.update(agentRuns).set({ status: 'succeeded', finishedAt: new Date(), leaseOwner: null, leaseUntil: null }).where(eq(agentRuns.id, id));
    await t.app.services.bus.publish(runChannel(id), {
      kind: 'done',
      run: { id, status: 'succeeded', summary: 'ok', usage: {} },
    } satisfies RunMessage);
    await sse.waitForEnd();
    expect(indicesOf(sse)).toEqual([0]);
    expect(sse.events('done')).toHaveLength(1);

    // Neither the step nor done reaches this instance: the stream notices the run ended.
    const quiet = await heldRun('quiet');
    const second = await open(quiet);
    await t.database.db.insert(agentSteps).values(stepRow(quiet, 0));
    await t.database.db.update(agentRuns).set({ status: 'failed', finishedAt: new Date(), leaseOwner: null, leaseUntil: null }).where(eq(agentRuns.id, quiet));
    await second.waitForEnd(10_000);
    expect(indicesOf(second)).toEqual([0]);
    expect(second.events('done')[0]!.data).toMatchObject({ run: { id: quiet, status: 'failed' } });
  });
});

describe('agent run stream when a lost run is recovered', () => {
  it("a live reader gets the recovery's error step, then done", async () => {
    const past = new Date(Date.now() - 60_000);
    // Held for now: the reader connects while the run still looks alive.
    const id = await storeRunningAgentRun(t, { prefix: 'lost', task: 'Interrupted mid-way', leaseOwner: 'an instance that died', startedAt: past });
    await t.database.db.insert(agentSteps).values([
      { runId: id, orgId: t.orgA.orgId, index: 0, type: 'tool_call', name: 'lead_stats', input: {}, at: past },
      { runId: id, orgId: t.orgA.orgId, index: 1, type: 'tool_result', name: 'lead_stats', output: '{}', durationMs: 3, at: past },
    ]);
    const sse = await SseClient.open(`${baseUrl}/api/v1/orgs/${t.orgA.orgId}/agent-runs/${id}/events`, { authorization: `Bearer ${t.orgA.token}` });
    expect(sse.status).toBe(200);
    await sse.until(() => sse.events('step').length === 2);

    // The lease runs out; the runner's next round ends the run.
    await t.database.db.update(agentRuns).set({ leaseUntil: past }).where(eq(agentRuns.id, id));
    t.app.workers!.loops.agents!.wake();
    await eventually(async () => (await t.database.db.select().from(agentRuns).where(eq(agentRuns.id, id)))[0]!.status === 'failed');
    await sse.waitForEnd();

    const indices = sse.events('step').map((m) => (m.data as { step: { index: number } }).step.index);
    expect(indices).toEqual([0, 1, 2]);
    expect(sse.events('step').at(-1)!.data).toMatchObject({ step: { index: 2, type: 'error', text: expect.stringContaining('interrupted') } });
    expect(sse.events('done')).toHaveLength(1);
    expect(sse.events('done')[0]!.data).toMatchObject({ run: { id, status: 'failed' } });
  });
});
