import { boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { createdAt, ts, updatedAt } from '../../platform/columns.ts';

/** Saved agents: a type with its own instructions, model, step limit and budget. */
export const agents = pgTable(
  'agents',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id'),
    name: text('name').notNull(),
    type: text('type').notNull(),
    instructions: text('instructions'),
    modelId: text('model_id'),
    maxSteps: integer('max_steps'),
    budgetUsd: doublePrecision('budget_usd'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('agents_org_idx').on(t.orgId, t.createdAt)],
);

/**
 * One agent run. QUEUED rows are claimed by the agent runner (SKIP LOCKED); a RUNNING row holds a
 * lease the executing instance keeps renewing, so a run whose instance died is found and ended.
 */
export const agentRuns = pgTable(
  'agent_runs',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id'),
    agentId: text('agent_id'),
    type: text('type').notNull(),
    status: text('status').notNull(),
    task: text('task').notNull(),
    input: jsonb('input').$type<Record<string, unknown>>().notNull().default({}),
    modelId: text('model_id').notNull(),
    instructions: text('instructions'),
    maxSteps: integer('max_steps').notNull(),
    budgetUsd: doublePrecision('budget_usd'),
    /** `agent` (a run or saved-agent budget) or `workflow` (the remaining budget of the calling workflow run). */
    budgetScope: text('budget_scope'),
    workflowId: text('workflow_id'),
    workflowRunId: text('workflow_run_id'),
    summary: text('summary'),
    error: text('error'),
    output: jsonb('output'),
    reportId: text('report_id'),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    modelCalls: integer('model_calls').notNull().default(0),
    stepCount: integer('step_count').notNull().default(0),
    /** Run in-process by services.agents.runInline (a workflow node), not by the runner. */
    inline: boolean('inline').notNull().default(false),
    leaseOwner: text('lease_owner'),
    leaseUntil: ts('lease_until'),
    createdAt: createdAt(),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('agent_runs_org_created_idx').on(t.orgId, t.createdAt),
    index('agent_runs_queued_idx')
      .on(t.id)
      .where(sql`status = 'QUEUED'`),
    index('agent_runs_running_idx')
      .on(t.leaseUntil)
      .where(sql`status = 'RUNNING'`),
  ],
);

/** Every step of a run, stored as it happens; `index` orders them and lets stream clients de-duplicate. */
export const agentSteps = pgTable(
  'agent_steps',
  {
    runId: text('run_id').notNull(),
    orgId: text('org_id').notNull(),
    index: integer('index').notNull(),
    type: text('type').notNull(),
    at: ts('at').notNull(),
    name: text('name'),
    input: jsonb('input'),
    output: text('output'),
    durationMs: integer('duration_ms'),
    text: text('text'),
  },
  (t) => [primaryKey({ columns: [t.runId, t.index] })],
);
