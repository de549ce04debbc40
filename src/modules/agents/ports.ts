import type { WithSubquery } from 'drizzle-orm';
import type { Bus } from '../../platform/bus.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Scope } from '../../platform/context.ts';
import type { Db } from '../../platform/db.ts';
import type { Config } from '../../config.ts';
import type { LeadStatus } from '../../shared/leads.ts';
import type { ReportType } from '../../shared/reports.ts';
import type { BudgetScope } from '../budgets/index.ts';
import type { NewEvent, OrgMessage } from '../events/index.ts';
import type { MonthlyLimit } from '../../shared/plans.ts';
import type { DraftInput } from '../content/index.ts';

/**
 * What the agents module uses of other modules, as interfaces: services.ts hands in the real ones
 * (the events module's recorder and organization stream, orgs, usage, budgets, plans, and what the
 * tools reach: leads, reports, content, approvals, conversations, campaigns, stats).
 */

/** The events module's recorder: `agent.run.*` events in the caller's transaction (the outbox). */
export interface EventsPort {
  record(tx: Db, list: NewEvent | NewEvent[]): Promise<unknown>;
}

/** The organization stream: a run's steps as `agent.step`, in the step's own statement when they fit a NOTIFY. */
export interface OrgStreamPort {
  publish(orgId: string, message: OrgMessage): Promise<void>;
  /** NOTIFY expressions for the other instances, to run inside the caller's own statement; null when a message is too large. */
  notifyOthersSql(orgId: string, messages: OrgMessage[]): ReturnType<Bus['notifyOthersSql']>;
  emitLocal(orgId: string, messages: OrgMessage[]): void;
}

/** The orgs module: the project a run belongs to. */
export interface OrgsPort {
  /**
   * The project a request may use: an API key's own project (naming another is a 403), or the
   * requested one, which must belong to the organization (else 404), or null when none is named.
   */
  projectFor(scope: { orgId: string; projectId: string | null }, requested: string | null | undefined): Promise<string | null>;
}

