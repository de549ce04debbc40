import { randomBytes } from 'node:crypto';
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Static, TSchema } from 'typebox';
import type { Db } from '../../../platform/db.ts';
import { AppError } from '../../../platform/errors.ts';
import type { Services } from '../../../services.ts';
import { getNode } from '../nodes/registry.ts';
import type { Item, LogLevel, NodeContext, NodeDefinition, NodeExecution, NodeResult, WaitOutcome, WaitRequest } from '../nodes/types.ts';
import { DISPATCHER_WAKE } from '../../events/service.ts';
import { unsealParams } from '../secrets.ts';
import { runSteps, workflowRuns } from '../tables.ts';
import { checkResolvedParams, compile, evaluationError, ExpressionError, resolveParams, type ExpressionScope } from './expressions.ts';
import { executionOrder, type Definition, type WorkflowNode } from './graph.ts';
import { ACTIVE_STATUSES, eventData, RUN_CANCEL, runChannel, runStatusMessage, type ExecEvent, type NewExecEvent, type RunRow } from './writer.ts';

type StepRow = typeof runSteps.$inferSelect;
type StepInsert = typeof runSteps.$inferInsert;

export interface DriverOptions {
  /** Runs executed at once by this instance. */
  concurrency: number;
  /** How long a claim holds a run; renewed while it executes. A crashed holder's runs are claimable after it. */
  leaseMs: number;
}

/** Writes collected while executing, committed together with the next transition. */
interface Pending {
  inserts: StepInsert[];
  updates: { nodeId: string; attempt: number; set: Partial<StepRow> }[];
  events: NewExecEvent[];
  set: Partial<RunRow>;
  /** A payload may depend on the run's cost after the change. */
  platform: { type: string; payload: Record<string, unknown> | ((costUsd: number) => Record<string, unknown>) }[];
}

const empty = (): Pending => ({ inserts: [], updates: [], events: [], set: {}, platform: [] });

class Stop extends Error {}

/**
 * Claims of one run taken over after its holder stopped (crashed, or hung past its lease) before
 * the run is failed with RUN_CRASHED instead of resumed: a run that kills its process every time
 * must not take every restart down with it.
 */
export const MAX_RECOVERIES = 3;

interface RunState {
  run: RunRow;
  def: Definition;
  order: WorkflowNode[];
  latest: Map<string, StepRow | StepInsert>;
  signal: AbortSignal;
  /** The run row's event_seq and cost_usd as last written by this driver (the fast path's guard). */
  seq: number;
  cost: number;
}

const RUN_COLUMNS: Record<string, { column: string; kind: 'text' | 'ts' | 'json' }> = {
  status: { column: 'status', kind: 'text' },
  startedAt: { column: 'started_at', kind: 'ts' },
  finishedAt: { column: 'finished_at', kind: 'ts' },
  error: { column: 'error', kind: 'json' },
  wakeAt: { column: 'wake_at', kind: 'ts' },
  lockedBy: { column: 'locked_by', kind: 'text' },
  lockedUntil: { column: 'locked_until', kind: 'ts' },
};

/** `col = <the value in $7 if it names the column, else unchanged>` for each column the driver sets. */
const RUN_SET = Object.entries(RUN_COLUMNS).map(([key, { column, kind }]) => {
  const value = kind === 'ts' ? `($7::jsonb->>'${key}')::timestamptz` : kind === 'json' ? `nullif($7::jsonb->'${key}', 'null'::jsonb)` : `$7::jsonb->>'${key}'`;
  return `${column} = case when $7::jsonb ? '${key}' then ${value} else ${column} end`;
}).join(',\n      ');

const STEP_COLUMNS = 's(node_id text, attempt int, status text, outputs jsonb, item_count int, error jsonb, started_at timestamptz, finished_at timestamptz, duration_ms int)';

/**
 * A run change in one statement of fixed text, prepared once per connection: the run row update
 * ($7: the columns to set, as JSON) applies only while the run is still active, held by this
 * instance ($3) and at the event sequence ($4) and cost ($5) this driver last wrote; its execution
 * events ($8), step inserts ($9), step updates ($10) and platform events ($11, with their outbox
 * entries) are written only
 * when it matched. No row back means the run was not as expected.
 */
