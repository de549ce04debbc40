import { sql, type SQL } from 'drizzle-orm';

/** Reads of the synced analytics days for other modules; this module alone writes them. */

/**
 * A query of an organization's analytics days (of a project when given) from `from` to `to`
 * included — SQL expressions of `YYYY-MM-DD` text — summed over every integration of each day, by
 * the typed columns: rows of `date`, `sessions`, `users`, `conversions`, `clicks`, `impressions`
 * and `weighted` (position × impressions). For a statement that places the days in buckets (the stats).
 */
export function analyticsDaysSummed(orgId: string, from: SQL, to: SQL, projectId: string | null): SQL {
  const project = projectId ? sql` and project_id = ${projectId}` : sql``;
  return sql`
          select date, sum(sessions) as sessions, sum(users) as users, sum(conversions) as conversions,
            sum(clicks) as clicks, sum(impressions) as impressions, sum(position_weight) as weighted
          from analytics_daily
          where org_id = ${orgId}
            and date >= ${from}
            and date <= ${to}${project}
          group by date`;
}
