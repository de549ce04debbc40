import { sql, type SQL } from 'drizzle-orm';

/** The leads an organization holds, one row each: the plans module counts them against the `leads` limit. */
export function leadsHeld(orgId: string): SQL {
  return sql`select 1 from leads where org_id = ${orgId}`;
}
