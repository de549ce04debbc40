import type { TSchema } from 'typebox';
import type { Scope } from '../../../platform/context.ts';
import type { ToolPorts } from '../ports.ts';

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
