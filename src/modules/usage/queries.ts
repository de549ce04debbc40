import { sql, type SQL } from 'drizzle-orm';

/** Reads of the usage records for other modules; this module alone writes them. */

/** The columns of a usage record another module may sum (the stats' usage metrics). */
export type UsageColumn = 'cost_usd' | 'input_tokens' | 'output_tokens';

/**
 * A subquery of an organization's usage records in [from, to) (ISO instants; of a project when
 * given): rows of `at` and the usage columns, for a statement that sums them per bucket (the stats).
 */
export function usageRecordsInRange(orgId: string, from: string, to: string, projectId: string | null): SQL {
  const project = projectId ? sql` and project_id = ${projectId}` : sql``;
  return sql`
        select at, cost_usd, input_tokens, output_tokens
        from usage_records
        where org_id = ${orgId} and at >= ${from}::timestamptz and at < ${to}::timestamptz${project}`;
}
