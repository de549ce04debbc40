import { sql, type SQL } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import { rows } from '../../platform/db.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import type { OrgsService } from '../orgs/service.ts';
import { assertTimezone, parseRange } from './range.ts';

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
export const USAGE_METRICS: Record<string, string> = {
  'usage.costUsd': 'cost_usd',
  'usage.inputTokens': 'input_tokens',
  'usage.outputTokens': 'output_tokens',
};

export const METRICS = [...Object.keys(EVENT_METRICS), ...Object.keys(USAGE_METRICS)];
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

export class StatsService {
  private readonly db: Db;
  private readonly orgs: OrgsService;

  constructor(deps: Deps, orgs: OrgsService) {
    this.db = deps.db;
    this.orgs = orgs;
  }

  /**
   * Series per metric over [from, to), one point per bucket (hour, day, week from Monday, month)
   * starting at the bucket's start in the time zone; buckets without data are 0. Computed in SQL.
   */
  async query(scope: { orgId: string; projectId: string | null }, input: StatsQuery) {
    const metrics = [...new Set(input.metrics)];
    const unknown = metrics.filter((m) => !METRICS.includes(m));
    if (unknown.length) throw badRequest(`Unknown metric ${unknown.join(', ')}; available: ${METRICS.join(', ')}`, [{ field: 'body.metrics', message: `must be among ${METRICS.join(', ')}` }]);
    const tz = assertTimezone(input.timezone ?? 'UTC', 'body.timezone');
    const range = parseRange(input.from, input.to, tz);
    const g = input.granularity;
    const points = (range.to.getTime() - range.from.getTime()) / 1000 / APPROX_SECONDS[g];
    if (points > MAX_POINTS) throw badRequest(`That is about ${Math.ceil(points)} ${g} buckets; at most ${MAX_POINTS} per query — use a coarser granularity`, [{ field: 'body.granularity', message: 'too many buckets for the range' }]);
    let projectId = input.projectId ?? null;
    if (scope.projectId) {
      if (projectId && projectId !== scope.projectId) throw notFound('Project');
      projectId = scope.projectId;
    } else if (projectId) {
      await this.orgs.assertProject(scope.orgId, projectId);
    }

    const from = range.from.toISOString();
    const to = range.to.toISOString();
    const step = `1 ${g}`;
    // Bucket starts as instants: truncated in local time, then read back in the zone (DST-safe).
    const buckets = await rows<{ ms: number }>(this.db, sql`
      select (extract(epoch from (b at time zone ${tz})) * 1000)::float8 as ms
      from generate_series(
        date_trunc(${g}, ${from}::timestamptz at time zone ${tz}),
        (${to}::timestamptz - interval '1 microsecond') at time zone ${tz},
        ${step}::interval) as b`);

    const values = new Map<string, Map<number, number>>();
    const eventMetrics = metrics.filter((m) => EVENT_METRICS[m]);
    const usageMetrics = metrics.filter((m) => USAGE_METRICS[m]);
    const project = (column: SQL) => (projectId ? sql`and ${column} = ${projectId}` : sql``);

    const work: Promise<void>[] = [];
    if (eventMetrics.length) {
      const types = eventMetrics.map((m) => EVENT_METRICS[m]!);
      work.push(rows<{ type: string; ms: number; v: number }>(this.db, sql`
        select type, (extract(epoch from (date_trunc(${g}, at at time zone ${tz}) at time zone ${tz})) * 1000)::float8 as ms, count(*)::float8 as v
        from events
        where org_id = ${scope.orgId} and type in (${sql.join(types.map((t) => sql`${t}`), sql`, `)})
          and at >= ${from}::timestamptz and at < ${to}::timestamptz ${project(sql`project_id`)}
        group by 1, 2`).then((found) => {
        for (const m of eventMetrics) {
          const map = new Map<number, number>();
          for (const r of found) if (r.type === EVENT_METRICS[m]) map.set(Number(r.ms), Number(r.v));
          values.set(m, map);
        }
      }));
    }
    if (usageMetrics.length) {
      const sums = usageMetrics.map((m, i) => sql`coalesce(sum(${sql.raw(USAGE_METRICS[m]!)}), 0)::float8 as ${sql.raw('v' + i)}`);
      work.push(rows<Record<string, number>>(this.db, sql`
        select (extract(epoch from (date_trunc(${g}, at at time zone ${tz}) at time zone ${tz})) * 1000)::float8 as ms, ${sql.join(sums, sql`, `)}
        from usage_records
        where org_id = ${scope.orgId} and at >= ${from}::timestamptz and at < ${to}::timestamptz ${project(sql`project_id`)}
        group by 1`).then((found) => {
        usageMetrics.forEach((m, i) => {
          const map = new Map<number, number>();
          for (const r of found) map.set(Number(r.ms), Number(r['v' + i]));
          values.set(m, map);
        });
      }));
    }
    await Promise.all(work);

    const round = (metric: string, v: number) => (metric === 'usage.costUsd' ? Math.round(v * 1e6) / 1e6 : v);
    return {
      granularity: g,
      timezone: tz,
      from: range.from,
      to: range.to,
      series: metrics.map((metric) => {
        const map = values.get(metric) ?? new Map<number, number>();
        const pointsOut = buckets.map((b) => ({ at: new Date(Number(b.ms)), value: round(metric, map.get(Number(b.ms)) ?? 0) }));
        return { metric, total: round(metric, pointsOut.reduce((s, p) => s + p.value, 0)), points: pointsOut };
      }),
    };
  }
}
