import { Type, ListEnvelope, ListQueryProps, Nullable, OrgParams, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import type { Db } from '../../platform/db.ts';
import { orgOf } from '../../platform/context.ts';
import { allNodes, getNode } from './nodes/index.ts';
import {
  ApprovalListQuery,
  ApprovalSchema,
  ApproveBody,
  EvaluateBody,
  NodeTypeSchema,
  RejectBody,
  RunBody,
  RunListQuery,
  RunSchema,
  RunSummarySchema,
  TemplateDetailSchema,
  TemplateSchema,
  WorkflowCreateBody,
  WorkflowPatchBody,
  WorkflowSchema,
} from './schemas.ts';
import { secretRoutes } from './secrets-routes.ts';
import { evaluateForEditor, type EvaluateInput } from './evaluate.ts';
import { runStreamRoute, type RunStreamOptions } from './stream.ts';
import type { ApprovalsService } from './approvals.ts';
import type { WorkflowsService } from './service.ts';
import { findTemplate, TEMPLATES, type Template } from './templates/index.ts';
import { notFound } from '../../platform/errors.ts';

const read = { scope: 'workflows:read' };
const write = { scope: 'workflows:write' };
const IdParams = Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) });
const RunParams = Type.Object({ orgId: Type.String({ maxLength: 64 }), runId: Type.String({ maxLength: 64 }) });

export interface WorkflowRoutesOptions extends RunStreamOptions {
  workflows: WorkflowsService;
  approvals: ApprovalsService;
  /** The editor's expression evaluation reads the run it previews. */
  db: Db;
}

