import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, ts, updatedAt } from '../../platform/columns.ts';
import { organizations, projects } from '../orgs/tables.ts';

export interface PostError {
  code: string;
  message: string;
  retryable: boolean;
}

/** One publishing attempt, kept on the post so a failure can be explained. */
export interface PostAttempt {
  attempt: number;
  at: string;
  ok: boolean;
  code?: string;
  message?: string;
  retryable?: boolean;
  nextAttemptAt?: string;
}

export const posts = pgTable(
  'posts',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    platform: text('platform').notNull(),
    body: text('body').notNull(),
    hashtags: text('hashtags').array().notNull().default([]),
    mediaIds: text('media_ids').array().notNull().default([]),
    scheduledAt: ts('scheduled_at'),
    integrationId: text('integration_id'),
    status: text('status').notNull().default('DRAFT'),
    createdBy: jsonb('created_by').$type<{ type: string; id: string }>().notNull(),
    /** The agent run that wrote the draft (content generation). */
    agentRunId: text('agent_run_id'),
    approvedBy: jsonb('approved_by').$type<{ type: string; id: string } | null>(),
    approvedAt: ts('approved_at'),
    externalId: text('external_id'),
    url: text('url'),
    publishedAt: ts('published_at'),
    error: jsonb('error').$type<PostError | null>(),
    failedAt: ts('failed_at'),
    /** Publishing: attempts made, the first one's time (the retry window counts from it), the next one's. */
    attempts: integer('attempts').notNull().default(0),
    firstAttemptAt: ts('first_attempt_at'),
    nextAttemptAt: ts('next_attempt_at'),
    /** A publisher holds the post until then; an expired lease with inFlight set means an outcome never recorded. */
    lockedUntil: ts('locked_until'),
    inFlight: boolean('in_flight').notNull().default(false),
    attemptLog: jsonb('attempt_log').$type<PostAttempt[]>().notNull().default([]),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('posts_org_created_idx').on(t.orgId, t.createdAt),
    index('posts_org_status_idx').on(t.orgId, t.status),
    index('posts_agent_run_idx').on(t.agentRunId),
    // The publisher's two queues: scheduled posts by time, publishing posts by next attempt.
    index('posts_scheduled_due_idx')
      .on(t.scheduledAt)
      .where(sql`status = 'SCHEDULED'`),
    index('posts_publishing_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`status = 'PUBLISHING'`),
    index('posts_calendar_idx').on(t.orgId, t.scheduledAt),
    index('posts_calendar_published_idx').on(t.orgId, t.publishedAt),
  ],
);
