import { and, eq } from 'drizzle-orm';
import type { Bus } from '../../../platform/bus.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Database, Db } from '../../../platform/db.ts';
import type { OrgStreamPort } from '../ports.ts';
import { eventRows, outboxCtes, outboxParam } from '../../events/index.ts';
import { DISPATCHER_WAKE } from '../../events/index.ts';
import { runSteps, workflowRuns } from '../tables.ts';
import { workflowRunDuration } from '../../../platform/metrics.ts';
import { othersNotifier, type OthersNotifier } from './notifier.ts';

/** A run's end in workflow_run_duration_seconds: from its start to its end (0 for a run canceled before it started). */
function observeRunEnd(status: string, startedAt: Date | string | null, finishedAt: Date | string): void {
  const seconds = (new Date(finishedAt).getTime() - new Date(startedAt ?? finishedAt).getTime()) / 1000;
  if (Number.isFinite(seconds)) workflowRunDuration.observe({ status }, Math.max(0, seconds));
}

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

type StepRow = typeof runSteps.$inferSelect;
export type StepInsert = typeof runSteps.$inferInsert;

/** The run row's columns a change sets (each named one, null included; the others stay). */
export type RunSet = Partial<Pick<RunRow, 'status' | 'startedAt' | 'finishedAt' | 'error' | 'wakeAt' | 'lockedBy' | 'lockedUntil'>>;

/** One change of a run: its row, its execution events, its steps and its platform events, written together or not at all. */
export interface RunChange {
  set?: RunSet;
  events?: NewExecEvent[];
  inserts?: StepInsert[];
  updates?: { nodeId: string; attempt: number; set: Partial<StepRow> }[];
  /** A payload may depend on the run's cost after the change. */
  platform?: { type: string; payload: Record<string, unknown> | ((costUsd: number) => Record<string, unknown>) }[];
}

/** The run row's event sequence and cost as a writer last saw them (see RunWriter.apply). */
export interface RunCursor {
  seq: number;
  cost: number;
}

const RUN_COLUMNS: Record<keyof RunSet, { column: string; kind: 'text' | 'ts' | 'json' }> = {
  status: { column: 'status', kind: 'text' },
  startedAt: { column: 'started_at', kind: 'ts' },
  finishedAt: { column: 'finished_at', kind: 'ts' },
  error: { column: 'error', kind: 'json' },
  wakeAt: { column: 'wake_at', kind: 'ts' },
  lockedBy: { column: 'locked_by', kind: 'text' },
  lockedUntil: { column: 'locked_until', kind: 'ts' },
};

/** `col = <the value in $7 if it names the column, else unchanged>` for each column a change sets. */
const RUN_SET = Object.entries(RUN_COLUMNS)
  .map(([key, { column, kind }]) => {
    const value =
      kind === 'ts' ? `($7::jsonb->>'${key}')::timestamptz` : kind === 'json' ? `nullif($7::jsonb->'${key}', 'null'::jsonb)` : `$7::jsonb->>'${key}'`;
    return `${column} = case when $7::jsonb ? '${key}' then ${value} else ${column} end`;
  })
  .join(',\n      ');

const STEP_COLUMNS =
  's(node_id text, attempt int, status text, outputs jsonb, item_count int, error jsonb, started_at timestamptz, finished_at timestamptz, duration_ms int)';

/**
 * Every run change, in one statement of fixed text (prepared once per connection): the run row
 * update ($7: the columns to set, as JSON) applies only while the run is active, held by the given
 * instance if one is given ($3), and at the event sequence ($4) and cost ($5) the writer expects; its
 * execution events ($8), step inserts ($9), step updates ($10) and platform events ($11, written
 * with their outbox entries by the events module's CTEs) are written only when it matched. No row
 * back means the run was not as expected.
 */
