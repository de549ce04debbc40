import { doublePrecision, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, updatedAt } from '../../platform/columns.ts';

/** The organization's monthly spending limit (USD); no row or null means unlimited. */
export const budgets = pgTable('budgets', {
  orgId: text('org_id').primaryKey(),
  monthlyLimitUsd: doublePrecision('monthly_limit_usd'),
  updatedAt: updatedAt(),
});

/** Alerts already sent, so `budget.warning` goes out once per month per scope. */
export const budgetAlerts = pgTable('budget_alerts', {
  orgId: text('org_id').notNull(),
  /** `organization`, `workflow:<id>` or `agent:<id>`. */
  scope: text('scope').notNull(),
  /** `YYYY-MM` in UTC. */
  period: text('period').notNull(),
  kind: text('kind').notNull(),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.orgId, t.scope, t.period, t.kind] })]);
