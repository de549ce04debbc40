import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { badRequest, unprocessable } from '../../platform/errors.ts';
import { explainErrors } from '../../platform/http/validation.ts';
import { LEAD_STATUSES } from '../../shared/leads.ts';
import type { Scope } from '../../platform/context.ts';
import { findTemplate } from '../workflows/index.ts';
import type { ActionPorts, DraftRequest } from './ports.ts';

const LeadIds = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 1000 });
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 20 });

/** Params of each action a recommendation can carry; POST …/reports/:id/apply-recommendation executes it. */
export const ACTION_PARAMS = {
  tag_leads: Type.Object({ leadIds: LeadIds, tags: Tags }, { additionalProperties: false }),
  untag_leads: Type.Object({ leadIds: LeadIds, tags: Tags }, { additionalProperties: false }),
  set_lead_status: Type.Object({ leadIds: LeadIds, status: Type.Union(LEAD_STATUSES.map((s) => Type.Literal(s))) }, { additionalProperties: false }),
  create_draft: Type.Object(
    {
      projectId: Type.Optional(Type.String({ maxLength: 64 })),
      platform: Type.String({ minLength: 1, maxLength: 32 }),
      body: Type.String({ minLength: 1, maxLength: 10_000 }),
      hashtags: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 100 }), { maxItems: 30 })),
      scheduledAt: Type.Optional(Type.String({ maxLength: 40 })),
    },
    { additionalProperties: false },
  ),
  start_workflow: Type.Object(
    {
      workflowId: Type.String({ minLength: 1, maxLength: 64 }),
      input: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    },
    { additionalProperties: false },
  ),
  run_agent: Type.Object(
    {
      type: Type.String({ minLength: 1, maxLength: 64 }),
      task: Type.String({ minLength: 1, maxLength: 4000 }),
      input: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    },
    { additionalProperties: false },
  ),
  use_template: Type.Object(
    {
      templateId: Type.String({ minLength: 1, maxLength: 100 }),
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      projectId: Type.Optional(Type.String({ maxLength: 64 })),
    },
    { additionalProperties: false },
  ),
} satisfies Record<string, TSchema>;

export type ActionType = keyof typeof ACTION_PARAMS;
export const ACTION_TYPES = Object.keys(ACTION_PARAMS) as ActionType[];

export const ACTION_DESCRIPTIONS: Record<ActionType, string> = {
  tag_leads: 'Add tags to leads: { leadIds, tags }',
  untag_leads: 'Remove tags from leads: { leadIds, tags }',
  set_lead_status: 'Set the status of leads: { leadIds, status }',
  create_draft: 'Create a social content draft: { platform, body, hashtags?, scheduledAt?, projectId? }',
  start_workflow: 'Start a workflow run: { workflowId, input? }',
  run_agent: 'Start an agent run: { type, task, input? }',
  use_template: 'Create a workflow from a built-in template (GET /templates): { templateId, name?, projectId? }',
};

/** A recommendation as an author (an agent, or the starter list) writes it. */
export interface RecommendationInput {
  title: string;
  description?: string;
  action: { type: string; params?: Record<string, unknown> };
}

type Installed = Pick<ActionPorts, 'content' | 'workflows'>;

/** The action types this installation can execute (drafts and workflows only when those modules exist). */
export function availableActions(ports: Installed): ActionType[] {
  return ACTION_TYPES.filter((t) => {
    if (t === 'create_draft') return Boolean(ports.content);
    if (t === 'start_workflow' || t === 'use_template') return Boolean(ports.workflows);
    return true;
  });
}

/** Checks an action's type and params; the message names the problem (for tools and the API alike). */
export function checkAction(deps: Installed, action: { type: string; params?: unknown }): { type: ActionType; params: Record<string, unknown> } {
  const type = action.type as ActionType;
  const schema = ACTION_PARAMS[type];
  if (!schema || !availableActions(deps).includes(type)) {
    throw badRequest(`Unknown action type "${action.type}"; available: ${availableActions(deps).join(', ')}`);
  }
  const params = action.params ?? {};
  if (!Value.Check(schema, params)) {
    const { message, details } = explainErrors([...Value.Errors(schema, params)], 'params', schema);
    throw badRequest(`Action ${type}: ${message}`, details);
  }
  if (type === 'use_template' && !findTemplate((params as { templateId: string }).templateId)) {
    throw badRequest(`Action use_template: no template "${(params as { templateId: string }).templateId}" (see GET /templates)`);
  }
  return { type, params: params as Record<string, unknown> };
}

/** Executes an action for real, as the caller (their organization, project and actor). */
export async function executeAction(deps: ActionPorts, scope: Scope, action: { type: string; params: Record<string, unknown> }): Promise<unknown> {
  const { type, params } = checkAction(deps, action);
  switch (type) {
    case 'tag_leads':
    case 'untag_leads': {
      const p = params as Static<typeof ACTION_PARAMS.tag_leads>;
      return deps.leads.bulk(scope, { ids: p.leadIds, action: type === 'tag_leads' ? 'tag' : 'untag', value: p.tags });
    }
    case 'set_lead_status': {
      const p = params as Static<typeof ACTION_PARAMS.set_lead_status>;
      return deps.leads.bulk(scope, { ids: p.leadIds, action: 'setStatus', value: p.status });
    }
    case 'create_draft': {
      const { content } = deps;
      if (!content) throw unprocessable('ACTION_UNAVAILABLE', 'Content drafts are not available');
      // params matched ACTION_PARAMS.create_draft; the content service checks the platform and the rest.
      return content.createDraft(scope, params as unknown as DraftRequest);
    }
    case 'start_workflow': {
      const { workflows } = deps;
      if (!workflows) throw unprocessable('ACTION_UNAVAILABLE', 'Workflows are not available');
      const p = params as Static<typeof ACTION_PARAMS.start_workflow>;
      return workflows.startForScope(scope, p.workflowId, { input: p.input ?? {}, trigger: { type: 'recommendation', actor: scope.actor } });
    }
    case 'run_agent': {
      const p = params as Static<typeof ACTION_PARAMS.run_agent>;
      return deps.agents.startRun(scope, { type: p.type, task: p.task, input: p.input ?? {} });
    }
    case 'use_template': {
      const { workflows } = deps;
      if (!workflows) throw unprocessable('ACTION_UNAVAILABLE', 'Workflows are not available');
      const p = params as Static<typeof ACTION_PARAMS.use_template>;
      return workflows.useTemplate(scope, p.templateId, { name: p.name ?? findTemplate(p.templateId)!.name, projectId: p.projectId });
    }
  }
}
