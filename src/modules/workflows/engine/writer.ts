import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Bus } from '../../../platform/bus.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db.ts';
import type { OrgStream } from '../../events/org-stream.ts';
import { runEvents, workflowRuns } from '../tables.ts';

export const RUNS_WAKE = 'wake:runs';
export const RUN_CANCEL = 'run:cancel';
export const runChannel = (runId: string) => `run:${runId}`;
export const FINAL_STATUSES = ['SUCCEEDED', 'FAILED', 'CANCELED'] as const;
export const ACTIVE_STATUSES = ['QUEUED', 'RUNNING', 'WAITING'] as const;
export const isFinal = (status: string) => (FINAL_STATUSES as readonly string[]).includes(status);

export type RunRow = typeof workflowRuns.$inferSelect;

/** An execution event before it gets its sequence number and time. */
export interface NewExecEvent {
  type: 'run.started' | 'node.started' | 'node.finished' | 'node.failed' | 'node.waiting' | 'run.finished' | 'log';
  nodeId?: string;
  [field: string]: unknown;
}

/** An execution event as stored, streamed and replayed (SPEC "Execution event"). */
export interface ExecEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

export interface RunRef {
  id: string;
  orgId: string;
  projectId: string | null;
  workflowId: string;
}

type RunSet = Partial<Omit<RunRow, 'id' | 'eventSeq'>>;

/** The stored and streamed data of an execution event (`costUsd` of run.finished: the run's cost after the change). */
export function eventData(runId: string, event: NewExecEvent, at: string, costUsd: number): Record<string, unknown> {
  const { type, nodeId, ...rest } = event;
  const data: Record<string, unknown> = { type, runId };
  if (nodeId !== undefined) data.nodeId = nodeId;
  Object.assign(data, rest);
  if (type === 'run.finished') data.costUsd = costUsd;
  data.at = at;
  return data;
}

/** The run.status summary on the organization stream. */
export function runStatusMessage(run: RunRef, status: string, costUsd: number) {
  return { kind: 'run.status', data: { runId: run.id, workflowId: run.workflowId, status, costUsd, ...(run.projectId ? { projectId: run.projectId } : {}) } };
}

/**
 * Every change of a run goes through here: the run row (guarded, so a canceled run or a lost lease
 * changes nothing), its execution events numbered from the row's counter, the live copy of those
 * events for run streams and a run.status summary for the organization stream — all riding on the
 * caller's transaction.
 */
export class RunWriter {
  private readonly clock: Clock;
  private readonly bus: Bus;
  private readonly orgStream: OrgStream;

  constructor(clock: Clock, bus: Bus, orgStream: OrgStream) {
    this.clock = clock;
    this.bus = bus;
    this.orgStream = orgStream;
  }

  /** Returns the run's status and cost after the change, or null when the guard did not match. */
  async apply(tx: Db, run: RunRef, change: { guard?: SQL; set?: RunSet; events?: NewExecEvent[] }): Promise<{ status: string; costUsd: number; eventSeq: number } | null> {
    const list = change.events ?? [];
    const [row] = await tx.update(workflowRuns)
      .set({ ...change.set, eventSeq: sql`${workflowRuns.eventSeq} + ${list.length}` })
      .where(and(eq(workflowRuns.id, run.id), eq(workflowRuns.orgId, run.orgId), change.guard))
      .returning({ status: workflowRuns.status, costUsd: workflowRuns.costUsd, eventSeq: workflowRuns.eventSeq });
    if (!row) return null;
    if (list.length > 0) {
      const at = this.clock.now().toISOString();
      const first = row.eventSeq - list.length + 1;
      const stored: ExecEvent[] = list.map((e, i) => ({ seq: first + i, type: e.type, data: eventData(run.id, e, at, row.costUsd) }));
      await tx.insert(runEvents).values(stored.map((e) => ({ runId: run.id, seq: e.seq, type: e.type, data: e.data })));
      await this.bus.publishInTx(tx, runChannel(run.id), stored);
    }
    if (change.set?.status) {
      await this.orgStream.publishInTx(tx, run.orgId, runStatusMessage(run, row.status, row.costUsd));
    }
    return row;
  }
}
