import { index, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt, ts } from '../../platform/columns.ts';

export const notifications = pgTable('notifications', {
  id: text('id').primaryKey(),
  orgId: text('org_id').notNull(),
  /** Set when the notification is for one user; null means every member. */
  userId: text('user_id'),
  kind: text('kind').notNull(),
  title: text('title').notNull(),
  body: text('body').notNull(),
  link: text('link'),
  readAt: ts('read_at'),
  createdAt: createdAt(),
}, (t) => [index('notifications_org_idx').on(t.orgId, t.id)]);
