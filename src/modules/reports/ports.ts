import type { Db } from '../../platform/db.ts';
import type { Scope } from '../../platform/context.ts';
import type { NewEvent } from '../events/index.ts';
import type { NewNotification } from '../notifications/index.ts';
import type { DraftInput } from '../content/index.ts';

/** The events module's recorder: `agent.report.created` in the saving transaction (the outbox). */
export interface EventsPort {
  record(tx: Db, list: NewEvent | NewEvent[]): Promise<unknown>;
}

/** A notification to the organization (a report written), in the caller's transaction. */
export interface NotifyPort {
  notify(input: NewNotification, tx?: Db): Promise<unknown>;
}

/** `tag_leads`, `untag_leads` and `set_lead_status` (the leads module's bulk change). */
export interface LeadsPort {
  bulk(scope: Scope, input: { ids: string[]; action: 'tag' | 'untag' | 'setStatus'; value?: unknown }): Promise<unknown>;
}

/** A draft as the content module creates it (it checks the platform and the rest). */
export type DraftRequest = DraftInput;

/** `create_draft` (the content module). */
export interface ContentPort {
  createDraft(scope: Scope, input: DraftRequest): Promise<unknown>;
}

/** `start_workflow` and `use_template` (the workflows module). */
export interface WorkflowsPort {
  startForScope(
    scope: { orgId: string; projectId: string | null },
    workflowId: string,
    options: { input?: Record<string, unknown>; trigger?: Record<string, unknown> & { type: string } },
  ): Promise<unknown>;
  useTemplate(scope: { orgId: string; projectId: string | null }, templateId: string, input: { name: string; projectId?: string | null }): Promise<unknown>;
}

/** `run_agent` (the agents module). */
export interface AgentsPort {
  startRun(scope: Scope, request: { type: string; task: string; input?: Record<string, unknown>; projectId?: string }): Promise<unknown>;
}

/**
 * What recommendations' actions reach in other modules, handed in by services.ts; a port left out
 * (a module not installed) makes its actions unavailable.
 */
export interface ActionPorts {
  leads: LeadsPort;
  content?: ContentPort;
  workflows?: WorkflowsPort;
  agents: AgentsPort;
}

/** What ReportsService is handed by services.ts: the recorder and notifications, and the actions' ports. */
export interface ReportsPorts extends ActionPorts {
  events: EventsPort;
  notifications: NotifyPort;
}
