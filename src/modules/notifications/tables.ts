import { index, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, ts } from '../../platform/columns.ts';

export const notifications = pgTable(
  'notifications',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    /** Set when the notification is for one user; null means every member. */
    userId: text('user_id'),
    /** The project the notification is about; null for organization-level ones (budget, endpoints). */
    projectId: text('project_id'),
    kind: text('kind').notNull(),
    title: text('title').notNull(),
    body: text('body').notNull(),
    link: text('link'),
    /** Kept from before read state was per reader; read state lives in notification_reads. */
    readAt: ts('read_at'),
    createdAt: createdAt(),
  },
  (t) => [index('notifications_org_idx').on(t.orgId, t.id)],
);

/** Read state per reader (a user, or an API key): one member marking a notification read does not mark it for others. */
export const notificationReads = pgTable(
  'notification_reads',
  {
    notificationId: text('notification_id').notNull(),
    /** A user id or an API key id. */
    readerId: text('reader_id').notNull(),
    orgId: text('org_id').notNull(),
    readAt: ts('read_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.notificationId, t.readerId] })],
);
