import { eq } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { transaction, type Db } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';
import { monthOf } from '../usage/index.ts';
import { roundUsd } from '../usage/index.ts';
import type { BudgetsPorts, EventsPort, NotifyPort, UsagePort } from './ports.ts';
import { budgetAlerts, budgets } from './tables.ts';

export const WARNING_RATIO = 0.8;

/** Whether spending has reached `ratio` of a limit (a limit of 0 is reached by any spending). */
function reached(usedUsd: number, limitUsd: number, ratio: number): boolean {
  return limitUsd <= 0 ? usedUsd > 0 : usedUsd >= limitUsd * ratio;
}

export interface BudgetStatus {
  limitUsd: number | null;
  usedUsd: number;
  /** Percent of the limit used (0–100+, two decimals), or null without a limit. */
  pct: number | null;
}

export type BudgetScope = 'organization' | 'workflow' | 'agent';

export interface ExceededInput {
  orgId: string;
  projectId?: string | null;
  scope: BudgetScope;
  limitUsd: number;
  usedUsd: number;
  /** The agent run (or workflow run) that was stopped. */
  runId?: string;
  agentRunId?: string;
  workflowRunId?: string;
}

export function pctOf(used: number, limit: number | null): number | null {
  if (limit === null) return null;
  if (limit <= 0) return used > 0 ? 100 : 0;
  return Math.round((used / limit) * 10000) / 100;
}

/**
 * The organization's monthly budget (UTC calendar months) and the budget alerts (CONTRACT §6):
 * `budget.warning` at 80 % and `budget.exceeded` at 100 % of the month's limit, once per month and
 * budget (a scope with its limit), whether a spend or a lower limit takes the month there; and
 * `budget.exceeded` with the run's id whenever a run is stopped by a budget.
 */
export class BudgetsService {
  private readonly db: Db;
  private readonly deps: Deps;
  private readonly usage: UsagePort;
  private readonly events: EventsPort;
  private readonly notifications: NotifyPort;

  constructor(deps: Deps, ports: BudgetsPorts) {
    this.deps = deps;
    this.db = deps.db;
    this.usage = ports.usage;
    this.events = ports.events;
    this.notifications = ports.notifications;
  }

  async limitOf(orgId: string): Promise<number | null> {
    const [row] = await this.db.select({ limit: budgets.monthlyLimitUsd }).from(budgets).where(eq(budgets.orgId, orgId));
    return row?.limit ?? null;
  }

  /** This month's limit, spend and percentage. */
  async monthly(orgId: string): Promise<BudgetStatus> {
    const limitUsd = await this.limitOf(orgId);
    const month = monthOf(this.deps.clock.now());
    const usedUsd = await this.usage.spent(orgId, month.start, month.end);
    return { limitUsd, usedUsd, pct: pctOf(usedUsd, limitUsd) };
  }

  async get(orgId: string) {
    const month = monthOf(this.deps.clock.now());
    const status = await this.monthly(orgId);
    return { monthlyLimitUsd: status.limitUsd, usedUsd: status.usedUsd, pct: status.pct, period: month.period, resetsAt: month.end.toISOString() };
  }

  /**
   * Sets the limit; one that the month's spending already reaches 80 % or 100 % of is announced at
   * once (`budget.warning`, `budget.exceeded`), in the change's transaction: otherwise a limit set
   * below the month's spending would refuse the next run with no alert ever sent.
   */
  async set(orgId: string, monthlyLimitUsd: number | null) {
    const now = this.deps.clock.now();
    const month = monthOf(now);
    await transaction(this.db, async (tx) => {
      await tx
        .insert(budgets)
        .values({ orgId, monthlyLimitUsd, updatedAt: now })
        .onConflictDoUpdate({ target: budgets.orgId, set: { monthlyLimitUsd, updatedAt: now } });
      if (monthlyLimitUsd === null) return;
      await this.alertReached(tx, orgId, monthlyLimitUsd, await this.usage.spent(orgId, month.start, month.end, tx));
    });
    return this.get(orgId);
  }

  /** 429 BUDGET_EXCEEDED while this month's budget is spent; Retry-After points at the next month. */
  async assertCanStart(orgId: string): Promise<void> {
    const limitUsd = await this.limitOf(orgId);
    if (limitUsd === null) return;
    const now = this.deps.clock.now();
    const month = monthOf(now);
    const status = { limitUsd, usedUsd: await this.usage.spent(orgId, month.start, month.end) };
    if (status.usedUsd < status.limitUsd) return;
    // Refused: the month's 100 % (and 80 %) were announced when reached; this makes sure of it
    // (a no-op when they were).
    await transaction(this.db, async (tx) => this.alertReached(tx, orgId, status.limitUsd, status.usedUsd));
    const retryAfterS = Math.max(1, Math.ceil((month.end.getTime() - now.getTime()) / 1000));
    throw new AppError(429, 'BUDGET_EXCEEDED', `The monthly budget of ${status.limitUsd} USD is spent (${status.usedUsd} USD used this month)`, undefined, {
      'retry-after': String(retryAfterS),
    });
  }

