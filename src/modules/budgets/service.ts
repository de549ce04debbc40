import { eq } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';
import type { EventsService } from '../events/service.ts';
import type { NotificationsService } from '../notifications/service.ts';
import { monthOf } from '../usage/range.ts';
import { roundUsd } from '../usage/pricing.ts';
import type { UsageService } from '../usage/service.ts';
import { budgetAlerts, budgets } from './tables.ts';

export const WARNING_RATIO = 0.8;

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
 * The organization's monthly budget (UTC calendar months) and the budget alerts: `budget.warning`
 * once per month per scope at 80 %, `budget.exceeded` whenever a run is stopped by a budget.
 */
export class BudgetsService {
  private readonly db: Db;
  private readonly deps: Deps;
  private readonly usage: UsageService;
  private readonly events: EventsService;
  private readonly notifications: NotificationsService;

  constructor(deps: Deps, usage: UsageService, events: EventsService, notifications: NotificationsService) {
    this.deps = deps;
    this.db = deps.db;
    this.usage = usage;
    this.events = events;
    this.notifications = notifications;
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

  async set(orgId: string, monthlyLimitUsd: number | null) {
    const now = this.deps.clock.now();
    await this.db.insert(budgets).values({ orgId, monthlyLimitUsd, updatedAt: now })
      .onConflictDoUpdate({ target: budgets.orgId, set: { monthlyLimitUsd, updatedAt: now } });
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
    const retryAfterS = Math.max(1, Math.ceil((month.end.getTime() - now.getTime()) / 1000));
    throw new AppError(429, 'BUDGET_EXCEEDED',
      `The monthly budget of ${status.limitUsd} USD is spent (${status.usedUsd} USD used this month)`,
      undefined, { 'retry-after': String(retryAfterS) });
  }

  /**
   * Sends `budget.warning` (event + notification) the first time this month a scope reaches 80 %
   * of its limit. `scopeKey` tells scopes apart (`organization`, `workflow:<id>`).
   */
  async warnOnce(input: { orgId: string; scope: BudgetScope; scopeKey?: string; projectId?: string | null; limitUsd: number; usedUsd: number; workflowId?: string }): Promise<boolean> {
    if (input.limitUsd <= 0 || input.usedUsd < input.limitUsd * WARNING_RATIO) return false;
    const period = monthOf(this.deps.clock.now()).period;
    return this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const inserted = await tx.insert(budgetAlerts)
        .values({ orgId: input.orgId, scope: input.scopeKey ?? input.scope, period, kind: 'warning' })
        .onConflictDoNothing()
        .returning({ orgId: budgetAlerts.orgId });
      if (inserted.length === 0) return false;
      const pct = pctOf(input.usedUsd, input.limitUsd)!;
      const payload: Record<string, unknown> = { scope: input.scope, limitUsd: input.limitUsd, usedUsd: roundUsd(input.usedUsd), pct };
      if (input.workflowId) payload.workflowId = input.workflowId;
      await this.events.record(tx, { orgId: input.orgId, projectId: input.scope === 'organization' ? null : input.projectId ?? null, type: 'budget.warning', payload });
      await this.notifications.notify({
        orgId: input.orgId,
        projectId: input.scope === 'organization' ? null : input.projectId ?? null,
        kind: 'budget.warning',
        title: `${input.scope === 'organization' ? 'Monthly' : 'Workflow'} budget at ${Math.floor(pct)} %`,
        body: `${roundUsd(input.usedUsd)} USD of ${input.limitUsd} USD used${input.scope === 'organization' ? ' this month' : ''}.`,
        link: input.scope === 'organization' ? '/usage' : input.workflowId ? `/workflows/${input.workflowId}` : null,
      }, tx);
      return true;
    });
  }

  /** After spending: the organization's 80 % warning, once per month. */
  async afterSpend(orgId: string): Promise<void> {
    const limitUsd = await this.limitOf(orgId);
    if (limitUsd === null) return;
    const month = monthOf(this.deps.clock.now());
    const usedUsd = await this.usage.spent(orgId, month.start, month.end);
    await this.warnOnce({ orgId, scope: 'organization', limitUsd, usedUsd });
  }

  /**
   * The workflow engine's cost guard: a workflow run whose spending put the organization past its
   * monthly budget fails with 429 BUDGET_EXCEEDED (and `budget.exceeded`). Agents stop before that.
   */
  async guardWorkflowCost(run: { id: string; orgId: string; projectId?: string | null }): Promise<void> {
    const status = await this.monthly(run.orgId);
    if (status.limitUsd === null || status.usedUsd <= status.limitUsd) return;
    await this.exceeded({ orgId: run.orgId, projectId: run.projectId ?? null, scope: 'organization', limitUsd: status.limitUsd, usedUsd: status.usedUsd, runId: run.id, workflowRunId: run.id });
    throw new AppError(429, 'BUDGET_EXCEEDED', `The monthly budget of ${status.limitUsd} USD is exceeded (${status.usedUsd} USD used this month)`);
  }

  /** `budget.exceeded` (event + notification) for a run a budget stopped; inside the caller's transaction when given. */
  async exceeded(input: ExceededInput, tx?: Db): Promise<void> {
    const write = async (db: Db) => {
      const payload: Record<string, unknown> = { scope: input.scope, limitUsd: input.limitUsd, usedUsd: roundUsd(input.usedUsd) };
      if (input.runId) payload.runId = input.runId;
      if (input.agentRunId) payload.agentRunId = input.agentRunId;
      if (input.workflowRunId) payload.workflowRunId = input.workflowRunId;
      await this.events.record(db, { orgId: input.orgId, projectId: input.scope === 'organization' ? null : input.projectId ?? null, type: 'budget.exceeded', payload });
      const label = input.scope === 'organization' ? 'Monthly budget' : input.scope === 'workflow' ? 'Workflow budget' : 'Agent run budget';
      await this.notifications.notify({
        orgId: input.orgId,
        projectId: input.scope === 'organization' ? null : input.projectId ?? null,
        kind: 'budget.exceeded',
        title: `${label} exceeded`,
        body: `${label} of ${input.limitUsd} USD reached (${roundUsd(input.usedUsd)} USD)${input.runId ? `; run ${input.runId} was stopped` : ''}.`,
        link: input.agentRunId ? `/agent-runs/${input.agentRunId}` : input.workflowRunId ? `/runs/${input.workflowRunId}` : '/usage',
      }, db);
    };
    if (tx) await write(tx);
    else await this.db.transaction(async (trx) => write(trx as unknown as Db));
  }
}
