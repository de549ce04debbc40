import type { TSchema } from 'typebox';
import type { Config } from '../../../config.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db.ts';
import type { BudgetsService } from '../../budgets/service.ts';
import type { LeadScope, LeadsService } from '../../leads/service.ts';
import type { ReportsService } from '../../reports/service.ts';
import type { UsageService } from '../../usage/service.ts';
import type { Peers } from '../peers.ts';

/** What a tool can reach: the organization's data through the services, never another module's tables. */
export interface ToolContext {
  orgId: string;
  projectId: string | null;
  agentRunId: string;
  agentType: string;
  workflowRunId: string | null;
  /** Actor `{ type: 'agent', id: agentRunId }`, with agentRunId set (carried on lead.qualified). */
  leadScope: LeadScope;
  signal: AbortSignal;
  config: Config;
  clock: Clock;
  db: Db;
  leads: LeadsService;
  usage: UsageService;
  budgets: BudgetsService;
  reports: ReportsService;
  peers: Peers;
  /** Tells the run which report it wrote. */
  onReport(reportId: string): void;
}

export interface ToolDef {
  name: string;
  description: string;
  /** JSON Schema (TypeBox) of the input; checked before execute. */
  input: TSchema;
  /** False when the module it needs is not installed (e.g. content drafts). */
  available?(ctx: { peers: Peers }): boolean;
  execute(ctx: ToolContext, input: Record<string, unknown>): Promise<unknown>;
}

/** Handoff is not executed like a tool: the loop switches the run to another agent type. */
export const HANDOFF_TOOL = 'handoff';
