import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm';
import type { Bus } from '../../platform/bus.ts';
import type { Clock } from '../../platform/clock.ts';
import { transaction, type Db } from '../../platform/db.ts';
import type { Deps } from '../../platform/deps.ts';
import { AppError, conflict, notFound } from '../../platform/errors.ts';
import { envelope, orderBy, pageOf, statusesOf, type ListQuery } from '../../platform/http/pagination.ts';
import type { Scope } from '../../platform/context.ts';
import { inScope } from '../../platform/tenant.ts';
import type { ApprovalRow } from './approvals.ts';
import type { EventsPort, MonthlyBudget, RunsPorts } from './ports.ts';
import { ACTIVE_STATUSES, FINAL_STATUSES, isFinal, RUN_CANCEL, RunWriter, RUNS_WAKE, type ExecEvent, type RunRef, type RunRow } from './engine/writer.ts';
import { othersNotifier, type OthersNotifier } from './engine/notifier.ts';
import { runEvents, runSteps, workflowRuns } from './tables.ts';

export const RUN_STATUSES = [...ACTIVE_STATUSES, ...FINAL_STATUSES] as const;

type StepRow = typeof runSteps.$inferSelect;

export function publicStep(step: StepRow) {
  const outputs = (step.outputs ?? null) as Record<string, unknown[]> | null;
  return {
    nodeId: step.nodeId,
    status: step.status,
    attempt: step.attempt,
    startedAt: step.startedAt,
    finishedAt: step.finishedAt,
    durationMs: step.durationMs,
    itemCount: step.itemCount,
    items: outputs ? Object.values(outputs).flat() : null,
    outputs,
    error: step.error,
  };
}

export function publicRun(row: RunRow, steps?: StepRow[]) {
  const out = {
    id: row.id,
    workflowId: row.workflowId,
    workflowName: row.workflowName,
    projectId: row.projectId,
    status: row.status,
    testMode: row.testMode,
    input: row.input,
    trigger: row.trigger,
    costUsd: row.costUsd,
    error: row.error,
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    wakeAt: row.status === 'WAITING' ? row.wakeAt : null,
  };
  return steps ? { ...out, steps: steps.map(publicStep) } : out;
}

/** Reading, canceling and costing runs; the driver executes them. */
export class RunsService {
  readonly writer: RunWriter;
  /** Tells other instances about committed run changes, batched (see OthersNotifier). */
  readonly others: OthersNotifier;
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly events: EventsPort;
  private readonly approvals: RunsPorts['approvals'];
  private readonly bus: Bus;
  private readonly budget: MonthlyBudget;

