import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, ts, updatedAt } from '../../platform/columns.ts';

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id'),
    url: text('url').notNull(),
    description: text('description'),
    events: text('events').array().notNull(),
    active: boolean('active').notNull().default(true),
    /** AES-GCM sealed with a key derived from APP_SECRET. */
    secretSealed: text('secret_sealed').notNull(),
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    disabledReason: text('disabled_reason'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('webhook_endpoints_org_idx').on(t.orgId, t.active)],
);

/** One row per attempt: its id is the X-Service-Delivery header of that attempt. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    attempt: integer('attempt').notNull(),
    status: text('status').notNull(),
    statusCode: integer('status_code'),
    durationMs: integer('duration_ms'),
    responseBodyPreview: text('response_body_preview'),
    error: text('error'),
    nextAttemptAt: ts('next_attempt_at'),
    lockedUntil: ts('locked_until'),
    createdAt: createdAt(),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('webhook_deliveries_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`status = 'pending'`),
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.id),
    index('webhook_deliveries_created_idx').on(t.createdAt),
  ],
);
