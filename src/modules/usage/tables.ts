import { doublePrecision, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { ts } from '../../platform/columns.ts';

/** One row per model call: who spent what, on which model, for which agent run / workflow run / project. */
export const usageRecords = pgTable(
  'usage_records',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id'),
    modelId: text('model_id').notNull(),
    agentRunId: text('agent_run_id'),
    agentType: text('agent_type'),
    workflowId: text('workflow_id'),
    workflowRunId: text('workflow_run_id'),
    inputTokens: integer('input_tokens').notNull(),
    outputTokens: integer('output_tokens').notNull(),
    costUsd: doublePrecision('cost_usd').notNull(),
    at: ts('at').notNull(),
  },
  (t) => [index('usage_records_org_at_idx').on(t.orgId, t.at), index('usage_records_agent_run_idx').on(t.agentRunId)],
);
