import { and, asc, eq } from 'drizzle-orm';
import type { TestApp } from '../../../../test/harness.ts';
import { events } from '../../events/tables.ts';

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

/** Platform events of a type in an organization (the outbox), oldest first. */
export async function eventsOf(t: TestApp, orgId: string, type: string) {
  const rows = await t.database.db.select().from(events).where(and(eq(events.orgId, orgId), eq(events.type, type))).orderBy(asc(events.id));
  return rows.map((r) => ({ ...r, payload: r.payload as Record<string, any> })); // eslint-disable-line @typescript-eslint/no-explicit-any
}

export async function until<T>(fn: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
