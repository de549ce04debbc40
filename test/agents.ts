import { agentRuns } from '../src/modules/agents/tables.ts';
import type { TestApp } from './harness.ts';

export type Auth = { token?: string; apiKey?: string };

/** Polls GET …/agent-runs/:id until the run is final. */
export async function waitForRun(t: TestApp, orgId: string, runId: string, auth: Auth, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.call({ method: 'GET', url: `/api/v1/orgs/${orgId}/agent-runs/${runId}`, auth });
    const run = res.json();
    if (res.statusCode !== 200) throw new Error(`GET agent run: ${res.statusCode} ${res.body}`);
    if (run.status !== 'QUEUED' && run.status !== 'RUNNING') return run;
    if (Date.now() > deadline) throw new Error(`agent run ${runId} still ${run.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Starts an ad-hoc run and waits for its end. */
export async function runAgent(t: TestApp, orgId: string, auth: Auth, payload: Record<string, unknown>) {
  const res = await t.call({ method: 'POST', url: `/api/v1/orgs/${orgId}/agents/run`, auth, payload });
  if (res.statusCode !== 202) throw new Error(`POST agents/run: ${res.statusCode} ${res.body}`);
  return waitForRun(t, orgId, res.json().id, auth);
}

/**
 * A RUNNING agent run of org A written straight to the store, as an instance holding it (or one that
 * died, with `leaseUntil` in the past) leaves it: the test plays that instance. Its id.
 */
export async function storeRunningAgentRun(
  t: TestApp,
  options: { prefix: string; task?: string; leaseOwner?: string; leaseUntil?: Date; startedAt?: Date },
): Promise<string> {
  const id = `arun_${options.prefix}${Date.now()}`;
  const startedAt = options.startedAt ?? new Date();
  await t.database.db.insert(agentRuns).values({
    id,
    orgId: t.orgA.orgId,
    type: 'LEAD_QUALIFIER',
    status: 'RUNNING',
    task: options.task ?? 'Held',
    input: {},
    modelId: 'offline',
    maxSteps: 5,
    leaseOwner: options.leaseOwner ?? 'another instance',
    leaseUntil: options.leaseUntil ?? new Date(Date.now() + 3_600_000),
    startedAt,
    createdAt: startedAt,
  });
  return id;
}