const RUN_FLUSH = `
  with run as (
    update workflow_runs set
      ${RUN_SET},
      event_seq = event_seq + $6::int
    where id = $1 and org_id = $2 and status in ('QUEUED','RUNNING','WAITING') and locked_by = $3
      and event_seq = $4::int and cost_usd = $5::float8
    returning status),
  ev as (
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
  pe as (
    insert into events (id, org_id, project_id, type, payload, at)
    select p.id, p.org_id, p.project_id, p.type, p.payload, p.at
    from run, jsonb_to_recordset($11::jsonb) as p(id text, org_id text, project_id text, type text, payload jsonb, at timestamptz)
    returning id),
  ob as (insert into event_outbox (id) select id from pe)
  select status from run`;

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

function errorCode(error: unknown): string {
  if (error instanceof AppError) return error.code;
  if (error instanceof ExpressionError) return error.code;
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && /^[A-Z_]+$/.test(code) ? code : 'NODE_FAILED';
}

function errorMessage(error: unknown): string {
  return ((error as Error)?.message || String(error)).slice(0, 2000);
}

function outputsOf(step: StepRow | StepInsert | undefined): Record<string, Item[]> {
  return (step?.outputs as Record<string, Item[]> | null | undefined) ?? {};
}

/**
 * The run driver: claims due runs (the runs table is the queue), executes their nodes in graph
 * order in this process, and commits each node's outcome — with the start of the next node — before
 * going on. It stops at WAITING or a final status. A run whose holder died is claimed again when its
 * lease runs out; a node whose finish was committed is never executed again.
 */
export class RunDriver {
  readonly instanceId = randomBytes(6).toString('hex');
  private readonly options: DriverOptions;
  private services!: Services;
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private wake: () => void = () => {};
  private stopping = false;
  private unsubscribe: (() => void) | null = null;

  constructor(options: DriverOptions) {
    this.options = options;
  }

  attach(services: Services, wake: () => void): void {
    this.services = services;
    this.wake = wake;
    this.stopping = false;
    this.unsubscribe = services.bus.subscribe(RUN_CANCEL, (message) => {
      const runId = (message as { runId?: string } | null)?.runId;
      if (runId) this.active.get(runId)?.controller.abort(new Stop('canceled'));
    });
  }

  get running(): number {
    return this.active.size;
  }

  private get db(): Db {
    return this.services.db;
  }

  private now(): Date {
    return this.services.clock.now();
  }

  private guard() {
    return and(inArray(workflowRuns.status, [...ACTIVE_STATUSES]), eq(workflowRuns.lockedBy, this.instanceId));
  }

  /** One claim round; true when more runs may be due right away. */
  async round(): Promise<boolean> {
    if (this.stopping) return false;
    const free = this.options.concurrency - this.active.size;
    if (free <= 0) return false;
    const now = this.now();
    const until = new Date(now.getTime() + this.options.leaseMs);
    // A held run's wake_at is its lease end: due runs are exactly the unheld ones (and those whose
    // holder died), found by one index range scan however many runs are in flight.
    // Taking over a RUNNING run from another holder (not our own lapsed lease) is a recovery.
    const recovery = sql`case when ${workflowRuns.status} = 'RUNNING' and ${workflowRuns.lockedBy} is not null and ${workflowRuns.lockedBy} <> ${this.instanceId} then 1 else 0 end`;
    const claimed = await this.db.update(workflowRuns).set({ lockedBy: this.instanceId, lockedUntil: until, wakeAt: until, recoveries: sql`${workflowRuns.recoveries} + ${recovery}` })
      .where(sql`${workflowRuns.id} in (
        select id from workflow_runs
        where status in ('QUEUED','RUNNING','WAITING') and wake_at <= ${now}
        order by wake_at limit ${free} for update skip locked)`)
      .returning();
    for (const run of claimed) {
      // Our own run whose lease lapsed while it executes (a stalled event loop): the claim renewed it; never run it twice.
      if (!this.active.has(run.id)) this.start(run);
    }
    return claimed.length === free;
  }

