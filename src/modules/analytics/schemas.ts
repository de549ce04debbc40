import { Type, Nullable, Timestamp, ListQueryProps } from '../../platform/http/schemas.ts';
import type { TUnsafe } from 'typebox';
import { COMPARES, METRIC_NAMES, WINDOWS } from './rules.ts';

/** A union of string literals, typed as the union of its values. */
const literals = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  ) as unknown as TUnsafe<T>;

export const Day = (description: string) => Type.String({ format: 'date', maxLength: 10, description: `${description} (YYYY-MM-DD)` });
export const SourceSchema = literals(['ga4', 'gsc'] as const, '`ga4` (Google Analytics 4) or `gsc` (Search Console)');
const Id = Type.String({ maxLength: 64 });
const Threshold = Type.Number({ minimum: -1e12, maximum: 1e12 });

export const AccountSchema = Type.Object(
  {
    id: Type.String({
      description:
        'GA4: the property (`properties/123456789`), the value of `config.propertyId`; Search Console: the site (`https://example.com/` or `sc-domain:example.com`), the value of `config.siteUrl`',
    }),
    name: Type.String(),
    source: SourceSchema,
  },
  { $id: 'AnalyticsAccount' },
);

export const SyncRunSchema = Type.Object(
  {
    id: Type.String(),
    integrationId: Type.String(),
    projectId: Nullable(Type.String()),
    status: literals(['queued', 'running', 'succeeded', 'failed'] as const),
    trigger: literals(
      ['schedule', 'backfill', 'manual'] as const,
      "`schedule`: the daily run at ANALYTICS_SYNC_HOUR (each source's lookback); `backfill`: the daily run of an integration no sync has succeeded for yet (the last 90 days); `manual`: `POST …/integrations/:id/sync`",
    ),
    from: Type.String({ description: 'first day fetched (YYYY-MM-DD)' }),
    to: Type.String({ description: 'last day fetched (YYYY-MM-DD)' }),
    rows: Type.Integer({ description: 'daily rows stored (one per day and source, zeros included)' }),
    error: Nullable(Type.String({ description: 'why it failed, or why the last attempt failed while it waits for the next' })),
    attempts: Type.Integer(),
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
    createdAt: Timestamp,
  },
  { $id: 'AnalyticsSyncRun' },
);

export const SyncBody = Type.Object(
  {
    from: Type.Optional(Day('first day to fetch; default: the lookback window (4 days before to)')),
    to: Type.Optional(Day('last day to fetch; default: yesterday (UTC)')),
  },
  { additionalProperties: false },
);

export const SyncRunsQuery = Type.Object(
  {
    page: ListQueryProps.page,
    pageSize: ListQueryProps.pageSize,
    status: Type.Optional(literals(['queued', 'running', 'succeeded', 'failed'] as const)),
  },
  { additionalProperties: false },
);

export const DailyQuery = Type.Object(
  {
    from: Type.String({ minLength: 10, maxLength: 40, description: 'first day (YYYY-MM-DD), or an ISO 8601 timestamp: its UTC day' }),
    to: Type.String({
      minLength: 10,
      maxLength: 40,
      description: 'last day, included (YYYY-MM-DD), or an ISO 8601 timestamp (excluded): the UTC day before it',
    }),
    integrationId: Type.Optional(Id),
    source: Type.Optional(SourceSchema),
  },
  { additionalProperties: false },
);

export const DailyItem = Type.Object({
  date: Type.String({ description: "the day, in the property's own reporting time zone (YYYY-MM-DD)" }),
  source: SourceSchema,
  integrationId: Type.String(),
  metrics: Type.Record(Type.String(), Type.Number(), {
    description: 'ga4: `{ sessions, users, conversions }`; gsc: `{ clicks, impressions, ctr, position }` (ctr 0–1). A day without data is zeros.',
  }),
});

const MetricSchema = literals(METRIC_NAMES, 'a `stats/query` metric name');
const CompareSchema = literals(
  COMPARES,
  "`above` / `below`: the window's value against the threshold; `pct_change`: the change from the previous window, in percent, either way",
);
const WindowSchema = literals(WINDOWS, '`day`: the newest synced day; `7d` / `28d`: the last 7 / 28 days');

export const RuleSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    projectId: Nullable(Type.String()),
    integrationId: Nullable(Type.String({ description: "null: every google integration the rule's project sees, added together" })),
    metric: MetricSchema,
    compare: CompareSchema,
    threshold: Type.Number(),
    window: WindowSchema,
    minBaseline: Nullable(Type.Number()),
    state: literals(['ok', 'firing', 'error'] as const, '`error`: its integration needs to be reconnected'),
    lastValue: Nullable(Type.Number({ description: "the window's value (pct_change: the change in percent) at the last evaluation" })),
    lastEvaluatedAt: Nullable(Timestamp),
    lastFiredAt: Nullable(Timestamp),
    error: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'AnalyticsRule' },
);

export const RuleCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    projectId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    integrationId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    metric: MetricSchema,
    compare: CompareSchema,
    threshold: Threshold,
    window: WindowSchema,
    minBaseline: Type.Optional(
      Nullable(Type.Number({ minimum: 0, maximum: 1e12, description: 'pct_change only: the previous window must reach this for a change to count' })),
    ),
  },
  { additionalProperties: false },
);

export const RulePatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    integrationId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    metric: Type.Optional(MetricSchema),
    compare: Type.Optional(CompareSchema),
    threshold: Type.Optional(Threshold),
    window: Type.Optional(WindowSchema),
    minBaseline: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1e12 }))),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const RulesQuery = Type.Object(
  {
    page: ListQueryProps.page,
    pageSize: ListQueryProps.pageSize,
    integrationId: Type.Optional(Id),
    state: Type.Optional(literals(['ok', 'firing', 'error'] as const)),
    metric: Type.Optional(MetricSchema),
  },
  { additionalProperties: false },
);