export const workflowRoutes = routesPlugin<WorkflowRoutesOptions>(
  'workflow-routes',
  [ORG_ACCESS],
  (app, { workflows, workflowRuns, approvals, db, bus, config, streams }) => {
    for (const schema of [WorkflowSchema, RunSchema, RunSummarySchema, ApprovalSchema, TemplateDetailSchema]) app.addSchema(schema);

    // Node types: generated from the same definitions the engine executes.
    app.get(
      '/node-types',
      {
        config: { access: read },
        schema: {
          tags: ['Workflows'],
          summary: 'The node catalog: type, category, description, params (JSON Schema), outputs',
          params: OrgParams,
          response: { 200: Type.Array(NodeTypeSchema), ...orgErrors() },
        },
      },
      async () =>
        allNodes().map((n) => ({
          type: n.type,
          category: n.category,
          description: n.description,
          params: JSON.parse(JSON.stringify(n.params)),
          outputs: n.outputs,
        })),
    );

    const tags = ['Workflows'];
    app.get(
      '/workflows',
      {
        config: { access: read },
        schema: {
          tags,
          summary: 'List workflows',
          params: OrgParams,
          querystring: Type.Object(
            { ...ListQueryProps, active: Type.Optional(Type.Boolean()), projectId: Type.Optional(Type.String({ maxLength: 64 })) },
            { additionalProperties: false },
          ),
          response: { 200: ListEnvelope(Type.Ref('Workflow')), ...orgErrors() },
        },
      },
      async (request) => workflows.list(orgOf(request), request.query),
    );

    app.post(
      '/workflows',
      {
        config: { access: write },
        schema: {
          tags,
          summary:
            'Create a workflow; 422 WORKFLOW_INVALID names the problem. A trigger.webhook workflow gets its webhookUrl (with token) in this answer only.',
          params: OrgParams,
          body: WorkflowCreateBody,
          response: { 201: Type.Ref('Workflow'), ...orgErrors(422) },
        },
      },
      async (request, reply) => {
        reply.code(201);
        return workflows.create(orgOf(request), { ...request.body, edges: request.body.edges ?? [] });
      },
    );

    app.get(
      '/workflows/:id',
      {
        config: { access: read },
        schema: { tags, summary: 'Get a workflow', params: IdParams, response: { 200: Type.Ref('Workflow'), ...orgErrors() } },
      },
      async (request) => workflows.get(orgOf(request), request.params.id),
    );

    app.patch(
      '/workflows/:id',
      {
        config: { access: write },
        schema: {
          tags,
          summary: 'Change a workflow (runs in flight keep the graph they started with)',
          params: IdParams,
          body: WorkflowPatchBody,
          response: { 200: Type.Ref('Workflow'), ...orgErrors(422) },
        },
      },
      async (request) => workflows.update(orgOf(request), request.params.id, request.body),
    );

    app.post(
      '/workflows/:id/expressions/evaluate',
      {
        config: { access: write },
        schema: {
          tags,
          summary:
            "Evaluate an expression for the editor: a param as written (`{{ … }}` inside text) or a bare JSONata expression, against an item or a run's items, under the run limits",
          description:
            "With `runId` (a run of this workflow), `$input` is the run's input and `$node(\"id\")` its steps' items; with `nodeId` too, `$` is that node's first input item in the run. " +
            'An evaluation error is 422 `EXPRESSION_ERROR` (or `EXPRESSION_LIMIT`) with the reason. `$secrets` are not evaluated here (400).',
          params: IdParams,
          body: EvaluateBody,
          response: {
            200: Type.Object({
              value: Type.Unknown({ description: 'the result (null when undefined)' }),
              item: Type.Object({}, { additionalProperties: true, description: 'the item `$` stood for' }),
            }),
            ...orgErrors(422),
          },
        },
      },
      async (request) => {
        const scope = orgOf(request);
        await workflows.row(scope, request.params.id);
        return evaluateForEditor(db, scope, request.params.id, request.body as EvaluateInput);
      },
    );

    app.delete(
      '/workflows/:id',
      {
        config: { access: write },
        schema: { tags, summary: 'Delete a workflow (its runs stay readable)', params: IdParams, response: { 204: Type.Null(), ...orgErrors() } },
      },
      async (request, reply) => {
        await workflows.delete(orgOf(request), request.params.id);
        reply.code(204).send(null);
      },
    );

    app.post(
      '/workflows/:id/webhook-token',
      {
        config: { access: write },
        schema: {
          tags,
          summary: 'New token for the public webhook trigger URL; the old one stops working',
          params: IdParams,
          response: { 200: Type.Object({ webhookUrl: Type.String(), webhookToken: Type.String() }), ...orgErrors(422) },
        },
      },
      async (request) => workflows.rotateWebhookToken(orgOf(request), request.params.id),
    );

    app.post(
      '/workflows/:id/run',
      {
        config: { access: write },
        schema: {
          tags,
          summary: 'Start a run: returns the run record with status QUEUED',
          params: IdParams,
          body: RunBody,
          response: { 200: Type.Ref('RunSummary'), 201: Type.Ref('RunSummary'), ...orgErrors() },
        },
      },
      async (request, reply) => {
        const ctx = orgOf(request);
        const body = request.body ?? {};
        reply.code(201);
        const arrivedAt = performance.now() - reply.elapsedTime;
        return workflows.gateTrigger(() =>
          workflows.startForScope(
            ctx,
            request.params.id,
            { input: body.input, testMode: body.testMode, trigger: { type: 'manual', by: `${ctx.actor.type}:${ctx.actor.id}` } },
            arrivedAt,
          ),
        );
      },
    );

    const runTags = ['Runs'];
    app.get(
      '/runs',
      {
        config: { access: read },
        schema: {
          tags: runTags,
          summary: 'List runs (filters workflowId, status)',
          params: OrgParams,
          querystring: RunListQuery,
          response: { 200: ListEnvelope(Type.Ref('RunSummary')), ...orgErrors() },
        },
      },
      async (request) => workflowRuns.list(orgOf(request), request.query),
    );

    app.get(
      '/runs/:runId',
      {
        config: { access: read },
        schema: {
          tags: runTags,
          summary: 'The run record with its steps and their items',
          params: RunParams,
          response: { 200: Type.Ref('Run'), ...orgErrors() },
        },
      },
      async (request) => workflowRuns.get(orgOf(request), request.params.runId),
    );

    app.post(
      '/runs/:runId/cancel',
      {
        config: { access: write },
        schema: {
          tags: runTags,
          summary: 'Cancel a QUEUED, RUNNING or WAITING run (the node in flight is interrupted); a final run gives 409',
          params: RunParams,
          response: { 200: Type.Ref('Run'), ...orgErrors(409) },
        },
      },
      async (request) => workflowRuns.cancel(orgOf(request), request.params.runId),
    );

    runStreamRoute(app, { workflowRuns, bus, config, streams });
    secretRoutes(app, workflows.secrets);

    const approvalTags = ['Approvals'];
    app.get(
      '/approvals',
      {
        config: { access: read },
        schema: {
          tags: approvalTags,
          summary: 'List approvals (filter status, runId)',
          params: OrgParams,
          querystring: ApprovalListQuery,
          response: { 200: ListEnvelope(Type.Ref('Approval')), ...orgErrors() },
        },
      },
      async (request) => approvals.list(orgOf(request), request.query),
    );

    app.get(
      '/approvals/:id',
      {
        config: { access: read },
        schema: { tags: approvalTags, summary: 'Get an approval', params: IdParams, response: { 200: Type.Ref('Approval'), ...orgErrors() } },
      },
      async (request) => approvals.get(orgOf(request), request.params.id),
    );

    app.post(
      '/approvals/:id/approve',
      {
        config: { access: write },
        schema: {
          tags: approvalTags,
          summary: 'Approve; the run resumes on `approved` (with editedPayload as the items when given). 409 once decided or expired.',
          params: IdParams,
          body: ApproveBody,
          response: { 200: Type.Ref('Approval'), ...orgErrors(409) },
        },
      },
      async (request) => approvals.decide(orgOf(request), request.params.id, 'approved', request.body ?? {}),
    );

    app.post(
      '/approvals/:id/reject',
      {
        config: { access: write },
        schema: {
          tags: approvalTags,
          summary: 'Reject; the run resumes on `rejected`. 409 once decided or expired.',
          params: IdParams,
          body: RejectBody,
          response: { 200: Type.Ref('Approval'), ...orgErrors(409) },
        },
      },
      async (request) => approvals.decide(orgOf(request), request.params.id, 'rejected', request.body ?? {}),
    );

    const templateTags = ['Templates'];
    app.get(
      '/templates',
      {
        config: { access: read },
        schema: {
          tags: templateTags,
          summary: 'Built-in workflow templates',
          params: OrgParams,
          response: { 200: Type.Array(TemplateSchema), ...orgErrors() },
        },
      },
      async () => TEMPLATES.map(templateSummary),
    );

    app.get(
      '/templates/:id',
      {
        config: { access: read },
        schema: {
          tags: templateTags,
          summary: 'A template with its full definition (nodes and edges)',
          params: IdParams,
          response: { 200: Type.Ref('TemplateDetail'), ...orgErrors() },
        },
      },
      async (request) => {
        const template = findTemplate(request.params.id);
        if (!template) throw notFound('Template');
        return { ...templateSummary(template), nodes: template.workflow.nodes, edges: template.workflow.edges, active: template.workflow.active ?? true };
      },
    );

    app.post(
      '/templates/:id/use',
      {
        config: { access: write },
        schema: {
          tags: templateTags,
          summary: 'Create a workflow from a template (422 WORKFLOW_INVALID when one of its node types is not available)',
          params: IdParams,
          body: Type.Object(
            { name: Type.String({ minLength: 1, maxLength: 200 }), projectId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))) },
            { additionalProperties: false },
          ),
          response: { 201: Type.Ref('Workflow'), ...orgErrors(422) },
        },
      },
      async (request, reply) => {
        reply.code(201);
        return workflows.useTemplate(orgOf(request), request.params.id, request.body);
      },
    );
  },
);

function templateSummary(t: Template) {
  const nodeTypes = [...new Set(t.workflow.nodes.map((n) => n.type))];
  return { id: t.id, name: t.name, description: t.description, category: t.category, nodeTypes, available: nodeTypes.every((type) => Boolean(getNode(type))) };
}