  private start(run: RunRow): void {
    const controller = new AbortController();
    const heartbeat = setInterval(() => void this.renew(run.id, controller), Math.max(50, Math.floor(this.options.leaseMs / 3)));
    const done = this.drive(run, controller.signal)
      .catch((error: unknown) => {
        if (!(error instanceof Stop)) this.services.log.error({ err: error, runId: run.id }, 'run driver failed');
      })
      .finally(() => {
        clearInterval(heartbeat);
        this.active.delete(run.id);
        if (!this.stopping) this.wake();
      });
    this.active.set(run.id, { controller, done });
  }

  private async renew(runId: string, controller: AbortController): Promise<void> {
    try {
      const until = new Date(this.now().getTime() + this.options.leaseMs);
      const rows = await this.db.update(workflowRuns).set({ lockedUntil: until, wakeAt: until })
        .where(and(eq(workflowRuns.id, runId), this.guard())).returning({ id: workflowRuns.id });
      // Canceled (or taken over after a stall): stop the node in flight.
      if (rows.length === 0) controller.abort(new Stop('run no longer held'));
    } catch {
      // the next beat retries
    }
  }

  /** Stops claiming, interrupts the nodes in flight and hands their runs back at once. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    for (const { controller } of this.active.values()) controller.abort(new Stop('shutdown'));
    await Promise.all([...this.active.values()].map((a) => a.done));
    await this.db.update(workflowRuns).set({ lockedBy: null, lockedUntil: null, wakeAt: this.now() })
      .where(and(eq(workflowRuns.lockedBy, this.instanceId), inArray(workflowRuns.status, [...ACTIVE_STATUSES]))).catch(() => {});
  }

  /**
   * Commits pending writes with a run change; false when the run is no longer ours to change.
   *
   * The usual case is ONE statement (or, with platform events, one statement and the events'
   * insert in one transaction) and no NOTIFY inside it: the event sequence and cost are known
   * here, so the events are numbered before the write, and the write only applies when the run
   * row still has them (and is still ours and active). Listeners of this instance hear of the
   * change right after the commit; other instances through the batched notifier. Anything
   * unusual (a node that logged or added cost, an approval, a message too large) takes the
   * general path: the writer, numbering from the row, inside a transaction.
   */
  private async flush(state: RunState, pending: Pending, extra?: (tx: Db) => Promise<void>): Promise<boolean> {
    const until = new Date(this.now().getTime() + this.options.leaseMs);
    const set = { lockedUntil: until, wakeAt: until, ...pending.set };
    if (!extra) {
      const done = await this.flushFast(state, pending, set);
      if (done !== null) return done;
    }
    return this.flushGeneral(state, pending, set, extra);
  }

  private platformRows(state: RunState, pending: Pending, costUsd: number) {
    const { run } = state;
    return pending.platform.map((p) => ({
      orgId: run.orgId, projectId: run.projectId, type: p.type,
      payload: typeof p.payload === 'function' ? p.payload(costUsd) : p.payload,
    }));
  }

