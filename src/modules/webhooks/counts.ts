import { sql, type SQL } from 'drizzle-orm';

/** The webhook endpoints an organization holds, one row each: the plans module counts them against the `webhookEndpoints` limit. */
export function webhookEndpointsHeld(orgId: string): SQL {
  return sql`select 1 from webhook_endpoints where org_id = ${orgId}`;
}
