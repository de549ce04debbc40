import type { TSchema } from 'typebox';
import type { Config } from '../../../config.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { BudgetsService } from '../../budgets/index.ts';
import type { ContentService } from '../../content/index.ts';
import type { Scope } from '../../../platform/context.ts';
import type { LeadsService } from '../../leads/index.ts';
import type { ReportsService } from '../../reports/index.ts';
import type { UsageService } from '../../usage/index.ts';
import type { ConversationsService } from '../../conversations/index.ts';
import type { CampaignsService } from '../../campaigns/index.ts';
import type { StatsService } from '../../stats/index.ts';

/** A request in the approvals inbox, as `request_approval` asks for it (the workflows module). */
export interface ApprovalRequester {
  submit(input: { orgId: string; projectId?: string | null; title: string; description?: string | null; runId?: string | null; expiresAt?: Date | null; payload?: unknown }): Promise<{ id: string; status?: string }>;
}

/** The conversations bot's tools (reply, handoff, close) and the chatbot analyst's stats. */
export type ConversationToolPort = Pick<ConversationsService, 'get' | 'botReply' | 'handoff' | 'close' | 'stats' | 'list'>;

/**
 * What tools may reach in other modules: only the methods they call, passed in by src/services.ts.
 * A port left out (an installation without that module) hides the tools that need it.
 */
export interface ToolPorts {
  clock: Clock;
  /** Whether fetch_web_page may reach private addresses (tests, an intranet). */
  config: Pick<Config, 'agentWebAllowPrivate'>;
  leads: Pick<LeadsService, 'list' | 'get' | 'update' | 'stats'>;
  usage: Pick<UsageService, 'summary'>;
  budgets: Pick<BudgetsService, 'monthly'>;
  reports: Pick<ReportsService, 'create' | 'availableActions'>;
  content?: Pick<ContentService, 'createDraft'>;
  approvals?: ApprovalRequester;
  conversations?: ConversationToolPort;
  /** The report writer's campaign_stats (CAMPAIGN_SUMMARY). */
  campaigns?: Pick<CampaignsService, 'summary'>;
  /** analytics_summary (the analytics reports): the ga4.* and gsc.* metrics of stats/query. */
  stats?: Pick<StatsService, 'query'>;
}

/** What a tool can reach: the run it works for, and the ports — never another module's tables. */
export interface ToolContext extends ToolPorts {
  orgId: string;
  projectId: string | null;
  agentRunId: string;
  agentType: string;
  workflowRunId: string | null;
  /** The run's input (a CHATBOT turn: the conversation it answers). */
  input: Record<string, unknown>;
  /** The run's scope for every service call: its project only, actor `{ type: 'agent', id: agentRunId }`. */
  leadScope: Scope;
  signal: AbortSignal;
  /** Tells the run which report it wrote. */
  onReport(reportId: string): void;
}

export interface ToolDef {
  name: string;
  description: string;
  /** JSON Schema (TypeBox) of the input; checked before execute. */
  input: TSchema;
  /** False when the module it needs is not installed (e.g. content drafts). */
  available?(ports: ToolPorts): boolean;
  execute(ctx: ToolContext, input: Record<string, unknown>): Promise<unknown>;
}

/** Handoff is not executed like a tool: the loop switches the run to another agent type. */
export const HANDOFF_TOOL = 'handoff';
