import { Type, Timestamp, Nullable, FreeObject, ListQueryProps } from '../../platform/http/schemas.ts';
import { APPROVAL_STATUSES } from './approvals.ts';
import { RUN_STATUSES } from './runs.ts';

const NodeId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' });

export const NodeSchema = Type.Object(
  {
    id: NodeId,
    type: Type.String({ minLength: 1, maxLength: 64 }),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    params: Type.Optional(FreeObject('node params; strings may hold JSONata `{{ … }}` expressions', { maxProperties: 100 })),
    retry: Type.Optional(
      Type.Object(
        {
          maxAttempts: Type.Integer({ minimum: 1, maximum: 10 }),
          backoffSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: 86_400 })),
        },
        { additionalProperties: false },
      ),
    ),
    // Kept for editors, ignored by the engine (CONTRACT §4).
    position: Type.Optional(
      Type.Object(
        {
          x: Type.Number({ minimum: -1_000_000, maximum: 1_000_000 }),
          y: Type.Number({ minimum: -1_000_000, maximum: 1_000_000 }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const EdgeSchema = Type.Object(
  {
    from: NodeId,
    to: NodeId,
    output: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'branch of the source node; default `main`' })),
  },
  { additionalProperties: false },
);

// CONTRACT §4: at most 500 nodes; edges leave room for branches and joins between them.
const Nodes = Type.Array(NodeSchema, { minItems: 1, maxItems: 500 });
const Edges = Type.Array(EdgeSchema, { maxItems: 2000 });
const Budget = Nullable(Type.Number({ minimum: 0, maximum: 1_000_000 }));

export const WorkflowCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    projectId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    description: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
    nodes: Nodes,
    edges: Type.Optional(Edges),
    budgetUsd: Type.Optional(Budget),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const WorkflowPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    projectId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    description: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
    nodes: Type.Optional(Nodes),
    edges: Type.Optional(Edges),
    budgetUsd: Type.Optional(Budget),
    active: Type.Optional(Type.Boolean()),
    version: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2_147_483_647,
        description: 'the version this change was made on: a different stored version gives 409 CONFLICT (nothing changes)',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const WorkflowSchema = Type.Object(
  {
    id: Type.String(),
    projectId: Nullable(Type.String()),
    name: Type.String(),
    description: Nullable(Type.String()),
    nodes: Type.Array(FreeObject()),
    edges: Type.Array(FreeObject()),
    budgetUsd: Nullable(Type.Number()),
    active: Type.Boolean(),
    trigger: FreeObject('{ type, nodeId, events? | cron?, timezone? | webhookUrl? }'),
    templateId: Nullable(Type.String()),
    version: Type.Integer({ description: '+1 on every change; send it with a PATCH to refuse overwriting a change made meanwhile' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    webhookUrl: Type.Optional(Type.String({ description: 'only when a webhook token is created: the public trigger URL with its token' })),
    webhookToken: Type.Optional(Type.String()),
  },
  { $id: 'Workflow' },
);

export const StepSchema = Type.Object({
  nodeId: Type.String(),
  status: Type.String({ description: 'RUNNING, WAITING, SUCCEEDED, FAILED, SKIPPED, CANCELED' }),
  attempt: Type.Integer(),
  startedAt: Timestamp,
  finishedAt: Nullable(Timestamp),
  durationMs: Nullable(Type.Integer()),
  itemCount: Nullable(Type.Integer()),
  items: Nullable(Type.Array(FreeObject())),
  outputs: Nullable(FreeObject('items per output name')),
  error: Nullable(FreeObject('{ code, message, willRetry }')),
});

const runFields = {
  id: Type.String(),
  workflowId: Type.String(),
  workflowName: Type.String(),
  projectId: Nullable(Type.String()),
  status: Type.Union(RUN_STATUSES.map((s) => Type.Literal(s))),
  testMode: Type.Boolean(),
  input: FreeObject(),
  trigger: FreeObject(),
  costUsd: Type.Number(),
  error: Nullable(FreeObject('{ code, message, nodeId?, nodeName? }')),
  createdAt: Timestamp,
  startedAt: Nullable(Timestamp),
  finishedAt: Nullable(Timestamp),
  wakeAt: Nullable(Timestamp),
};
export const RunSummarySchema = Type.Object(runFields, { $id: 'RunSummary' });
export const RunSchema = Type.Object({ ...runFields, steps: Type.Array(StepSchema) }, { $id: 'Run' });

export const EvaluateBody = Type.Object(
  {
    expression: Type.String({ minLength: 1, maxLength: 10_000 }),
    item: Type.Optional(Type.Object({}, { additionalProperties: true })),
    input: Type.Optional(Type.Object({}, { additionalProperties: true })),
    runId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    nodeId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);

export const RunBody = Type.Object(
  {
    input: Type.Optional(FreeObject('becomes the item of the trigger')),
    testMode: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const RunListQuery = Type.Object(
  {
    ...ListQueryProps,
    workflowId: Type.Optional(Type.String({ maxLength: 64 })),
    status: Type.Optional(Type.String({ maxLength: 100, description: 'one or more statuses, comma-separated' })),
  },
  { additionalProperties: false },
);

export const ApprovalSchema = Type.Object(
  {
    id: Type.String(),
    status: Type.Union(APPROVAL_STATUSES.map((s) => Type.Literal(s))),
    title: Type.String(),
    description: Nullable(Type.String()),
    projectId: Nullable(Type.String()),
    runId: Nullable(Type.String()),
    nodeId: Nullable(Type.String()),
    payload: Type.Unknown(),
    expiresAt: Nullable(Timestamp),
    decision: Nullable(Type.String()),
    by: Nullable(Type.String()),
    comment: Nullable(Type.String()),
    editedPayload: Type.Unknown(),
    resolvedAt: Nullable(Timestamp),
    createdAt: Timestamp,
  },
  { $id: 'Approval' },
);

export const ApprovalListQuery = Type.Object(
  {
    ...ListQueryProps,
    status: Type.Optional(Type.Union(APPROVAL_STATUSES.map((s) => Type.Literal(s)))),
    runId: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

export const ApproveBody = Type.Object(
  {
    comment: Type.Optional(Type.String({ maxLength: 4000 })),
    editedPayload: Type.Optional(Type.Unknown({ description: 'replaces the items continuing down the `approved` branch (an object or an array of objects)' })),
  },
  { additionalProperties: false },
);

export const RejectBody = Type.Object({ comment: Type.Optional(Type.String({ maxLength: 4000 })) }, { additionalProperties: false });

export const NodeTypeSchema = Type.Object({
  type: Type.String(),
  category: Type.String(),
  description: Type.String(),
  params: FreeObject('JSON Schema'),
  outputs: Type.Array(Type.String()),
});

export const TemplateSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  category: Type.String(),
  nodeTypes: Type.Array(Type.String()),
  available: Type.Boolean(),
});
/** One template with its definition (`GET …/templates/:id`): what `POST …/templates/:id/use` creates. */
export const TemplateDetailSchema = Type.Object(
  {
    ...TemplateSchema.properties,
    nodes: Type.Array(FreeObject('a node: { id, type, name?, params?, retry? }')),
    edges: Type.Array(FreeObject('an edge: { from, to, output? }')),
    active: Type.Boolean({ description: 'whether the created workflow starts active' }),
  },
  { $id: 'TemplateDetail' },
);
