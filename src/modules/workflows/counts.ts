import { sql, type SQL } from 'drizzle-orm';

/**
 * The workflow runs an organization started since `since` (an ISO instant), one row each: the plans
 * module counts them against `runsPerMonth`. A run the plan itself refused (failed with PLAN_LIMIT or
 * PLAN_FEATURE) is not counted.
 */
export function workflowRunsStarted(orgId: string, since: string): SQL {
  return sql`select 1 from workflow_runs where org_id = ${orgId} and created_at >= ${since}::timestamptz
          and not (status = 'FAILED' and coalesce(error->>'code', '') in ('PLAN_LIMIT', 'PLAN_FEATURE'))`;
}
