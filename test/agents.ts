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
