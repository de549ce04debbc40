import { expect } from 'vitest';
import { buildTestApp, type TestApp } from './harness.ts';
import { eventually } from './helpers.ts';
import { Receiver } from './receiver.ts';

export type Node = { id: string; type: string; name?: string; params?: Record<string, unknown>; retry?: { maxAttempts: number; backoffSeconds?: number } };
export type Edge = { from: string; to: string; output?: string };

/**
 * What a test file running workflows starts in its beforeAll: a test app (with `env`), org A's
 * workflow API and a loopback receiver; `close` stops the receiver and the app.
 */
export async function startWorkflowApp(
  env: Record<string, string> = {},
): Promise<{ t: TestApp; w: ReturnType<typeof api>; receiver: Receiver; close(): Promise<void> }> {
  const t = await buildTestApp({ env });
  const receiver = await new Receiver().start();
  return {
    t,
    w: api(t),
    receiver,
    close: async () => {
      await receiver.stop();
      await t.close();
    },
  };
}

/** Shortcuts for the workflow API of org A. */
export function api(t: TestApp) {
  const base = `/api/v1/orgs/${t.orgA.orgId}`;
  const auth = { token: t.orgA.token };
  const self = {
    base,
    auth,
    async create(nodes: Node[], edges: Edge[], extra: Record<string, unknown> = {}) {
      const res = await t.call({ method: 'POST', url: `${base}/workflows`, auth, payload: { name: 'wf', nodes, edges, ...extra } });
      if (res.statusCode !== 201) throw new Error(`create failed ${res.statusCode}: ${res.body}`);
      return res.json() as { id: string; webhookUrl?: string; webhookToken?: string; [k: string]: unknown };
    },
    async run(workflowId: string, payload: Record<string, unknown> = {}) {
      const res = await t.call({ method: 'POST', url: `${base}/workflows/${workflowId}/run`, auth, payload });
      expect(res.statusCode).toBe(201);
      return res.json() as { id: string; status: string };
    },
    async get(runId: string) {
      const res = await t.call({ method: 'GET', url: `${base}/runs/${runId}`, auth });
      expect(res.statusCode).toBe(200);
      return res.json() as Run;
    },
    /** Waits until the run reaches one of the statuses. */
    async until(runId: string, statuses: string[] = ['SUCCEEDED', 'FAILED', 'CANCELED'], timeoutMs = 10_000) {
      return eventually(async () => {
        const run = await self.get(runId);
        return statuses.includes(run.status) ? run : null;
      }, timeoutMs);
    },
    async events(runId: string) {
      const { runEvents } = await import('../src/modules/workflows/tables.ts');
      const { asc, eq } = await import('drizzle-orm');
      const rows = await t.database.db.select().from(runEvents).where(eq(runEvents.runId, runId)).orderBy(asc(runEvents.seq));
      return rows.map((r) => ({ seq: r.seq, ...(r.data as Record<string, unknown>) })) as {
        seq: number;
        type: string;
        nodeId?: string;
        [k: string]: unknown;
      }[];
    },
    step(run: Run, nodeId: string, attempt?: number) {
      const steps = run.steps.filter((s) => s.nodeId === nodeId && (attempt === undefined || s.attempt === attempt));
      return steps[steps.length - 1];
    },
  };
  return self;
}

export interface Step {
  nodeId: string;
  status: string;
  attempt: number;
  items: Record<string, unknown>[] | null;
  outputs: Record<string, Record<string, unknown>[]> | null;
  error: { code: string; message: string; willRetry?: boolean } | null;
  durationMs: number | null;
  startedAt: string;
  finishedAt: string | null;
}

export interface Run {
  id: string;
  workflowId: string;
  status: string;
  testMode: boolean;
  costUsd: number;
  input: Record<string, unknown>;
  error: { code: string; message: string; nodeId?: string } | null;
  steps: Step[];
  startedAt: string | null;
  finishedAt: string | null;
}

export const manual = { id: 'start', type: 'trigger.manual' };
