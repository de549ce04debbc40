import { index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, ts } from '../../platform/columns.ts';

export interface RecommendationAction {
  type: string;
  params: Record<string, unknown>;
}

export interface StoredRecommendation {
  index: number;
  title: string;
  description: string;
  action: RecommendationAction;
  appliedAt?: string;
  appliedBy?: unknown;
  result?: unknown;
}

export const reports = pgTable(
  'reports',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id'),
    type: text('type').notNull(),
    title: text('title').notNull(),
    summary: text('summary').notNull(),
    body: text('body'),
    metrics: jsonb('metrics').$type<Record<string, unknown>>().notNull().default({}),
    recommendations: jsonb('recommendations').$type<StoredRecommendation[]>().notNull().default([]),
    agentRunId: text('agent_run_id'),
    agentType: text('agent_type'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('reports_org_created_idx').on(t.orgId, t.createdAt), index('reports_org_type_idx').on(t.orgId, t.type)],
);
