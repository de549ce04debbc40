import { eq, sql, type SQL } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { rows, transaction, type Db } from '../../platform/db.ts';
import { badRequest } from '../../platform/errors.ts';
import type { Scope } from '../../platform/context.ts';
import type { StatsOrgsPort, StatsPorts } from './ports.ts';
import type { EventRow } from '../events/index.ts';
import { dispatchedEventsPerHour, eventsInRange } from '../events/index.ts';
import { usageRecordsInRange, type UsageColumn } from '../usage/index.ts';
import { analyticsDaysSummed } from '../analytics/index.ts';
import { assertTimezone, offsetMs, parseRange } from '../../platform/range.ts';
import { statsHourly } from './tables.ts';
import { METRICS as ANALYTICS_METRIC_FIELDS } from '../analytics/index.ts';

/** Counted platform events: the stats are a reporting view over the outbox (the `events` table). */
export const EVENT_METRICS: Record<string, string> = {
  'leads.created': 'lead.created',
  'leads.updated': 'lead.updated',
  'leads.qualified': 'lead.qualified',
  'leads.replied': 'lead.replied',
  'runs.started': 'workflow.run.started',
  'runs.succeeded': 'workflow.run.finished',
  'runs.failed': 'workflow.run.failed',
  'agent.runs': 'agent.run.finished',
  'reports.created': 'agent.report.created',
  'posts.created': 'post.created',
  'posts.approved': 'post.approved',
  'posts.published': 'post.published',
  'posts.failed': 'post.failed',
  'messages.received': 'message.received',
  'messages.sent': 'message.sent',
  'conversations.opened': 'conversation.opened',
  'conversations.handoff': 'conversation.handoff',
  'approvals.requested': 'approval.requested',
};

/** Summed from the usage records (one per model call). */
export const USAGE_METRICS: Record<string, UsageColumn> = {
  'usage.costUsd': 'cost_usd',
  'usage.inputTokens': 'input_tokens',
  'usage.outputTokens': 'output_tokens',
};

/**
 * From the synced analytics days (analytics_daily; CONTRACT §10): summed per bucket, except the
 * ratios — `gsc.ctr` is clicks over impressions and `gsc.position` the impression-weighted average
 * position of the bucket (and of the whole range for `total`).
 */
export const ANALYTICS_METRICS: Record<string, { source: 'ga4' | 'gsc'; field: string }> = ANALYTICS_METRIC_FIELDS;
const RATIOS = new Set(['gsc.ctr', 'gsc.position']);