  /**
   * The organization's monthly alerts that `usedUsd` reaches with this limit: `budget.warning` at
   * 80 %, `budget.exceeded` at 100 % (a limit set straight past both sends both), each with its
   * owner's notification, in the caller's transaction. Each goes out once per month and limit: the
   * alert row's insert decides, so a PUT racing a spend, or two instances, send it once. Keyed by the
   * limit because a new limit is a new budget: raised after its warning, the higher one warns again
   * at its own 80 %; lowered below the spending, the lower one is announced at the PUT. Setting the
   * same limit again, or going back to one already announced this month, sends nothing.
   */
  async alertReached(tx: Db, orgId: string, limitUsd: number, usedUsd: number): Promise<void> {
    const period = monthOf(this.deps.clock.now()).period;
    const once = async (kind: 'warning' | 'exceeded') => {
      const inserted = await tx
        .insert(budgetAlerts)
        .values({ orgId, scope: 'organization', period, kind, limitUsd })
        .onConflictDoNothing()
        .returning({ orgId: budgetAlerts.orgId });
      return inserted.length > 0;
    };
    if (reached(usedUsd, limitUsd, WARNING_RATIO) && (await once('warning'))) {
      const pct = pctOf(usedUsd, limitUsd)!;
      await this.events.record(tx, {
        orgId,
        projectId: null,
        type: 'budget.warning',
        payload: { scope: 'organization', limitUsd, usedUsd: roundUsd(usedUsd), pct },
      });
      await this.notifications.notify(
        {
          orgId,
          projectId: null,
          kind: 'budget.warning',
          title: `Monthly budget at ${Math.floor(pct)} %`,
          body: `${roundUsd(usedUsd)} USD of ${limitUsd} USD used this month.`,
          link: '/usage',
        },
        tx,
      );
    }
    if (reached(usedUsd, limitUsd, 1) && (await once('exceeded'))) {
      await this.exceeded({ orgId, scope: 'organization', limitUsd, usedUsd }, tx);
    }
  }

  /** After spending: the organization's 80 % and 100 % alerts, once per month and limit. */
  async afterSpend(orgId: string): Promise<void> {
    const limitUsd = await this.limitOf(orgId);
    if (limitUsd === null) return;
    const month = monthOf(this.deps.clock.now());
    const usedUsd = await this.usage.spent(orgId, month.start, month.end);
    if (!reached(usedUsd, limitUsd, WARNING_RATIO)) return;
    await transaction(this.db, async (tx) => this.alertReached(tx, orgId, limitUsd, usedUsd));
  }

  /**
   * The workflow engine's cost guard: a workflow run whose spending put the organization past its
   * monthly budget fails with 429 BUDGET_EXCEEDED (and `budget.exceeded`). Agents stop before that.
   */
  async guardWorkflowCost(run: { id: string; orgId: string; projectId?: string | null }): Promise<void> {
    const status = await this.monthly(run.orgId);
    if (status.limitUsd === null || status.usedUsd <= status.limitUsd) return;
    await this.exceeded({
      orgId: run.orgId,
      projectId: run.projectId ?? null,
      scope: 'organization',
      limitUsd: status.limitUsd,
      usedUsd: status.usedUsd,
      runId: run.id,
      workflowRunId: run.id,
    });
    throw new AppError(429, 'BUDGET_EXCEEDED', `The monthly budget of ${status.limitUsd} USD is exceeded (${status.usedUsd} USD used this month)`);
  }

  /** `budget.exceeded` (event + notification) for a run a budget stopped; inside the caller's transaction when given. */
  async exceeded(input: ExceededInput, tx?: Db): Promise<void> {
    const write = async (db: Db) => {
      const payload: Record<string, unknown> = { scope: input.scope, limitUsd: input.limitUsd, usedUsd: roundUsd(input.usedUsd) };
      if (input.runId) payload.runId = input.runId;
      if (input.agentRunId) payload.agentRunId = input.agentRunId;
      if (input.workflowRunId) payload.workflowRunId = input.workflowRunId;
      await this.events.record(db, {
        orgId: input.orgId,
        projectId: input.scope === 'organization' ? null : (input.projectId ?? null),
        type: 'budget.exceeded',
        payload,
      });
      const label = input.scope === 'organization' ? 'Monthly budget' : input.scope === 'workflow' ? 'Workflow budget' : 'Agent run budget';
      await this.notifications.notify(
        {
          orgId: input.orgId,
          projectId: input.scope === 'organization' ? null : (input.projectId ?? null),
          kind: 'budget.exceeded',
          title: `${label} exceeded`,
          body: `${label} of ${input.limitUsd} USD reached (${roundUsd(input.usedUsd)} USD)${input.runId ? `; run ${input.runId} was stopped` : ''}.`,
          link: input.agentRunId ? `/agent-runs/${input.agentRunId}` : input.workflowRunId ? `/runs/${input.workflowRunId}` : '/usage',
        },
        db,
      );
    };
    if (tx) await write(tx);
    else await transaction(this.db, write);
  }
}
