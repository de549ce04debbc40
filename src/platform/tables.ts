import { bigint, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { createdAt } from './columns.ts';

/** Bus messages too large for a NOTIFY payload (8000 bytes) travel through this table. */
export const busMessages = pgTable('bus_messages', {
  id: text('id').primaryKey(),
  channel: text('channel').notNull(),
  message: jsonb('message').notNull(),
  createdAt: createdAt(),
});

/**
 * Rate-limit counters shared by every instance (CONTRACT §12): one row per limiter key, its window
 * (started by the key's first request, as @fastify/rate-limit's own store does) and the requests
 * counted in it. Times are epoch milliseconds. Expired rows are purged by the maintenance loop (no
 * index but the key's, so a count is a HOT update). UNLOGGED (see the migration): counters are not
 * worth a WAL record per request, and a crash only starts every window afresh.
 */
export const rateLimitCounters = pgTable('rate_limit_counters', {
  key: text('key').primaryKey(),
  windowStart: bigint('window_start', { mode: 'number' }).notNull(),
  expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  hits: integer('hits').notNull(),
});