export const METRICS = [...Object.keys(EVENT_METRICS), ...Object.keys(USAGE_METRICS), ...Object.keys(ANALYTICS_METRICS)];
export const GRANULARITIES = ['hour', 'day', 'week', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

const APPROX_SECONDS: Record<Granularity, number> = { hour: 3600, day: 86_400, week: 604_800, month: 2_419_200 };
export const MAX_POINTS = 10_000;

export interface StatsQuery {
  metrics: string[];
  from: string;
  to: string;
  granularity: Granularity;
  timezone?: string;
  projectId?: string;
}

const HOUR = 3_600_000;

/**
 * The whole UTC hours inside [from, to) that the hourly counts may serve: none when the zone's
 * offset is not a whole number of hours somewhere in the range (India, Nepal, Newfoundland…).
 */
function wholeHours(from: Date, to: Date, tz: string): [number, number] {
  const a = Math.ceil(from.getTime() / HOUR) * HOUR;
  const b = Math.floor(to.getTime() / HOUR) * HOUR;
  if (a >= b) return [0, 0];
  const step = 15 * 86_400_000;
  for (let t = from.getTime(); ; t = Math.min(t + step, to.getTime())) {
    if (offsetMs(tz, t) % HOUR !== 0) return [0, 0];
    if (t >= to.getTime()) break;
  }
  return [a, b];
}

export class StatsService {
  private readonly db: Db;
  private readonly orgs: StatsOrgsPort;

  constructor(deps: Deps, ports: StatsPorts) {
    this.db = deps.db;
    this.orgs = ports.orgs;
  }

  /**
   * Counts a dispatched batch into stats_hourly. Runs inside the dispatch transaction (a dispatcher
   * subscriber), so each event is counted exactly when it is marked dispatched. Rows are upserted in
   * key order, so two dispatchers never wait on each other in a cycle.
   */
  async rollup(tx: Db, batch: EventRow[]): Promise<void> {
    const counts = new Map<string, { orgId: string; projectId: string; type: string; hour: Date; n: number }>();
    for (const e of batch) {
      const hour = new Date(Math.floor(e.at.getTime() / 3_600_000) * 3_600_000);
      const projectId = e.projectId ?? '';
      const key = `${e.orgId}\u0000${e.type}\u0000${hour.toISOString()}\u0000${projectId}`;
      const row = counts.get(key);
      if (row) row.n++;
      else counts.set(key, { orgId: e.orgId, projectId, type: e.type, hour, n: 1 });
    }
    if (counts.size === 0) return;
    const values = [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
    await tx
      .insert(statsHourly)
      .values(values)
      .onConflictDoUpdate({
        target: [statsHourly.orgId, statsHourly.type, statsHourly.hour, statsHourly.projectId],
        set: { n: sql`${statsHourly.n} + excluded.n` },
      });
  }

  /**
   * Recounts an organization's hourly counts from its dispatched events (after a bulk import, or
   * for events dispatched before the counts existed). Safe beside running dispatchers: counts are
   * overwritten with what the events say, and a concurrent dispatch adds after this commits.
   */
  async rebuild(orgId: string): Promise<number> {
    return transaction(this.db, async (tx) => {
      await tx.delete(statsHourly).where(eq(statsHourly.orgId, orgId));
      const inserted = await rows<{ n: number }>(
        tx,
        sql`
        with inserted as (
          insert into stats_hourly (org_id, project_id, type, hour, n)
          ${dispatchedEventsPerHour(orgId)}
          on conflict (org_id, type, hour, project_id) do update set n = excluded.n
          returning 1)
        select count(*)::int as n from inserted`,
      );
      return inserted[0]?.n ?? 0;
    });
  }

  /**
   * Series per metric over [from, to), one point per bucket (hour, day, week from Monday, month)
   * starting at the bucket's start in the time zone; buckets without data are 0. Computed in SQL.
   */
  async query(scope: Scope, input: StatsQuery) {
    const metrics = [...new Set(input.metrics)];
    const unknown = metrics.filter((m) => !METRICS.includes(m));
    if (unknown.length)
      throw badRequest(`Unknown metric ${unknown.join(', ')}; available: ${METRICS.join(', ')}`, [
        { field: 'body.metrics', message: `must be among ${METRICS.join(', ')}` },
      ]);
    const tz = assertTimezone(input.timezone ?? 'UTC', 'body.timezone');
    const range = parseRange(input.from, input.to, tz);
    const g = input.granularity;
    const points = (range.to.getTime() - range.from.getTime()) / 1000 / APPROX_SECONDS[g];
    if (points > MAX_POINTS)
      throw badRequest(`That is about ${Math.ceil(points)} ${g} buckets; at most ${MAX_POINTS} per query — use a coarser granularity`, [
        { field: 'body.granularity', message: 'too many buckets for the range' },
      ]);
    const projectId = await this.orgs.projectFor(scope, input.projectId);

    const from = range.from.toISOString();
    const to = range.to.toISOString();
    const step = `1 ${g}`;
    // Bucket starts as instants: truncated in local time, then read back in the zone (DST-safe).
    const buckets = await rows<{ ms: number }>(
      this.db,
      sql`
      select (extract(epoch from (b at time zone ${tz})) * 1000)::float8 as ms
      from generate_series(
        date_trunc(${g}, ${from}::timestamptz at time zone ${tz}),
        (${to}::timestamptz - interval '1 microsecond') at time zone ${tz},
        ${step}::interval) as b`,
    );

    // Rows are placed by a binary search over the bucket starts (width_bucket), not by converting
    // every row's time into the zone: the zone work is done once per bucket, above.
    const starts = sql`${sql.param(buckets.map((b) => new Date(Number(b.ms)).toISOString()))}::timestamptz[]`;
    const bucketMs = (i: number) => Number(buckets[Number(i) - 1]?.ms);
    const values = new Map<string, Map<number, number>>();
    const eventMetrics = metrics.filter((m) => EVENT_METRICS[m]);
    const usageMetrics = metrics.filter((m) => USAGE_METRICS[m]);
    const project = (column: SQL) => (projectId ? sql`and ${column} = ${projectId}` : sql``);

    const work: Promise<void>[] = [];
    if (eventMetrics.length) {
      const types = eventMetrics.map((m) => EVENT_METRICS[m]!);
      const typeList = sql.join(
        types.map((t) => sql`${t}`),
        sql`, `,
      );
      // Whole UTC hours come from the hourly counts, but only where the zone's offset is whole
      // hours (else an hour could straddle two buckets); the partial hours at the edges, and events
      // the dispatcher has not counted yet, from the outbox. One statement: one snapshot, so an
      // event being dispatched meanwhile is counted once.
      const [hA, hB] = wholeHours(range.from, range.to, tz);
      const middle = hA < hB;
      const mid = { from: new Date(hA).toISOString(), to: new Date(hB).toISOString() };
      const dispatched = (lo: string, hi: string) => eventsInRange({ orgId: scope.orgId, types, from: lo, to: hi, projectId, dispatched: true });
      const branches: SQL[] = middle
        ? [
            sql`select type, hour as at, n from stats_hourly
            where org_id = ${scope.orgId} and type in (${typeList}) and hour >= ${mid.from}::timestamptz and hour < ${mid.to}::timestamptz ${project(sql`project_id`)}`,
            dispatched(from, mid.from),
            dispatched(mid.to, to),
          ]
        : [dispatched(from, to)];
      branches.push(eventsInRange({ orgId: scope.orgId, types, from, to, projectId, dispatched: false }));
      const counted = sql.join(branches, sql` union all `);
      work.push(
        rows<{ type: string; i: number; v: number }>(
          this.db,
          sql`
        select type, width_bucket(at, ${starts}) as i, sum(n)::float8 as v
        from (${counted}) as c
        group by 1, 2`,
        ).then((found) => {
          for (const m of eventMetrics) {
            const map = new Map<number, number>();
            for (const r of found) if (r.type === EVENT_METRICS[m]) map.set(bucketMs(r.i), Number(r.v));
            values.set(m, map);
          }
        }),
      );
    }
    if (usageMetrics.length) {
      const sums = usageMetrics.map((m, i) => sql`coalesce(sum(${sql.raw(USAGE_METRICS[m]!)}), 0)::float8 as ${sql.raw('v' + i)}`);
      work.push(
        rows<Record<string, number>>(
          this.db,
          sql`
        select width_bucket(at, ${starts}) as i, ${sql.join(sums, sql`, `)}
        from (${usageRecordsInRange(scope.orgId, from, to, projectId)}) as u
        group by 1`,
        ).then((found) => {
          usageMetrics.forEach((m, i) => {
            const map = new Map<number, number>();
            for (const r of found) map.set(bucketMs(r.i!), Number(r['v' + i]));
            values.set(m, map);
          });
        }),
      );
    }
    const ratioTotals = new Map<string, number>();
    const analyticsMetrics = metrics.filter((m) => ANALYTICS_METRICS[m]);
    if (analyticsMetrics.length) {
      // A day counts at its midnight in the query's time zone; the days are the provider's own.
      // The days are summed first (the rows of every integration of a day, by the typed columns),
      // then the few hundred days are placed in buckets; the exact range is applied to the days.
      const day = sql`((date::date)::timestamp at time zone ${tz})`;
      const found = rows<{ i: number; sessions: number; users: number; conversions: number; clicks: number; impressions: number; weighted: number }>(
        this.db,
        sql`
        with days as (${analyticsDaysSummed(
          scope.orgId,
          sql`to_char((${from}::timestamptz at time zone ${tz})::date, 'YYYY-MM-DD')`,
          sql`to_char((${to}::timestamptz at time zone ${tz})::date, 'YYYY-MM-DD')`,
          projectId,
        )})
        select width_bucket(${day}, ${starts}) as i, sum(sessions) as sessions, sum(users) as users, sum(conversions) as conversions,
          sum(clicks) as clicks, sum(impressions) as impressions, sum(weighted) as weighted
        from days
        where ${day} >= ${from}::timestamptz and ${day} < ${to}::timestamptz
        group by 1`,
      );
      work.push(
        found.then((list) => {
          const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);
          const of = (r: (typeof list)[number], metric: string) => {
            if (metric === 'gsc.ctr') return ratio(Number(r.clicks ?? 0), Number(r.impressions ?? 0));
            if (metric === 'gsc.position') return ratio(Number(r.weighted ?? 0), Number(r.impressions ?? 0));
            return Number(r[ANALYTICS_METRICS[metric]!.field as 'sessions'] ?? 0);
          };
          const sum = (field: 'clicks' | 'impressions' | 'weighted') => list.reduce((s, r) => s + Number(r[field] ?? 0), 0);
          ratioTotals.set('gsc.ctr', ratio(sum('clicks'), sum('impressions')));
          ratioTotals.set('gsc.position', ratio(sum('weighted'), sum('impressions')));
          for (const m of analyticsMetrics) values.set(m, new Map(list.map((r) => [bucketMs(r.i), of(r, m)])));
        }),
      );
    }
    await Promise.all(work);

    const round = (metric: string, v: number) => (metric === 'usage.costUsd' ? Math.round(v * 1e6) / 1e6 : RATIOS.has(metric) ? Math.round(v * 1e4) / 1e4 : v);
    return {
      granularity: g,
      timezone: tz,
      from: range.from,
      to: range.to,
      series: metrics.map((metric) => {
        const map = values.get(metric) ?? new Map<number, number>();
        const pointsOut = buckets.map((b) => ({ at: new Date(Number(b.ms)), value: round(metric, map.get(Number(b.ms)) ?? 0) }));
        return {
          metric,
          total: round(metric, RATIOS.has(metric) ? (ratioTotals.get(metric) ?? 0) : pointsOut.reduce((s, p) => s + p.value, 0)),
          points: pointsOut,
        };
      }),
    };
  }
}
