import { sql, type SQL } from 'drizzle-orm';
import { CONVERSATIONAL_TYPES } from './catalog.ts';

/**
 * The agent runs an organization started since `since` (an ISO instant), one row each: the plans
 * module counts them against `agentRunsPerMonth`. The conversation bot's turns are not counted.
 */
export function agentRunsStarted(orgId: string, since: string): SQL {
  return sql`select 1 from agent_runs where org_id = ${orgId} and created_at >= ${since}::timestamptz and type <> all(${sql.param([...CONVERSATIONAL_TYPES])}::text[])`;
}
