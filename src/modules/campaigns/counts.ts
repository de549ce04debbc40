import { sql, type SQL } from 'drizzle-orm';

/**
 * The campaign messages an organization sent since `since` (an ISO instant), one row each: the
 * plans module counts them against `campaignMessagesPerMonth`. Test-mode campaigns are not counted.
 */
export function campaignMessagesSent(orgId: string, since: string): SQL {
  return sql`select 1 from campaign_sends s join campaigns c on c.id = s.campaign_id where c.org_id = ${orgId} and not c.test_mode and s.at >= ${since}::timestamptz`;
}