  /** True or false as flush; null when the row was not as expected (the general path decides). */
  private async flushFast(state: RunState, pending: Pending, set: Partial<RunRow>): Promise<boolean | null> {
    const { run } = state;
    const { events: eventsService, workflowRuns: runs, bus } = this.services;
    const at = this.now().toISOString();
    const stored: ExecEvent[] = pending.events.map((e, i) => ({ seq: state.seq + i + 1, type: e.type, data: eventData(run.id, e, at, state.cost) }));
    const orgMessage = set.status ? runStatusMessage(run, set.status, state.cost) : null;
    const runNotify = stored.length ? bus.notifyOthersSql(runChannel(run.id), [stored]) : [];
    const orgNotify = orgMessage ? this.services.orgStream.notifyOthersSql(run.orgId, [orgMessage]) : [];
    // A message too large for one NOTIFY goes the general way (the bus parks it in a row).
    if (runNotify === null || orgNotify === null) return null;

    const n = stored.length;
    // Platform events of the change (EventsService rows), written only when the run update matched.
    const platform = pending.platform.length ? eventsService.rowsFor(this.platformRows(state, pending, state.cost)) : [];
    const rows = await this.services.database.prepared<{ status: string }>('run_flush', RUN_FLUSH, [
      run.id, run.orgId, this.instanceId, state.seq, state.cost, n, JSON.stringify(set), JSON.stringify(stored),
      JSON.stringify(pending.inserts.map(stepJson)),
      JSON.stringify(pending.updates.map((u) => stepJson({ ...u.set, nodeId: u.nodeId, attempt: u.attempt }))),
      JSON.stringify(platform.map((e) => ({ id: e.id, org_id: e.orgId, project_id: e.projectId, type: e.type, payload: e.payload, at: e.at }))),
    ]);
    if (rows.length === 0) return null;

    // Committed: this instance's listeners now, the other instances in the next batch.
    state.seq += n;
    const others = runs.others;
    if (n) {
      bus.emitLocal(runChannel(run.id), stored);
      others.enqueue({ notify: runNotify, fallback: async () => {} });
    }
    if (orgMessage) {
      this.services.orgStream.emitLocal(run.orgId, [orgMessage]);
      others.enqueue({ notify: orgNotify, fallback: async () => {} });
    }
    if (platform.length) {
      // The dispatcher of this instance now; the others' with the next batch (or their poll).
      bus.emitLocal(DISPATCHER_WAKE, null);
      others.wake(DISPATCHER_WAKE);
    }
    return true;
  }

