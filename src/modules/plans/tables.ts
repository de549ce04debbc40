import { integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { organizations } from '../orgs/tables.ts';

/**
 * What an organization started or sent this month, per monthly limit (`runsPerMonth`, …; `month`
 * is `YYYY-MM` in UTC). Written only while PLANS is configured, in the transaction of the start, by
 * one guarded update (`used + n <= limit`), so two starts cannot both take the last one. A month's
 * row is seeded from the stored rows (runs, agent runs, campaign sends) the first time it is needed.
 */
export const planUsage = pgTable(
  'plan_usage',
  {
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    metric: text('metric').notNull(),
    month: text('month').notNull(),
    used: integer('used').notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.metric, t.month] })],
);
