import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.ts';

/** Bus messages too large for a NOTIFY payload (8000 bytes) travel through this table. */
export const busMessages = pgTable('bus_messages', {
  id: text('id').primaryKey(),
  channel: text('channel').notNull(),
  message: jsonb('message').notNull(),
  createdAt: createdAt(),
});