  private async flushGeneral(state: RunState, pending: Pending, set: Partial<RunRow>, extra?: (tx: Db) => Promise<void>): Promise<boolean> {
    const { run } = state;
    return this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const row = await this.services.workflowRuns.writer.apply(tx, run, { guard: this.guard(), set, events: pending.events });
      if (!row) return false;
      state.seq = row.eventSeq;
      state.cost = row.costUsd;
      if (pending.inserts.length) await tx.insert(runSteps).values(pending.inserts);
      for (const u of pending.updates) {
        await tx.update(runSteps).set(u.set).where(and(eq(runSteps.runId, run.id), eq(runSteps.nodeId, u.nodeId), eq(runSteps.attempt, u.attempt)));
      }
      if (pending.platform.length) await this.services.events.record(tx, this.platformRows(state, pending, row.costUsd));
      if (extra) await extra(tx);
      return true;
    });
  }

  private async drive(claimed: RunRow, signal: AbortSignal): Promise<void> {
    const def = claimed.definition as Definition;
    const latest = new Map<string, StepRow | StepInsert>();
    // A QUEUED run has no steps: its first step is written with the move to RUNNING.
    if (claimed.status !== 'QUEUED') {
      const steps = await this.db.select().from(runSteps).where(eq(runSteps.runId, claimed.id)).orderBy(asc(runSteps.attempt));
      for (const step of steps) latest.set(step.nodeId, step);
    }
    const state: RunState = { run: claimed, def, order: executionOrder(def), latest, signal, seq: claimed.eventSeq, cost: claimed.costUsd };
    let pending = empty();
    const now = this.now();

    if (claimed.status === 'RUNNING' && claimed.recoveries >= MAX_RECOVERIES) {
      await this.failCrashed(state);
      return;
    }
    if (claimed.status === 'QUEUED') {
      pending.set = { status: 'RUNNING', startedAt: now };
      pending.events.push({ type: 'run.started', workflowId: claimed.workflowId });
      pending.platform.push({
        type: 'workflow.run.started',
        payload: { runId: claimed.id, workflowId: claimed.workflowId, workflowName: claimed.workflowName, triggerType: (claimed.trigger as { type?: string }).type ?? 'manual' },
      });
    } else if (claimed.status === 'WAITING') {
      const resumed = await this.resume(state);
      if (!resumed) return;
      pending = resumed;
    }

    for (;;) {
      if (signal.aborted) return;
      const next = this.pickNext(state, pending);
      if (!next) {
        await this.succeed(state, pending);
        return;
      }
      const { node, type, items } = next;
      const previous = state.latest.get(node.id);
      const attempt = (previous?.attempt ?? 0) + 1;
      if (previous && previous.status === 'RUNNING') {
        // The process executing it died: that attempt is over; this one does not count against retries.
        pending.updates.push({ nodeId: node.id, attempt: previous.attempt, set: { status: 'FAILED', error: { code: 'INTERRUPTED', message: 'interrupted by a restart' }, finishedAt: this.now() } });
        pending.events.push({ type: 'node.failed', nodeId: node.id, error: 'interrupted by a restart', willRetry: true });
      }
      const startedAt = this.now();
      const step: StepInsert = { runId: claimed.id, nodeId: node.id, attempt, orgId: claimed.orgId, status: 'RUNNING', startedAt };
      pending.inserts.push(step);
      pending.events.push({ type: 'node.started', nodeId: node.id, attempt });
      if (!(await this.flush(state, pending))) return;
      state.latest.set(node.id, step);
      if (pending.set.status) state.run = { ...state.run, status: pending.set.status };
      pending = empty();

      let result: NodeResult;
      try {
        result = await this.executeNode(state, node, type, items, attempt, (ctx, exec) => type.execute(ctx, exec));
      } catch (error) {
        if (signal.aborted) return;
        const outcome = await this.failNode(state, node, attempt, startedAt, error);
        if (outcome === 'continue') continue;
        return;
      }
      if ('wait' in result) {
        await this.park(state, node, attempt, result.wait);
        return;
      }
      pending = this.finished(state, node.id, attempt, startedAt, result.outputs);
    }
  }

  /** Records a node's outputs; they are committed with the next transition. */
  private finished(state: RunState, nodeId: string, attempt: number, startedAt: Date, outputs: Record<string, Item[]>, base: Pending = empty()): Pending {
    const finishedAt = this.now();
    const durationMs = finishedAt.getTime() - startedAt.getTime();
    const itemCount = Object.values(outputs).reduce((n, list) => n + list.length, 0);
    base.updates.push({ nodeId, attempt, set: { status: 'SUCCEEDED', outputs, itemCount, finishedAt, durationMs, error: null } });
    base.events.push({ type: 'node.finished', nodeId, itemCount, durationMs });
    const step = state.latest.get(nodeId);
    state.latest.set(nodeId, { ...(step as StepInsert), status: 'SUCCEEDED', outputs, itemCount, finishedAt, durationMs });
    return base;
  }

  /** The next node to execute, marking nodes that receive no item as SKIPPED on the way. */
  private pickNext(state: RunState, pending: Pending): { node: WorkflowNode; type: NodeDefinition; items: Item[] } | null {
    for (const node of state.order) {
      const step = state.latest.get(node.id);
      if (step && (step.status === 'SUCCEEDED' || step.status === 'SKIPPED')) continue;
      const type = getNode(node.type);
      if (!type) throw new Error(`node type ${node.type} is not available`);
      if (step && step.status === 'FAILED' && !(step.error as { willRetry?: boolean } | null)?.willRetry) {
        throw new Error(`node ${node.id} failed without retry but the run is still active`);
      }
      if (type.trigger) return { node, type, items: [state.run.input as Item] };
      const items: Item[] = [];
      for (const edge of state.def.edges) {
        if (edge.to !== node.id) continue;
        items.push(...(outputsOf(state.latest.get(edge.from))[edge.output ?? 'main'] ?? []));
      }
      if (items.length === 0) {
        const at = this.now();
        const skipped: StepInsert = { runId: state.run.id, nodeId: node.id, attempt: 1, orgId: state.run.orgId, status: 'SKIPPED', startedAt: at, finishedAt: at, durationMs: 0, itemCount: 0, outputs: {} };
        pending.inserts.push(skipped);
        state.latest.set(node.id, skipped);
        continue;
      }
      return { node, type, items };
    }
    return null;
  }

  private scope(state: RunState): ExpressionScope {
    const run = state.run;
    return {
      input: run.input as Item,
      run: { id: run.id, workflowId: run.workflowId, testMode: run.testMode, startedAt: run.startedAt ? new Date(run.startedAt).toISOString() : null },
      node: (id: string) => {
        const step = state.latest.get(id);
        if (!step || step.status !== 'SUCCEEDED') return undefined;
        return Object.values(outputsOf(step)).flat();
      },
    };
  }

  private async executeNode(
    state: RunState, node: WorkflowNode, type: NodeDefinition, items: Item[], attempt: number,
    call: (ctx: NodeContext, exec: NodeExecution<Static<TSchema>>) => Promise<NodeResult>,
  ): Promise<NodeResult> {
    const raw = unsealParams(node.params, this.services.workflows.secretBox) as Static<TSchema>;
    // `$secrets` reach the node's params only: what it reports (its items, its error) has them masked.
    const secrets = this.services.workflows.secrets.forExecution(state.run.orgId);
    const scope: ExpressionScope = { ...this.scope(state), secrets: secrets.load };
    const exec: NodeExecution<Static<TSchema>> = {
      items,
      rawParams: raw,
      params: async (item?: Item) => {
        const resolved = await resolveParams(raw, item ?? items[0] ?? {}, scope);
        const problem = checkResolvedParams(type.params, resolved);
        if (problem) throw new ExpressionError(`params of node "${node.id}" do not match ${type.type} after evaluation: ${problem}`);
        return resolved as Static<TSchema>;
      },
      evaluate: async (expression: string, item: Item) => {
        try {
          const out = await compile(expression).evaluate(item, { input: scope.input, run: scope.run, node: scope.node });
          return out === undefined ? undefined : JSON.parse(JSON.stringify(out));
        } catch (error) {
          throw evaluationError(expression, error);
        }
      },
    };
    try {
      return secrets.redact(await call(this.context(state, node, attempt), exec));
    } catch (error) {
      throw secrets.redactError(error);
    }
  }

  private context(state: RunState, node: WorkflowNode, attempt: number): NodeContext {
    const run = state.run;
    const services = this.services;
    const ref = { id: run.id, orgId: run.orgId, projectId: run.projectId, workflowId: run.workflowId };
    return {
      services,
      orgId: run.orgId,
      projectId: run.projectId,
      runId: run.id,
      workflowId: run.workflowId,
      nodeId: node.id,
      nodeName: node.name ?? null,
      testMode: run.testMode,
      attempt,
      signal: state.signal,
      runInput: run.input as Item,
      log: async (level: LogLevel, message: string) => {
        const row = await this.db.transaction(async (tx) => services.workflowRuns.writer.apply(tx as unknown as Db, ref, {
          guard: this.guard(), events: [{ type: 'log', nodeId: node.id, level, message: String(message).slice(0, 4000) }],
        }));
        if (row && row.eventSeq > state.seq) {
          state.seq = row.eventSeq;
          state.cost = row.costUsd;
        }
      },
      addCost: (usd: number) => services.workflowRuns.addCost(ref, state.def.budgetUsd ?? null, usd),
      remainingBudgetUsd: async () => {
        if (state.def.budgetUsd === undefined || state.def.budgetUsd === null) return null;
        const [row] = await this.db.select({ cost: workflowRuns.costUsd }).from(workflowRuns).where(eq(workflowRuns.id, run.id));
        return Math.max(0, state.def.budgetUsd - (row?.cost ?? 0));
      },
    };
  }

  /** A node failed: retry (now or after the back-off) or fail the run. */
  private async failNode(state: RunState, node: WorkflowNode, attempt: number, startedAt: Date, error: unknown): Promise<'continue' | 'stop'> {
    const code = errorCode(error);
    const message = errorMessage(error);
    const maxAttempts = code === 'BUDGET_EXCEEDED' ? 1 : node.retry?.maxAttempts ?? 1;
    const willRetry = attempt < maxAttempts;
    const finishedAt = this.now();
    const pending = empty();
    const stepError = { code, message, willRetry };
    pending.updates.push({ nodeId: node.id, attempt, set: { status: 'FAILED', error: stepError, finishedAt, durationMs: finishedAt.getTime() - startedAt.getTime() } });
    pending.events.push({ type: 'node.failed', nodeId: node.id, error: message, willRetry });
    state.latest.set(node.id, { ...(state.latest.get(node.id) as StepInsert), status: 'FAILED', error: stepError });
    if (willRetry) {
      const backoffMs = Math.round((node.retry?.backoffSeconds ?? 0) * 1000);
      if (backoffMs <= 0) {
        return (await this.flush(state, pending)) ? 'continue' : 'stop';
      }
      const wakeAt = new Date(finishedAt.getTime() + backoffMs);
      pending.set = { wakeAt, lockedBy: null, lockedUntil: null };
      if (await this.flush(state, pending)) this.wakeLater(wakeAt);
      return 'stop';
    }
    pending.set = { status: 'FAILED', finishedAt, error: { code, message, nodeId: node.id, nodeName: node.name ?? null }, wakeAt: null, lockedBy: null, lockedUntil: null };
    pending.events.push({ type: 'run.finished', status: 'FAILED' });
    pending.platform.push({
      type: 'workflow.run.failed',
      payload: { runId: state.run.id, workflowId: state.run.workflowId, error: message, errorCode: code, failedNodeId: node.id, failedNodeName: node.name ?? node.id },
    });
    await this.flush(state, pending);
    return 'stop';
  }

  /** Ends a run whose executions keep stopping their process: FAILED with RUN_CRASHED, like any failed run. */
  private async failCrashed(state: RunState): Promise<void> {
    const { run } = state;
    const finishedAt = this.now();
    const pending = empty();
    const step = [...state.latest.values()].find((s) => s.status === 'RUNNING');
    const node = step ? state.def.nodes.find((n) => n.id === step.nodeId) : undefined;
    const where = node ? ` while executing node "${node.name ?? node.id}"` : '';
    const message = `run recovered ${run.recoveries} times after the process executing it stopped${where} (a crash, or a hang past its lease): failed instead of resumed again`;
    if (step && node) {
      pending.updates.push({ nodeId: node.id, attempt: step.attempt, set: { status: 'FAILED', error: { code: 'RUN_CRASHED', message, willRetry: false }, finishedAt } });
      pending.events.push({ type: 'node.failed', nodeId: node.id, error: message, willRetry: false });
    }
    pending.set = { status: 'FAILED', finishedAt, error: { code: 'RUN_CRASHED', message, nodeId: node?.id ?? null, nodeName: node?.name ?? null }, wakeAt: null, lockedBy: null, lockedUntil: null };
    pending.events.push({ type: 'run.finished', status: 'FAILED' });
    pending.platform.push({
      type: 'workflow.run.failed',
      payload: { runId: run.id, workflowId: run.workflowId, error: message, errorCode: 'RUN_CRASHED', failedNodeId: node?.id ?? null, failedNodeName: node ? node.name ?? node.id : null },
    });
    if (await this.flush(state, pending)) this.services.log.warn({ runId: run.id, recoveries: run.recoveries }, 'run failed: its process stopped too many times');
  }

  private async succeed(state: RunState, pending: Pending): Promise<void> {
    const { run, def } = state;
    const finishedAt = this.now();
    const sinks = def.nodes.filter((n) => !def.edges.some((e) => e.from === n.id));
    const itemCount = sinks.reduce((n, node) => {
      const step = state.latest.get(node.id);
      return n + (step?.status === 'SUCCEEDED' ? Number(step.itemCount ?? 0) : 0);
    }, 0);
    const started = run.startedAt ?? pending.set.startedAt ?? finishedAt;
    const durationMs = finishedAt.getTime() - new Date(started).getTime();
    pending.set = { ...pending.set, status: 'SUCCEEDED', finishedAt, wakeAt: null, lockedBy: null, lockedUntil: null };
    pending.events.push({ type: 'run.finished', status: 'SUCCEEDED' });
    pending.platform.push({
      type: 'workflow.run.finished',
      payload: (costUsd) => ({ runId: run.id, workflowId: run.workflowId, status: 'SUCCEEDED', costUsd, durationMs, itemCount }),
    });
    await this.flush(state, pending);
  }

  /** Puts the run in WAITING (and creates the approval in the same transaction). */
  private async park(state: RunState, node: WorkflowNode, attempt: number, wait: WaitRequest): Promise<void> {
    const { run } = state;
    const pending = empty();
    const approval = wait.approval;
    pending.updates.push({ nodeId: node.id, attempt, set: { status: 'WAITING' } });
    const event: NewExecEvent = { type: 'node.waiting', nodeId: node.id };
    if (wait.until) event.until = wait.until.toISOString();
    if (approval?.expiresAt) event.expiresAt = approval.expiresAt.toISOString();
    pending.events.push(event);
    pending.set = { status: 'WAITING', wakeAt: approval ? null : wait.until ?? null, lockedBy: null, lockedUntil: null };
    const ok = await this.flush(state, pending, approval ? async (tx) => {
      await this.services.approvals.request(tx, {
        orgId: run.orgId, projectId: run.projectId, title: approval.title, description: approval.description ?? null,
        runId: run.id, nodeId: node.id, expiresAt: approval.expiresAt ?? null, payload: approval.payload,
      });
    } : undefined);
    if (ok && wait.until) this.wakeLater(wait.until);
  }

  /** Continues a WAITING node whose delay is over or whose approval was decided; null when it must wait on. */
  private async resume(state: RunState): Promise<Pending | null> {
    const { run } = state;
    const waitingId = [...state.latest.values()].find((s) => s.status === 'WAITING')?.nodeId;
    const node = state.def.nodes.find((n) => n.id === waitingId);
    const pending = empty();
    pending.set = { status: 'RUNNING' };
    if (!node) return pending;
    const step = state.latest.get(node.id)!;
    const type = getNode(node.type)!;
    let outcome: WaitOutcome = { kind: 'delay' };
    const approval = await this.services.approvals.latestFor(run.orgId, run.id, node.id);
    if (approval) {
      if (approval.status === 'PENDING') {
        // Woken early (e.g. by a poll): keep waiting for the decision.
        await this.flush(state, { ...empty(), set: { wakeAt: null, lockedBy: null, lockedUntil: null } });
        // A decision committed between our read and that write must not be lost: look again.
        const again = await this.services.approvals.latestFor(run.orgId, run.id, node.id);
        if (again && again.status !== 'PENDING') {
          await this.db.update(workflowRuns).set({ wakeAt: this.now() })
            .where(and(eq(workflowRuns.id, run.id), eq(workflowRuns.status, 'WAITING'), isNull(workflowRuns.lockedBy)));
          this.wake();
        }
        return null;
      }
      outcome = { kind: 'approval', decision: approval.decision === 'approved' ? 'approved' : 'rejected', by: approval.by ?? 'system', comment: approval.comment, editedPayload: approval.editedPayload ?? undefined };
    }
    const items: Item[] = [];
    for (const edge of state.def.edges) if (edge.to === node.id) items.push(...(outputsOf(state.latest.get(edge.from))[edge.output ?? 'main'] ?? []));
    const startedAt = new Date(step.startedAt as Date);
    try {
      if (!type.resume) throw new Error(`node type ${type.type} cannot resume`);
      const result = await this.executeNode(state, node, type, items, step.attempt, (ctx, exec) => type.resume!(ctx, exec, outcome));
      if ('wait' in result) throw new Error('a resumed node cannot wait again');
      return this.finished(state, node.id, step.attempt, startedAt, result.outputs, pending);
    } catch (error) {
      if (state.signal.aborted) return null;
      await this.failNode(state, { ...node, retry: undefined }, step.attempt, startedAt, error);
      return null;
    }
  }

  private wakeLater(at: Date): void {
    const ms = at.getTime() - this.now().getTime();
    if (ms > 600_000) return;
    setTimeout(() => this.wake(), Math.max(0, ms) + 5).unref();
  }
}
