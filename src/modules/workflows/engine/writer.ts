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
      const stored: ExecEvent[] = list.map((e, i) => {
        const { type, nodeId, ...rest } = e;
        const data: Record<string, unknown> = { type, runId: run.id };
        if (nodeId !== undefined) data.nodeId = nodeId;
        Object.assign(data, rest);
        if (type === 'run.finished') data.costUsd = row.costUsd;
        data.at = at;
        return { seq: first + i, type, data };
      });
      await tx.insert(runEvents).values(stored.map((e) => ({ runId: run.id, seq: e.seq, type: e.type, data: e.data })));
      await this.bus.publishInTx(tx, runChannel(run.id), stored);
    }
    if (change.set?.status) {
      await this.orgStream.publishInTx(tx, run.orgId, {
        kind: 'run.status',
        data: { runId: run.id, workflowId: run.workflowId, status: row.status, costUsd: row.costUsd, ...(run.projectId ? { projectId: run.projectId } : {}) },
      });
    }
    return row;
  }
}