  constructor(deps: Deps, ports: RunsPorts) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.events = ports.events;
    this.approvals = ports.approvals;
    this.bus = ports.bus;
    this.budget = ports.budgets;
    this.writer = new RunWriter(deps.database, deps.clock, ports.bus, ports.orgStream);
    this.others = othersNotifier(ports.bus, deps.db, deps.database.kind);
  }

  async row(scope: Scope, runId: string): Promise<RunRow> {
    const [row] = await this.db
      .select()
      .from(workflowRuns)
      .where(inScope(scope, workflowRuns, eq(workflowRuns.id, runId)));
    if (!row) throw notFound('Run');
    return row;
  }

  async get(scope: Scope, runId: string) {
    const row = await this.row(scope, runId);
    const steps = await this.db.select().from(runSteps).where(eq(runSteps.runId, row.id)).orderBy(asc(runSteps.startedAt), asc(runSteps.attempt));
    return publicRun(row, steps);
  }

  async list(scope: Scope, query: ListQuery & { workflowId?: string; status?: string }) {
    const page = pageOf(query);
    const statuses = query.status ? statusesOf(query.status, RUN_STATUSES) : undefined;
    const where = inScope(
      scope,
      workflowRuns,
      query.workflowId ? eq(workflowRuns.workflowId, query.workflowId) : undefined,
      statuses ? inArray(workflowRuns.status, statuses) : undefined,
    );
    const order = orderBy(
      query.sort,
      {
        createdAt: workflowRuns.createdAt,
        startedAt: workflowRuns.startedAt,
        finishedAt: workflowRuns.finishedAt,
        costUsd: workflowRuns.costUsd,
        status: workflowRuns.status,
      },
      '-createdAt',
      workflowRuns.id,
    );
    const [items, [counted]] = await Promise.all([
      this.db
        .select()
        .from(workflowRuns)
        .where(where)
        .orderBy(...order)
        .limit(page.limit)
        .offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(workflowRuns)
        .where(where),
    ]);
    return envelope(
      items.map((r) => publicRun(r)),
      counted?.n ?? 0,
      page,
    );
  }

  /** CANCELED from QUEUED, RUNNING or WAITING; the node in flight is interrupted. A final run: 409. */
  async cancel(scope: Scope, runId: string) {
    await transaction(this.db, async (tx) => {
      const [row] = await tx
        .select()
        .from(workflowRuns)
        .where(inScope(scope, workflowRuns, eq(workflowRuns.id, runId)))
        .for('update');
      if (!row) throw notFound('Run');
      if (isFinal(row.status)) throw conflict(`The run is already ${row.status}`);
      const now = this.clock.now();
      await this.writer.apply(
        row,
        {
          set: { status: 'CANCELED', finishedAt: now, wakeAt: null, lockedUntil: null, error: { code: 'CANCELED', message: 'canceled' } },
          events: [{ type: 'run.finished', status: 'CANCELED' }],
        },
        { tx, cursor: { seq: row.eventSeq, cost: row.costUsd } },
      );
      await tx
        .update(runSteps)
        .set({ status: 'CANCELED', finishedAt: now })
        .where(and(eq(runSteps.runId, row.id), inArray(runSteps.status, ['RUNNING', 'WAITING'])));
      await this.approvals.closeForRun(tx, row.orgId, row.id);
      // Interrupts the node in flight wherever it executes.
      await this.bus.publishInTx(tx, RUN_CANCEL, { runId: row.id });
    });
    return this.get(scope, runId);
  }

  /** Adds to a run's cost; over the workflow budget (or the monthly one) the node fails with BUDGET_EXCEEDED. */
  async addCost(run: RunRef, budgetUsd: number | null, usd: number): Promise<void> {
    if (!Number.isFinite(usd) || usd <= 0) return;
    const [row] = await this.db
      .update(workflowRuns)
      .set({ costUsd: sql`${workflowRuns.costUsd} + ${usd}` })
      .where(inScope({ orgId: run.orgId, projectId: null }, workflowRuns, eq(workflowRuns.id, run.id)))
      .returning({ costUsd: workflowRuns.costUsd });
    const total = row?.costUsd ?? usd;
    if (budgetUsd !== null && total > budgetUsd) {
      await this.events.record(this.db, {
        orgId: run.orgId,
        projectId: run.projectId,
        type: 'budget.exceeded',
        payload: { scope: 'workflow', workflowId: run.workflowId, limitUsd: budgetUsd, usedUsd: total, runId: run.id },
      });
      throw new AppError(429, 'BUDGET_EXCEEDED', `The run's cost ${total.toFixed(4)} USD exceeds the workflow budget of ${budgetUsd} USD`);
    }
    await this.budget.guardWorkflowCost(run);
  }

  /** A workflow step's approval was decided (or expired): the run is due now. Agents' approvals (no node) are not ours. */
  async onApprovalResolved(tx: Db, approval: ApprovalRow): Promise<void> {
    if (!approval.nodeId || !approval.runId) return;
    const woken = await tx
      .update(workflowRuns)
      .set({ wakeAt: this.clock.now() })
      .where(inScope({ orgId: approval.orgId, projectId: null }, workflowRuns, eq(workflowRuns.id, approval.runId), eq(workflowRuns.status, 'WAITING')))
      .returning({ id: workflowRuns.id });
    if (woken.length) await this.bus.publishInTx(tx, RUNS_WAKE, null);
  }

  /** Execution events after `since`, in order (the replay of a run stream). */
  async eventsAfter(runId: string, since: number, limit = 1000): Promise<ExecEvent[]> {
    const rows = await this.db
      .select()
      .from(runEvents)
      .where(and(eq(runEvents.runId, runId), gt(runEvents.seq, since)))
      .orderBy(asc(runEvents.seq))
      .limit(limit);
    return rows.map((r) => ({ seq: r.seq, type: r.type, data: r.data as Record<string, unknown> }));
  }

  async status(runId: string): Promise<string | undefined> {
    const [row] = await this.db.select({ status: workflowRuns.status }).from(workflowRuns).where(eq(workflowRuns.id, runId));
    return row?.status;
  }
}

export { RUNS_WAKE };