/** One model call's usage, as the usage module records it. */
export interface UsageCall {
  orgId: string;
  projectId: string | null;
  modelId: string;
  agentRunId?: string | null;
  agentType?: string | null;
  workflowId?: string | null;
  workflowRunId?: string | null;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** The usage module: what a call costs, and its usage row written in the run's own statement. */
export interface UsagePort {
  /** USD for the tokens at the model's price. */
  cost(modelId: string, inputTokens: number, outputTokens: number): number;
  /** The insert as a CTE, for a caller that writes its own change in the same statement (one round trip). */
  recordCte(db: Db, input: UsageCall): WithSubquery;
}

/** The month's budget as the budgets module reports it. */
export interface BudgetStatus {
  limitUsd: number | null;
  usedUsd: number;
  /** Percent of the limit used (0–100+, two decimals), or null without a limit. */
  pct: number | null;
}

/** A run a budget stopped (`budget.exceeded`). */
export interface ExceededRun {
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

/** The month's spending against the organization's budget (usage_summary). */
export interface BudgetStatusPort {
  monthly(orgId: string): Promise<BudgetStatus>;
}

/** The budgets module: the checks before and during a run, and the alerts. */
export interface BudgetsPort extends BudgetStatusPort {
  /** The organization's monthly limit (USD), or null without one. */
  limitOf(orgId: string): Promise<number | null>;
  /** 429 BUDGET_EXCEEDED while this month's budget is spent. */
  assertCanStart(orgId: string): Promise<void>;
  /** After spending: the organization's 80 % and 100 % alerts, once per month and limit. */
  afterSpend(orgId: string): Promise<void>;
  /** `budget.exceeded` (event + notification) for a run a budget stopped; inside the caller's transaction when given. */
  exceeded(input: ExceededRun, tx?: Db): Promise<void>;
  /** The organization's monthly alerts that `usedUsd` reaches with this limit, in the caller's transaction. */
  alertReached(tx: Db, orgId: string, limitUsd: number, usedUsd: number): Promise<void>;
}

/** The plans module: the plan's agentRunsPerMonth limit (CONTRACT §12). */
export interface PlansPort {
  readonly enabled: boolean;
  /** Counts `n` starts of a monthly limit in the caller's transaction; 429 PLAN_LIMIT when they would pass it. */
  take(tx: Db, orgId: string, limit: MonthlyLimit, n?: number): Promise<void>;
}

/** A lead as the leads module hands it out: the fields the tools show a model. */
export interface LeadFields {
  id: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  website: string | null;
  source: string | null;
  status: string;
  score: number;
  scoreReason: string | null;
  tags: string[];
  custom: Record<string, unknown>;
}

/** A change of a lead, as the tools write it. */
export interface LeadChange {
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  company?: string | null;
  website?: string | null;
  tags?: string[];
  custom?: Record<string, unknown>;
  status?: LeadStatus;
  score?: number;
  scoreReason?: string | null;
}

/** search_leads, get_lead, update_lead, qualify_lead, lead_stats, and the bot's lookupLead and updateLead. */
export interface LeadsPort {
  list(
    scope: Scope,
    query: { q?: string; status?: string; minScore?: number; tags?: string; projectId?: string; page: number; pageSize: number },
  ): Promise<{ total: number; items: LeadFields[] }>;
  get(scope: Scope, id: string): Promise<LeadFields>;
  update(scope: Scope, id: string, patch: LeadChange): Promise<LeadFields>;
  /** Total, count by status and by source, average score, leads created in the last 7 and 30 days. */
  stats(scope: Scope, projectId?: string): Promise<unknown>;
}

/** usage_summary: the organization's AI usage and cost over a period, in total and grouped. */
export interface UsageSummaryPort {
  summary(orgId: string, options: { from: Date; to: Date; groupBy?: 'model' | 'agentType' }): Promise<{ totals: unknown; groups: unknown[] }>;
}

/** A report as create_report writes it. */
export interface ReportRequest {
  orgId: string;
  projectId: string | null;
  type: ReportType;
  title: string;
  summary: string;
  body?: string | null;
  metrics?: Record<string, unknown>;
  recommendations?: { title: string; description?: string; action: { type: string; params?: Record<string, unknown> } }[];
  agentRunId?: string | null;
  agentType?: string | null;
}

/** create_report (the reports module). */
export interface ReportsPort {
  create(input: ReportRequest): Promise<{ id: string; type: string; recommendations: unknown[] }>;
  /** The recommendations' action types installed here. */
  availableActions(): string[];
}

/** A draft as the content module creates it (it checks the platform and the rest). */
export type DraftRequest = DraftInput;

/** create_draft (the content module). */
export interface ContentPort {
  createDraft(scope: Scope, input: DraftRequest): Promise<{ id: string; status?: string; platform?: string }>;
}

/** A request in the approvals inbox, as `request_approval` asks for it (the workflows module). */
export interface ApprovalRequester {
  submit(input: {
    orgId: string;
    projectId?: string | null;
    title: string;
    description?: string | null;
    runId?: string | null;
    expiresAt?: Date | null;
    payload?: unknown;
  }): Promise<{ id: string; status?: string }>;
}

/** The conversations bot's tools (reply, handoff, close, the conversation's lead) and the chatbot analyst's stats. */
export interface ConversationToolPort {
  get(scope: Scope, id: string): Promise<unknown>;
  list(scope: Scope, query: { handledBy?: string; inboxId?: string; page: number; pageSize: number; sort?: string }): Promise<{ items: unknown[] }>;
  /** Sends the bot's answer; dropped when the conversation is closed or a person handles it. */
  botReply(scope: Scope, id: string, text: string): Promise<{ message: { id: string; status: string } } | { dropped: string }>;
  handoff(scope: Scope, id: string, input: { reason: string }): Promise<unknown>;
  close(scope: Scope, id: string): Promise<unknown>;
  stats(scope: Scope, query: { from?: string; to?: string; inboxId?: string }): Promise<Record<string, unknown>>;
}

/** The report writer's campaign_stats (CAMPAIGN_SUMMARY): a campaign's figures. */
export interface CampaignsPort {
  summary(scope: Scope, id: string): Promise<unknown>;
}

/** analytics_summary (the analytics reports): the ga4.* and gsc.* metrics of stats/query. */
export interface StatsPort {
  query(
    scope: Scope,
    input: { metrics: string[]; from: string; to: string; granularity: 'day' },
  ): Promise<{
    series: { metric: string; total: number; points: { at: string | Date; value: number }[] }[];
  }>;
}

/**
 * What tools may reach in other modules: only the methods they call, passed in by src/services.ts.
 * A port left out (an installation without that module) hides the tools that need it.
 */
export interface ToolPorts {
  clock: Clock;
  /** Whether fetch_web_page may reach private addresses (tests, an intranet). */
  config: Pick<Config, 'agentWebAllowPrivate'>;
  leads: LeadsPort;
  usage: UsageSummaryPort;
  budgets: BudgetStatusPort;
  reports: ReportsPort;
  content?: ContentPort;
  approvals?: ApprovalRequester;
  conversations?: ConversationToolPort;
  /** The report writer's campaign_stats (CAMPAIGN_SUMMARY). */
  campaigns?: CampaignsPort;
  /** analytics_summary (the analytics reports): the ga4.* and gsc.* metrics of stats/query. */
  stats?: StatsPort;
}

/** The ports of AgentsService. */
export interface AgentsPorts {
  bus: Bus;
  orgStream: OrgStreamPort;
  events: EventsPort;
  orgs: OrgsPort;
  usage: UsagePort;
  budgets: BudgetsPort;
  /** What the agents' tools reach in other modules. */
  tools: ToolPorts;
  /** The plan's agentRunsPerMonth limit (CONTRACT §12). */
  plans?: PlansPort;
}
