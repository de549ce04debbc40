import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { ts } from '../../platform/columns.ts';

/**
 * The transactional outbox: a platform event is written in the same transaction as the change it
 * describes, in the SPEC envelope shape, and fanned out by the dispatcher after commit.
 */
export const events = pgTable('events', {
  id: text('id').primaryKey(),
  orgId: text('org_id').notNull(),
  projectId: text('project_id'),
  type: text('type').notNull(),
  payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
  at: ts('at').notNull(),
  dispatchedAt: ts('dispatched_at'),
}, (t) => [
  index('events_org_type_at_idx').on(t.orgId, t.type, t.at),
  index('events_undispatched_idx').on(t.id).where(sql`dispatched_at is null`),
]);
