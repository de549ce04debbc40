import { Type, Timestamp, Nullable, FreeObject, ListQueryProps } from '../../platform/http/schemas.ts';
import { STEP_TYPES } from './steps.ts';
import { AGENT_TYPE_NAMES } from '../../shared/agents.ts';

export const AgentTypeName = Type.Union(
  AGENT_TYPE_NAMES.map((t) => Type.Literal(t)),
  { description: 'agent type (GET …/agent-types)' },
);
const ModelId = Type.String({
  minLength: 1,
  maxLength: 160,
  description: '`offline` or `<provider>:<model>`, e.g. `openai:gpt-4.1-mini`, `openai-compatible:qwen2.5`',
});
const Task = Type.String({ minLength: 1, maxLength: 8000 });
const Input = FreeObject('free-form input of the run (e.g. leadIds, threshold, topic, platforms, urls)', { maxProperties: 100 });
const ProjectId = Type.String({ minLength: 1, maxLength: 64 });

export const Usage = Type.Object({ inputTokens: Type.Integer(), outputTokens: Type.Integer(), costUsd: Type.Number(), modelId: Type.String() });

export const AgentStepSchema = Type.Object(
  {
    index: Type.Integer(),
    type: Type.Union(STEP_TYPES.map((s) => Type.Literal(s))),
    at: Timestamp,
    name: Type.Optional(Type.String()),
    input: Type.Optional(Type.Unknown()),
    output: Type.Optional(Type.String()),
    durationMs: Type.Optional(Type.Integer()),
    text: Type.Optional(Type.String()),
  },
  { $id: 'AgentStep' },
);

export const AgentRunSchema = Type.Object(
  {
    id: Type.String(),
    agentId: Nullable(Type.String()),
    type: Type.String(),
    status: Type.String({ description: 'QUEUED, RUNNING, succeeded, failed, budget_exceeded, max_steps or canceled' }),
    task: Type.String(),
    input: FreeObject(),
    modelId: Type.String(),
    projectId: Nullable(Type.String()),
    summary: Nullable(Type.String()),
    error: Nullable(Type.String()),
    output: Type.Unknown(),
    reportId: Nullable(Type.String()),
    usage: Usage,
    maxSteps: Type.Integer(),
    budgetUsd: Nullable(Type.Number()),
    workflowRunId: Nullable(Type.String()),
    stepCount: Type.Integer(),
    createdAt: Timestamp,
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
    steps: Type.Optional(Type.Array(Type.Ref('AgentStep'))),
  },
  { $id: 'AgentRun' },
);

export const AgentSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    type: Type.String(),
    instructions: Nullable(Type.String()),
    modelId: Nullable(Type.String()),
    maxSteps: Nullable(Type.Integer()),
    budgetUsd: Nullable(Type.Number()),
    projectId: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Agent' },
);

export const AgentTypeSchema = Type.Object({
  type: Type.String(),
  description: Type.String(),
  reportType: Type.String(),
  instructions: Type.String(),
  tools: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
});

export const RunBody = Type.Object(
  {
    type: AgentTypeName,
    task: Task,
    input: Type.Optional(Input),
    projectId: Type.Optional(ProjectId),
    modelId: Type.Optional(ModelId),
  },
  { additionalProperties: false },
);

export const SavedRunBody = Type.Object(
  {
    task: Task,
    input: Type.Optional(Input),
    projectId: Type.Optional(ProjectId),
  },
  { additionalProperties: false },
);

const agentFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  type: AgentTypeName,
  instructions: Type.Optional(Nullable(Type.String({ maxLength: 8000 }))),
  modelId: Type.Optional(Nullable(ModelId)),
  maxSteps: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 50 }))),
  budgetUsd: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1_000_000 }))),
  projectId: Type.Optional(Nullable(ProjectId)),
};

export const AgentCreateBody = Type.Object(agentFields, { additionalProperties: false });
export const AgentPatchBody = Type.Object(
  {
    ...agentFields,
    name: Type.Optional(agentFields.name),
    type: Type.Optional(agentFields.type),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const RunListQuery = Type.Object(
  {
    ...ListQueryProps,
    status: Type.Optional(Type.String({ maxLength: 200, description: 'one status or several, comma-separated' })),
    type: Type.Optional(Type.String({ maxLength: 64 })),
    agentId: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

export const AgentListQuery = Type.Object(
  {
    ...ListQueryProps,
    type: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);
