import type { SQL } from 'drizzle-orm';
import type { Bus } from '../../platform/bus.ts';
import type { Db } from '../../platform/db.ts';
import type { Scope } from '../../platform/context.ts';
import type { LeadStatus } from '../../shared/leads.ts';
import type { Feature, MonthlyLimit } from '../../shared/plans.ts';
import type { NewEvent, OrgMessage } from '../events/index.ts';
import type { NewNotification } from '../notifications/index.ts';
import type { workflows } from './tables.ts';
import type { DraftInput } from '../content/index.ts';

/**
 * What the workflows module uses of other modules, as interfaces: services.ts hands in the real
 * ones (the events module's recorder and organization stream, notifications, orgs, plans, the
 * budgets module's monthly budget, and what the built-in nodes reach: leads, content, agents,
 * conversations, campaigns).
 */

/** The events module's recorder: events written in the caller's transaction (the outbox). */
export interface EventsPort {
  record(tx: Db, list: NewEvent | NewEvent[]): Promise<unknown>;
}

/** The organization stream: approval requests and run summaries to the panel. */
export interface OrgStreamPort {
  /** Sent when the caller's transaction commits. */
  publishInTx(tx: Db, orgId: string, message: OrgMessage): Promise<void>;
  /** Other instances hear of these at commit; call emitLocal for this one after the commit. */
  publishToOthersInTx(tx: Db, orgId: string, messages: OrgMessage[]): Promise<void>;
  /** NOTIFY expressions for the other instances, to run inside the caller's own statement (see Bus.notifyOthersSql). */
  notifyOthersSql(orgId: string, messages: OrgMessage[]): SQL[] | null;
  emitLocal(orgId: string, messages: OrgMessage[]): void;
}

/** A notification to the organization (an approval requested), in the caller's transaction. */
export interface NotifyPort {
  notify(input: NewNotification, tx?: Db): Promise<unknown>;
}

/** The orgs module: the project a request may use. */
export interface OrgsPort {
  projectFor(scope: { orgId: string; projectId: string | null }, requested: string | null | undefined): Promise<string | null>;
}

/** The plans module: the workflows feature and the runsPerMonth limit (CONTRACT §12). */
export interface PlansPort {
  readonly enabled: boolean;
  /** 403 PLAN_FEATURE unless the plan has one of the features. */
  assertFeature(orgId: string, features: Feature | readonly Feature[], db?: Db): Promise<void>;
  /** Counts `n` starts of a monthly limit in the caller's transaction; 429 PLAN_LIMIT with Retry-After when they would pass it. */
  take(tx: Db, orgId: string, limit: MonthlyLimit, n?: number): Promise<void>;
}

/** The organization's monthly budget as runs check it after every cost they add (the budgets module). */
export interface MonthlyBudget {
  /** Throws BUDGET_EXCEEDED (429) once the organization's month is over its budget. */
  guardWorkflowCost(run: { id: string; orgId: string; projectId: string | null; workflowId: string }): Promise<void>;
}

// ------------------------------------------------------------------ what the built-in nodes reach

/** A lead as the leads module hands it out: nodes pass it on whole, as an item. */
export interface LeadItem {
  id: string;
  [field: string]: unknown;
}

/** The fields `leads.upsert` gives (the same rules as POST /leads). */
export interface LeadFields {
  projectId?: string;
  name?: string;
  email?: string;
  phone?: string;
  company?: string;
  website?: string;
  source?: string;
  tags?: string[];
  custom?: Record<string, unknown>;
}

/** `leads.upsert`, `leads.update` and `leads.crmSync` (the leads module). */
export interface LeadsPort {
  /** Creates a lead, or finds the one it matches (email, phone, website): the same de-duplication as POST /leads. */
  create(scope: Scope, input: LeadFields): Promise<{ lead: LeadItem; created: boolean; matchedOn?: string }>;
  /** Changes a lead: any creation field, `status`, `score`. */
  update(scope: Scope, id: string, patch: Omit<LeadFields, 'projectId'> & { status?: LeadStatus; score?: number; scoreReason?: string }): Promise<LeadItem>;
  get(scope: Scope, id: string): Promise<LeadItem>;
}

/** A draft as the content module creates it (it checks the platform and the rest). */
export type DraftRequest = DraftInput;

