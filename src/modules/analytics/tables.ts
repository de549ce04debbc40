import { doublePrecision, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { createdAt, ts, updatedAt } from '../../platform/columns.ts';
import { organizations } from '../orgs/tables.ts';
import { integrations } from '../integrations/tables.ts';

/**
 * One day of one analytics source of one integration (CONTRACT §10): GA4 `{ sessions, users,
 * conversions }`, Search Console `{ clicks, impressions, ctr, position }`. A sync re-fetches its
 * lookback window and upserts, so a provider's revised numbers replace the provisional ones; a day
 * the provider has no row for is stored as zeros.
 */
export const analyticsDaily = pgTable(
  'analytics_daily',
  {
    integrationId: text('integration_id')
      .notNull()
      .references(() => integrations.id, { onDelete: 'cascade' }),
    /** `ga4` or `gsc`. */
    source: text('source').notNull(),
    /** The day in the property's own reporting time zone, `YYYY-MM-DD`. */
    date: text('date').notNull(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id'),
    metrics: jsonb('metrics').$type<Record<string, number>>().notNull(),
    // The metrics again as numbers, kept by PostgreSQL (generated): stats/query sums these instead of
    // reading the JSON of every row (a third of the time over a year of 50 integrations). Null for the
    // other source's fields. `position_weight` is position × impressions (the weighted average's part).
    sessions: doublePrecision('sessions').generatedAlwaysAs(sql`(metrics->>'sessions')::float8`),
    users: doublePrecision('users').generatedAlwaysAs(sql`(metrics->>'users')::float8`),
    conversions: doublePrecision('conversions').generatedAlwaysAs(sql`(metrics->>'conversions')::float8`),
    clicks: doublePrecision('clicks').generatedAlwaysAs(sql`(metrics->>'clicks')::float8`),
    impressions: doublePrecision('impressions').generatedAlwaysAs(sql`(metrics->>'impressions')::float8`),
    positionWeight: doublePrecision('position_weight').generatedAlwaysAs(sql`(metrics->>'position')::float8 * (metrics->>'impressions')::float8`),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.integrationId, t.source, t.date] }), index('analytics_daily_org_date_idx').on(t.orgId, t.date)],
);

/** One sync of one integration: queued (on demand or by the daily schedule), running, then succeeded or failed. */
export const analyticsSyncRuns = pgTable(
  'analytics_sync_runs',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    projectId: text('project_id'),
    integrationId: text('integration_id')
      .notNull()
      .references(() => integrations.id, { onDelete: 'cascade' }),
    /** `queued`, `running`, `succeeded`, `failed`. */
    status: text('status').notNull(),
    /** `schedule` or `manual`. */
    trigger: text('trigger').notNull(),
    from: text('from').notNull(),
    to: text('to').notNull(),
    rows: integer('rows').notNull().default(0),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    lockedUntil: ts('locked_until'),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('analytics_sync_runs_integration_idx').on(t.integrationId, t.createdAt),
    index('analytics_sync_runs_queue_idx')
      .on(t.createdAt)
      .where(sql`status in ('queued', 'running')`),
  ],
);

/**
 * A threshold rule (CONTRACT §10): `metric` a stats/query name (`ga4.sessions`, `gsc.clicks`, …),
 * `compare` above | below | pct_change, `window` day | 7d | 28d, `minBaseline` for pct_change.
 * Evaluated after each sync; `analytics.threshold` only on the move from `ok` into `firing`.
 */
export const analyticsRules = pgTable(
  'analytics_rules',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    projectId: text('project_id'),
    integrationId: text('integration_id').references(() => integrations.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    metric: text('metric').notNull(),
    compare: text('compare').notNull(),
    threshold: doublePrecision('threshold').notNull(),
    window: text('window').notNull(),
    minBaseline: doublePrecision('min_baseline'),
    /** `ok`, `firing` or `error`. */
    state: text('state').notNull().default('ok'),
    lastValue: doublePrecision('last_value'),
    lastFiredAt: ts('last_fired_at'),
    lastEvaluatedAt: ts('last_evaluated_at'),
    error: text('error'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('analytics_rules_org_idx').on(t.orgId, t.createdAt)],
);