const RUN_WRITE = `
  with run as (
    update workflow_runs set
      ${RUN_SET},
      event_seq = event_seq + $6::int
    where id = $1 and org_id = $2 and status in ('QUEUED','RUNNING','WAITING') and ($3::text is null or locked_by = $3::text)
      and event_seq = $4::int and cost_usd = $5::float8
    returning status, started_at),
  re as (
    insert into run_events (run_id, seq, type, data)
    select $1, (e.v->>'seq')::int, e.v->>'type', e.v->'data' from run, jsonb_array_elements($8::jsonb) as e(v)),
  ins as (
    insert into run_steps (run_id, node_id, attempt, org_id, status, outputs, item_count, error, started_at, finished_at, duration_ms)
    select $1, s.node_id, s.attempt, $2, s.status, s.outputs, s.item_count, s.error, s.started_at, s.finished_at, s.duration_ms
    from run, jsonb_to_recordset($9::jsonb) as ${STEP_COLUMNS}),
  upd as (
    update run_steps t set status = s.status, outputs = coalesce(s.outputs, t.outputs), item_count = coalesce(s.item_count, t.item_count),
      error = coalesce(s.error, t.error), finished_at = coalesce(s.finished_at, t.finished_at), duration_ms = coalesce(s.duration_ms, t.duration_ms)
    from run, jsonb_to_recordset($10::jsonb) as ${STEP_COLUMNS}
    where t.run_id = $1 and t.node_id = s.node_id and t.attempt = s.attempt),
  ${outboxCtes({ json: '$11', when: 'run' })}
  select status, started_at from run`;

/** Tries of one change against a row that other writers keep moving (each miss is another writer's commit). */
const MAX_TRIES = 20;

function stepJson(step: Partial<StepRow>): Record<string, unknown> {
  const out: Record<string, unknown> = { node_id: step.nodeId, attempt: step.attempt, status: step.status };
  if (step.outputs != null) out.outputs = step.outputs;
  if (step.itemCount != null) out.item_count = step.itemCount;
  if (step.error != null) out.error = step.error;
  if (step.startedAt != null) out.started_at = step.startedAt;
  if (step.finishedAt != null) out.finished_at = step.finishedAt;
  if (step.durationMs != null) out.duration_ms = step.durationMs;
  return out;
}

/**
 * The one writer of a run's changes — the driver's transitions, a node's logs, a cancel — all in
 * one statement (RUN_WRITE). The writer numbers the execution events and computes cost-dependent
 * payloads before the statement, from the sequence and cost it expects the row to have; when the
 * row has moved on (a log, an added cost), it reads the row again and retries, and gives up (null)
 * once the run is final, or held by another instance.
 *
 * On its own the change is one autocommitted statement with no NOTIFY inside it: this instance's
 * listeners hear of it right after the commit, the other instances through the batched notifier.
 * In a caller's transaction (`tx`: a cancel, a wait that creates an approval) the messages go out
 * with that transaction's commit instead.
 */
export class RunWriter {
  private readonly database: Database;
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly bus: Bus;
  private readonly orgStream: OrgStreamPort;
  private readonly others: OthersNotifier;

  constructor(database: Database, clock: Clock, bus: Bus, orgStream: OrgStreamPort) {
    this.database = database;
    this.db = database.db;
    this.clock = clock;
    this.bus = bus;
    this.orgStream = orgStream;
    this.others = othersNotifier(bus, database.db, database.kind);
  }