/** `content.draft` and `content.publish` (the content module); posts are passed on whole, as items. */
export interface ContentPort {
  createDraft(scope: Scope, input: DraftRequest): Promise<Record<string, unknown>>;
  /** The request publishing would send, nothing sent (test mode). */
  previewPublish(scope: Scope, id: string, fallbackIntegrationId?: string): Promise<Record<string, unknown>>;
  get(scope: Scope, id: string): Promise<{ integrationId: string | null }>;
  update(scope: Scope, id: string, patch: { integrationId: string }): Promise<unknown>;
  /** Publishes now through the post's integration (a DRAFT approved first with `approveDraft`). */
  publishNow(scope: Scope, id: string, options: { approveDraft?: boolean }): Promise<Record<string, unknown>>;
}

/** A message `messaging.send` sends through an inbox: to an address or a lead, text or a template. */
export interface WorkflowMessage {
  inboxId: string;
  to?: string;
  leadId?: string;
  text?: string;
  template?: { name: string; language: string; components?: unknown[] };
  /** The same (run, node, item) always names the same message: a re-executed step queues nothing new. */
  messageId: string;
  workflowId: string;
  dryRun?: boolean;
}

/** `messaging.send` through an inbox (the conversations module). */
export interface ConversationsPort {
  /** Queued in the contact's open conversation or a new one, under the channel's rules (their 422 thrown). */
  sendFromWorkflow(scope: Scope, input: WorkflowMessage): Promise<Record<string, unknown>>;
}

/**
 * The agents module as `ai.agent` uses it: one run to completion in this process. Written out
 * rather than imported because the agents module reaches back into workflows (report actions start
 * workflows), so an import would close a cycle.
 */
export interface InlineAgents {
  runInline(request: {
    orgId: string;
    projectId: string | null;
    type: string;
    task: string;
    input?: Record<string, unknown>;
    modelId?: string;
    maxSteps?: number;
    workflowId?: string;
    workflowRunId?: string;
    budgetUsd?: number | null;
    budgetScope?: 'agent' | 'workflow';
    signal?: AbortSignal;
  }): Promise<{ agentRunId: string; status: string; summary: string; usage: { costUsd: number }; reportId?: string; output?: unknown; error?: string }>;
}

/**
 * The campaigns module as `campaigns.start` uses it: a campaign's status and recipients, and its
 * start. Written out rather than imported: the campaigns module imports the workflows' expressions,
 * so an import would close a cycle.
 */
export interface CampaignsPort {
  get(scope: Scope, id: string): Promise<{ status: string; total: number }>;
  start(scope: Scope, id: string): Promise<{ status: string; total: number }>;
}

// ------------------------------------------------------------------ what each service is handed

/** ApprovalsService: approval requests recorded, streamed and notified; the wake-up at expiry on the bus. */
export interface ApprovalsPorts {
  bus: Bus;
  events: EventsPort;
  orgStream: OrgStreamPort;
  notifications: NotifyPort;
}

/** RunsService: run changes announced (the writer), costs recorded and checked against the budget, a canceled run's approvals closed. */
export interface RunsPorts {
  bus: Bus;
  orgStream: OrgStreamPort;
  events: EventsPort;
  /** The module's approvals: a canceled run's pending ones are closed with it. */
  approvals: { closeForRun(tx: Db, orgId: string, runId: string): Promise<void> };
  budgets: MonthlyBudget;
}

/** WorkflowsService: runs started (streamed, counted by the plan), projects checked, schedules kept in step. */
export interface WorkflowsPorts {
  bus: Bus;
  orgStream: OrgStreamPort;
  orgs: OrgsPort;
  /** The module's schedules: a schedule trigger's cron is checked and kept with its workflow. */
  schedules: SchedulesPort;
  plans?: PlansPort;
}

/** The module's schedules (SchedulesService), as the workflows service and the scheduler use them. */
export interface SchedulesPort {
  /** A readable problem with a cron expression or time zone, or null. */
  checkCron(cron: string, timezone?: string): string | null;
  /** Keeps the schedule row in step with the workflow (in the caller's transaction). */
  sync(tx: Db, row: typeof workflows.$inferSelect): Promise<void>;
  remove(tx: Db, workflowId: string): Promise<void>;
}

/** What firing a schedule needs of the workflows service: one run started in the claim's transaction. */
export interface RunStarter {
  startRun(
    orgId: string,
    workflowId: string,
    options: { input: Record<string, unknown>; trigger: Record<string, unknown> & { type: string } },
    tx: Db,
  ): Promise<unknown>;
}

/** Scheduler: the module's schedules, and the workflows service that starts a due schedule's run. */
export interface SchedulerPorts {
  schedules: Pick<SchedulesPort, 'remove'>;
  workflows: RunStarter;
}
