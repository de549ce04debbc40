import { randomBytes } from 'node:crypto';
import { and, asc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { Static, TSchema } from 'typebox';
import type { Deps } from '../../../platform/deps.ts';
import { transaction, type Db } from '../../../platform/db.ts';
import type { Bus } from '../../../platform/bus.ts';
import { AppError } from '../../../platform/errors.ts';
import { getNode } from '../nodes/registry.ts';
import type { Item, LogLevel, NodeContext, NodeDefinition, NodeExecution, NodePorts, NodeResult, WaitOutcome, WaitRequest } from '../nodes/types.ts';
import type { ApprovalsService } from '../approvals.ts';
import type { RunsService } from '../runs.ts';
import type { WorkflowsService } from '../service.ts';
import { unsealParams } from '../secrets.ts';
import { runSteps, workflowRuns } from '../tables.ts';
import {
  checkResolvedParams,
  compile,
  evaluate,
  evaluationError,
  ExpressionError,
  resolveParams,
  type ExpressionScope,
} from '../../../platform/expressions/expressions.ts';
import { executionOrder, type Definition, type WorkflowNode } from './graph.ts';
import { ACTIVE_STATUSES, RUN_CANCEL, RUNS_WAKE, type NewExecEvent, type RunChange, type RunRow, type StepInsert } from './writer.ts';

type StepRow = typeof runSteps.$inferSelect;

/** What the driver works with, passed in by src/services.ts. */
export interface DriverDeps extends Deps {
  bus: Bus;
  workflowRuns: RunsService;
  approvals: ApprovalsService;
  /** Unseals node params and loads `$secrets` for one execution. */
  workflows: Pick<WorkflowsService, 'secretBox' | 'secrets'>;
  /** Handed to every node (NodeContext). */
  nodes: NodePorts;
}

export interface DriverOptions {
  /** Runs executed at once by this instance. */
  concurrency: number;
  /** How long a claim holds a run; renewed while it executes. A crashed holder's runs are claimable after it. */
  leaseMs: number;
}

/** Writes collected while executing, committed together with the next transition. */
type Pending = Required<RunChange>;

const empty = (): Pending => ({ inserts: [], updates: [], events: [], set: {}, platform: [] });

/**
 * Sets a step's outcome: into its insert when that is still pending (a pure node's start, not yet
 * committed: the statement's update could not see a row its own insert writes), else as an update.
 */
function settle(pending: Pending, nodeId: string, attempt: number, set: Partial<StepRow>): void {
  const insert = pending.inserts.find((s) => s.nodeId === nodeId && s.attempt === attempt);
  if (insert) Object.assign(insert, set);
  else pending.updates.push({ nodeId, attempt, set });
}

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
  /** The run row's event_seq and cost_usd as this driver last saw them (the run writer's cursor). */
  seq: number;
  cost: number;
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
/**
 * The runs one claim takes, at most `free`, in the order they are served:
 * - runs already under way that are due again (a wait is over, a holder died), oldest first: work
 *   in progress finishes before new work starts;
 * - then queued runs, organization by organization in turn: those of the organizations after
 *   `cursor` (the one served last), each organization's oldest first, then, wrapping around, those
 *   up to it. An organization that queued thousands of runs is served for one claim and then waits
 *   its turn like any other; in the steady state (a slot frees, one run is claimed) the turns go
 *   run by run. Both parts are plain range scans of workflow_runs_queued_idx (org_id, created_at).
 * A held run's wake_at is its lease end, so due runs are exactly the unheld ones (and those whose
 * holder died). Rows another instance holds are skipped.
 */
function fairClaim(now: Date, free: number, cursor: string): SQL {
  return sql`
    select id from workflow_runs
    where id in (
      select id from (
        (select id, 0 as part, '' as org_id, wake_at as at from workflow_runs
          where status in ('RUNNING','WAITING') and wake_at <= ${now} order by wake_at limit ${free})
        union all
        (select id, 1, org_id, created_at from workflow_runs
          where status = 'QUEUED' and org_id > ${cursor} and wake_at <= ${now} order by org_id, created_at limit ${free})
        union all
        (select id, 2, org_id, created_at from workflow_runs
          where status = 'QUEUED' and org_id <= ${cursor} and wake_at <= ${now} order by org_id, created_at limit ${free})
      ) candidates order by part, org_id, at limit ${free})
      and status in ('QUEUED','RUNNING','WAITING') and wake_at <= ${now}
    for update skip locked`;
}

/**
 * Of the organizations served, the one whose turn came last: turns run from just after `cursor`
 * to the end, then wrap around to the start.
 */
function lastInTurn(orgs: string[], cursor: string): string {
  const wrapped = orgs.filter((org) => org <= cursor).sort();
  return wrapped.length > 0 ? wrapped.at(-1)! : orgs.sort().at(-1)!;
}

export class RunDriver {
  readonly instanceId = randomBytes(6).toString('hex');
  private readonly options: DriverOptions;
  private readonly deps: DriverDeps;
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private stopping = false;
  /** The organization whose queued run was started last: the next claim serves the ones after it first. */
  private orgCursor = '';
  private readonly unsubscribe: () => void;

  constructor(deps: DriverDeps, options: DriverOptions) {
    this.deps = deps;
    this.options = options;
    this.unsubscribe = deps.bus.subscribe(RUN_CANCEL, (message) => {
      const runId = (message as { runId?: string } | null)?.runId;
      if (runId) this.active.get(runId)?.controller.abort(new Stop('canceled'));
    });
  }

  /** A slot freed or a wait is over: this instance's run loop (src/workers.ts listens) claims again. */
  private wake(): void {
    this.deps.bus.emitLocal(RUNS_WAKE, null);
  }

  get running(): number {
    return this.active.size;
  }

  private get db(): Db {
    return this.deps.db;
  }

  private now(): Date {
    return this.deps.clock.now();
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
    // Taking over a RUNNING run from another holder (not our own lapsed lease) is a recovery; so is
    // a QUEUED one, whose holder may have died executing its first, pure nodes (not committed yet).
    const recovery = sql`case when ${workflowRuns.status} in ('RUNNING','QUEUED') and ${workflowRuns.lockedBy} is not null and ${workflowRuns.lockedBy} <> ${this.instanceId} then 1 else 0 end`;
    const claimed = await this.db
      .update(workflowRuns)
      .set({ lockedBy: this.instanceId, lockedUntil: until, wakeAt: until, recoveries: sql`${workflowRuns.recoveries} + ${recovery}` })
      .where(sql`${workflowRuns.id} in (${fairClaim(now, free, this.orgCursor)})`)
      .returning();
    const startedOrgs = new Set(claimed.filter((run) => run.status === 'QUEUED').map((run) => run.orgId));
    if (startedOrgs.size > 0) this.orgCursor = lastInTurn([...startedOrgs], this.orgCursor);
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
        if (!(error instanceof Stop)) this.deps.log.error({ err: error, runId: run.id }, 'run driver failed');
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
      const rows = await this.db
        .update(workflowRuns)
        .set({ lockedUntil: until, wakeAt: until })
        .where(and(eq(workflowRuns.id, runId), this.guard()))
        .returning({ id: workflowRuns.id });
      // Canceled (or taken over after a stall): stop the node in flight.
      if (rows.length === 0) controller.abort(new Stop('run no longer held'));
    } catch {
      // the next beat retries
    }
  }

  /** Stops claiming, interrupts the nodes in flight and hands their runs back at once. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe();
    for (const { controller } of this.active.values()) controller.abort(new Stop('shutdown'));
    await Promise.all([...this.active.values()].map((a) => a.done));
    await this.db
      .update(workflowRuns)
      .set({ lockedBy: null, lockedUntil: null, wakeAt: this.now() })
      .where(and(eq(workflowRuns.lockedBy, this.instanceId), inArray(workflowRuns.status, [...ACTIVE_STATUSES])))
      .catch(() => {});
  }

  /**
   * Commits pending writes with a run change, through the run writer (one statement); false when
   * the run is no longer ours to change. With `extra` (a wait that creates an approval), the change
   * and what `extra` writes commit in one transaction.
   */
  private async flush(state: RunState, pending: Pending, extra?: (tx: Db) => Promise<void>): Promise<boolean> {
    const until = new Date(this.now().getTime() + this.options.leaseMs);
    const change: RunChange = { ...pending, set: { lockedUntil: until, wakeAt: until, ...pending.set } };
    const { writer } = this.deps.workflowRuns;
    const options = { heldBy: this.instanceId, cursor: state };
    const written = !extra
      ? (await writer.apply(state.run, change, options)) !== null
      : await transaction(this.db, async (tx) => {
          if (!(await writer.apply(state.run, change, { ...options, tx }))) return false;
          await extra(tx);
          return true;
        });
    if (written && pending.set.status) state.run = { ...state.run, status: pending.set.status };
    return written;
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

    if ((claimed.status === 'RUNNING' || claimed.status === 'QUEUED') && claimed.recoveries >= MAX_RECOVERIES) {
      await this.failCrashed(state);
      return;
    }
    if (claimed.status === 'QUEUED') {
      pending.set = { status: 'RUNNING', startedAt: now };
      pending.events.push({ type: 'run.started', workflowId: claimed.workflowId });
      pending.platform.push({
        type: 'workflow.run.started',
        payload: {
          runId: claimed.id,
          workflowId: claimed.workflowId,
          workflowName: claimed.workflowName,
          triggerType: (claimed.trigger as { type?: string }).type ?? 'manual',
        },
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
        pending.updates.push({
          nodeId: node.id,
          attempt: previous.attempt,
          set: { status: 'FAILED', error: { code: 'INTERRUPTED', message: 'interrupted by a restart' }, finishedAt: this.now() },
        });
        pending.events.push({ type: 'node.failed', nodeId: node.id, error: 'interrupted by a restart', willRetry: true });
      }
      const startedAt = this.now();
      const step: StepInsert = { runId: claimed.id, nodeId: node.id, attempt, orgId: claimed.orgId, status: 'RUNNING', startedAt };
      pending.inserts.push(step);
      pending.events.push({ type: 'node.started', nodeId: node.id, attempt });
      // A node with effects outside the run starts only once its start is committed (it is never
      // executed twice); a pure node's start waits for the next commit (NodeDefinition.pure).
      if (!type.pure) {
        if (!(await this.flush(state, pending))) return;
        pending = empty();
      }
      state.latest.set(node.id, step);

      let result: NodeResult;
      try {
        result = await this.executeNode(state, node, type, items, attempt, (ctx, exec) => type.execute(ctx, exec), type.pure ? pending : undefined);
      } catch (error) {
        if (signal.aborted) return;
        const outcome = await this.failNode(state, node, attempt, startedAt, error, pending);
        if (outcome === 'stop') return;
        pending = empty();
        continue;
      }
      if ('wait' in result) {
        await this.park(state, node, attempt, result.wait, pending);
        return;
      }
      pending = this.finished(state, node.id, attempt, startedAt, result.outputs, pending);
    }
  }

  /** Records a node's outputs; they are committed with the next transition. */
  private finished(state: RunState, nodeId: string, attempt: number, startedAt: Date, outputs: Record<string, Item[]>, base: Pending = empty()): Pending {
    const finishedAt = this.now();
    const durationMs = finishedAt.getTime() - startedAt.getTime();
    const itemCount = Object.values(outputs).reduce((n, list) => n + list.length, 0);
    settle(base, nodeId, attempt, { status: 'SUCCEEDED', outputs, itemCount, finishedAt, durationMs, error: null });
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
        const skipped: StepInsert = {
          runId: state.run.id,
          nodeId: node.id,
          attempt: 1,
          orgId: state.run.orgId,
          status: 'SKIPPED',
          startedAt: at,
          finishedAt: at,
          durationMs: 0,
          itemCount: 0,
          outputs: {},
        };
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
      orgId: run.orgId,
      input: run.input as Item,
      run: { id: run.id, workflowId: run.workflowId, testMode: run.testMode, startedAt: run.startedAt ? new Date(run.startedAt).toISOString() : null },
      nodeIds: () => state.latest.keys(),
      node: (id: string) => {
        const step = state.latest.get(id);
        if (!step || step.status !== 'SUCCEEDED') return undefined;
        return Object.values(outputsOf(step)).flat();
      },
    };
  }

  private async executeNode(
    state: RunState,
    node: WorkflowNode,
    type: NodeDefinition,
    items: Item[],
    attempt: number,
    call: (ctx: NodeContext, exec: NodeExecution<Static<TSchema>>) => Promise<NodeResult>,
    pending?: Pending,
  ): Promise<NodeResult> {
    const raw = unsealParams(node.params, this.deps.workflows.secretBox) as Static<TSchema>;
    // `$secrets` reach the node's params only: what it reports (its items, its error) has them masked.
    const secrets = this.deps.workflows.secrets.forExecution(state.run.orgId);
    const plain = this.scope(state);
    const scope: ExpressionScope = { ...plain, secrets: secrets.load };
    const exec: NodeExecution<Static<TSchema>> = {
      items,
      rawParams: raw,
      params: async (item?: Item) => {
        const resolved = await resolveParams(raw, item ?? items[0] ?? {}, scope);
        const problem = checkResolvedParams(type.params, resolved);
        if (problem) throw new ExpressionError(`params of node "${node.id}" do not match ${type.type} after evaluation: ${problem}`);
        return resolved as Static<TSchema>;
      },
      // A condition as written (flow.if): no `$secrets`; a syntax error fails as its evaluation.
      evaluate: async (expression: string, item: Item) => {
        try {
          compile(expression);
        } catch (error) {
          throw evaluationError(expression, error);
        }
        return evaluate(expression, item, plain);
      },
    };
    try {
      return secrets.redact(await call(this.context(state, node, attempt, pending), exec));
    } catch (error) {
      throw secrets.redactError(error);
    }
  }

  /** With `pending` (a pure node's), its log lines go out with those writes, in order after its start. */
  private context(state: RunState, node: WorkflowNode, attempt: number, pending?: Pending): NodeContext {
    const run = state.run;
    const { workflowRuns: runs } = this.deps;
    const ref = { id: run.id, orgId: run.orgId, projectId: run.projectId, workflowId: run.workflowId };
    return {
      ...this.deps.nodes,
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
        const event: NewExecEvent = { type: 'log', nodeId: node.id, level, message: String(message).slice(0, 4000) };
        if (pending) pending.events.push(event);
        else await runs.writer.apply(ref, { events: [event] }, { heldBy: this.instanceId, cursor: state });
      },
      addCost: (usd: number) => runs.addCost(ref, state.def.budgetUsd ?? null, usd),
      remainingBudgetUsd: async () => {
        if (state.def.budgetUsd === undefined || state.def.budgetUsd === null) return null;
        const [row] = await this.db.select({ cost: workflowRuns.costUsd }).from(workflowRuns).where(eq(workflowRuns.id, run.id));
        return Math.max(0, state.def.budgetUsd - (row?.cost ?? 0));
      },
    };
  }

  /** A node failed: retry (now or after the back-off) or fail the run, committing `pending` (a pure node's start, …) with it. */
  private async failNode(
    state: RunState,
    node: WorkflowNode,
    attempt: number,
    startedAt: Date,
    error: unknown,
    pending: Pending = empty(),
  ): Promise<'continue' | 'stop'> {
    const code = errorCode(error);
    const message = errorMessage(error);
    const maxAttempts = code === 'BUDGET_EXCEEDED' ? 1 : (node.retry?.maxAttempts ?? 1);
    const willRetry = attempt < maxAttempts;
    const finishedAt = this.now();
    const stepError = { code, message, willRetry };
    settle(pending, node.id, attempt, { status: 'FAILED', error: stepError, finishedAt, durationMs: finishedAt.getTime() - startedAt.getTime() });
    pending.events.push({ type: 'node.failed', nodeId: node.id, error: message, willRetry });
    state.latest.set(node.id, { ...(state.latest.get(node.id) as StepInsert), status: 'FAILED', error: stepError });
    if (willRetry) {
      const backoffMs = Math.round((node.retry?.backoffSeconds ?? 0) * 1000);
      if (backoffMs <= 0) {
        return (await this.flush(state, pending)) ? 'continue' : 'stop';
      }
      const wakeAt = new Date(finishedAt.getTime() + backoffMs);
      pending.set = { ...pending.set, wakeAt, lockedBy: null, lockedUntil: null };
      if (await this.flush(state, pending)) this.wakeLater(wakeAt);
      return 'stop';
    }
    pending.set = {
      ...pending.set,
      status: 'FAILED',
      finishedAt,
      error: { code, message, nodeId: node.id, nodeName: node.name ?? null },
      wakeAt: null,
      lockedBy: null,
      lockedUntil: null,
    };
    pending.events.push({ type: 'run.finished', status: 'FAILED' });
    pending.platform.push({
      type: 'workflow.run.failed',
      payload: {
        runId: state.run.id,
        workflowId: state.run.workflowId,
        error: message,
        errorCode: code,
        failedNodeId: node.id,
        failedNodeName: node.name ?? node.id,
      },
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
      pending.updates.push({
        nodeId: node.id,
        attempt: step.attempt,
        set: { status: 'FAILED', error: { code: 'RUN_CRASHED', message, willRetry: false }, finishedAt },
      });
      pending.events.push({ type: 'node.failed', nodeId: node.id, error: message, willRetry: false });
    }
    pending.set = {
      status: 'FAILED',
      finishedAt,
      error: { code: 'RUN_CRASHED', message, nodeId: node?.id ?? null, nodeName: node?.name ?? null },
      wakeAt: null,
      lockedBy: null,
      lockedUntil: null,
    };
    pending.events.push({ type: 'run.finished', status: 'FAILED' });
    pending.platform.push({
      type: 'workflow.run.failed',
      payload: {
        runId: run.id,
        workflowId: run.workflowId,
        error: message,
        errorCode: 'RUN_CRASHED',
        failedNodeId: node?.id ?? null,
        failedNodeName: node ? (node.name ?? node.id) : null,
      },
    });
    if (await this.flush(state, pending)) this.deps.log.warn({ runId: run.id, recoveries: run.recoveries }, 'run failed: its process stopped too many times');
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
  private async park(state: RunState, node: WorkflowNode, attempt: number, wait: WaitRequest, pending: Pending): Promise<void> {
    const { run } = state;
    const approval = wait.approval;
    settle(pending, node.id, attempt, { status: 'WAITING' });
    const event: NewExecEvent = { type: 'node.waiting', nodeId: node.id };
    if (wait.until) event.until = wait.until.toISOString();
    if (approval?.expiresAt) event.expiresAt = approval.expiresAt.toISOString();
    pending.events.push(event);
    pending.set = { ...pending.set, status: 'WAITING', wakeAt: approval ? null : (wait.until ?? null), lockedBy: null, lockedUntil: null };
    const ok = await this.flush(
      state,
      pending,
      approval
        ? async (tx) => {
            await this.deps.approvals.request(tx, {
              orgId: run.orgId,
              projectId: run.projectId,
              title: approval.title,
              description: approval.description ?? null,
              runId: run.id,
              nodeId: node.id,
              expiresAt: approval.expiresAt ?? null,
              payload: approval.payload,
            });
          }
        : undefined,
    );
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
    const approval = await this.deps.approvals.latestFor(run.orgId, run.id, node.id);
    if (approval) {
      if (approval.status === 'PENDING') {
        // Woken early (e.g. by a poll): keep waiting for the decision.
        await this.flush(state, { ...empty(), set: { wakeAt: null, lockedBy: null, lockedUntil: null } });
        // A decision committed between our read and that write must not be lost: look again.
        const again = await this.deps.approvals.latestFor(run.orgId, run.id, node.id);
        if (again && again.status !== 'PENDING') {
          await this.db
            .update(workflowRuns)
            .set({ wakeAt: this.now() })
            .where(and(eq(workflowRuns.id, run.id), eq(workflowRuns.status, 'WAITING'), isNull(workflowRuns.lockedBy)));
          this.wake();
        }
        return null;
      }
      outcome = {
        kind: 'approval',
        decision: approval.decision === 'approved' ? 'approved' : 'rejected',
        by: approval.by ?? 'system',
        comment: approval.comment,
        editedPayload: approval.editedPayload ?? undefined,
      };
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