  /**
   * Applies the change; returns the run's status after it, or null when the run is final (or, with
   * `heldBy`, no longer held by that instance). `cursor` is where the caller expects the row to be
   * (read first when absent) and is moved forward with each change written.
   */
  async apply(run: RunRef, change: RunChange, options: { heldBy?: string; cursor?: RunCursor; tx?: Db } = {}): Promise<{ status: string } | null> {
    const { heldBy, tx } = options;
    let expected = options.cursor ? { seq: options.cursor.seq, cost: options.cursor.cost } : await this.read(run, heldBy, tx);
    const events = change.events ?? [];
    const set = change.set ?? {};
    for (let tries = 1; expected; tries++) {
      const at = this.clock.now();
      const cost = expected.cost;
      const stored: ExecEvent[] = events.map((e, i) => ({ seq: expected!.seq + i + 1, type: e.type, data: eventData(run.id, e, at.toISOString(), cost) }));
      const platform = eventRows(
        (change.platform ?? []).map((p) => ({
          orgId: run.orgId,
          projectId: run.projectId,
          type: p.type,
          payload: typeof p.payload === 'function' ? p.payload(cost) : p.payload,
        })),
        at,
      );
      const [row] = await this.database.prepared<{ status: string; started_at: Date | string | null }>(
        'run_write',
        RUN_WRITE,
        [
          run.id,
          run.orgId,
          heldBy ?? null,
          expected.seq,
          cost,
          stored.length,
          JSON.stringify(set),
          JSON.stringify(stored),
          JSON.stringify((change.inserts ?? []).map(stepJson)),
          JSON.stringify((change.updates ?? []).map((u) => stepJson({ ...u.set, nodeId: u.nodeId, attempt: u.attempt }))),
          outboxParam(platform),
        ],
        tx,
      );
      if (row) {
        const seq = expected.seq + stored.length;
        // Several changes of one run may be in flight (a node's logs): the cursor only moves forward.
        if (options.cursor && seq >= options.cursor.seq) Object.assign(options.cursor, { seq, cost });
        const status = set.status ? runStatusMessage(run, row.status, cost) : null;
        if (set.status && isFinal(row.status)) observeRunEnd(row.status, row.started_at, set.finishedAt ?? at);
        if (tx) await this.announceAtCommit(tx, run, stored, status, platform.length > 0);
        else this.announce(run, stored, status, platform.length > 0);
        return { status: row.status };
      }
      if (tries >= MAX_TRIES) throw new Error(`run ${run.id}: changed by other writers ${tries} times in a row`);
      expected = await this.read(run, heldBy, tx);
      if (expected && options.cursor && expected.seq >= options.cursor.seq) Object.assign(options.cursor, { seq: expected.seq, cost: expected.cost });
    }
    return null;
  }

  /** The row's sequence and cost, or null when the run is final (or not held by `heldBy`). */
  private async read(run: RunRef, heldBy: string | undefined, tx?: Db): Promise<RunCursor | null> {
    const [row] = await (tx ?? this.db)
      .select({ status: workflowRuns.status, seq: workflowRuns.eventSeq, cost: workflowRuns.costUsd, lockedBy: workflowRuns.lockedBy })
      .from(workflowRuns)
      .where(and(eq(workflowRuns.id, run.id), eq(workflowRuns.orgId, run.orgId)));
    if (!row || !(ACTIVE_STATUSES as readonly string[]).includes(row.status)) return null;
    if (heldBy !== undefined && row.lockedBy !== heldBy) return null;
    return { seq: row.seq, cost: row.cost };
  }

  /**
   * The live copies of a committed change: the events for run streams, a run.status summary for the
   * organization stream, the dispatcher's wake-up. This instance now, the others in the next batch.
   */
  private announce(run: RunRef, stored: ExecEvent[], status: ReturnType<typeof runStatusMessage> | null, platform: boolean): void {
    if (stored.length) {
      this.bus.emitLocal(runChannel(run.id), stored);
      this.others.send(runChannel(run.id), [stored]);
    }
    if (status) {
      this.orgStream.emitLocal(run.orgId, [status]);
      this.others.enqueue({
        notify: this.orgStream.notifyOthersSql(run.orgId, [status]),
        fallback: (db) => this.orgStream.publishToOthersInTx(db, run.orgId, [status]),
      });
    }
    if (platform) {
      this.bus.emitLocal(DISPATCHER_WAKE, null);
      this.others.wake(DISPATCHER_WAKE);
    }
  }

  /** The same, sent to every instance when the caller's transaction commits. */
  private async announceAtCommit(
    tx: Db,
    run: RunRef,
    stored: ExecEvent[],
    status: ReturnType<typeof runStatusMessage> | null,
    platform: boolean,
  ): Promise<void> {
    if (stored.length) await this.bus.publishInTx(tx, runChannel(run.id), stored);
    if (status) await this.orgStream.publishInTx(tx, run.orgId, status);
    if (platform) await this.bus.publishInTx(tx, DISPATCHER_WAKE, null);
  }
}
