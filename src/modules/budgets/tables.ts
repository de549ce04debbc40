import { doublePrecision, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from '../../platform/columns.ts';

/** The organization's monthly spending limit (USD); no row or null means unlimited. */
export const budgets = pgTable('budgets', {
  orgId: text('org_id').primaryKey(),
  monthlyLimitUsd: doublePrecision('monthly_limit_usd'),
  updatedAt: updatedAt(),
});

/**
 * Alerts already sent, so `budget.warning` and `budget.exceeded` go out once per month and budget
 * (CONTRACT §6). A budget is a scope with its limit: a PUT to another limit is another budget, whose
 * 80 % and 100 % are announced on their own (once each, however often the limit moves back to it).
 */
export const budgetAlerts = pgTable(
  'budget_alerts',
  {
    orgId: text('org_id').notNull(),
    /** `organization`, `workflow:<id>` or `agent:<id>`. */
    scope: text('scope').notNull(),
    /** `YYYY-MM` in UTC. */
    period: text('period').notNull(),
    /** `warning` (80 %) or `exceeded` (100 %). */
    kind: text('kind').notNull(),
    /** The limit the alert was about (USD). */
    limitUsd: doublePrecision('limit_usd').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.scope, t.period, t.kind, t.limitUsd] })],
);
