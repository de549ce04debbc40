import { sql, type SQL } from 'drizzle-orm';

/** The inboxes an organization holds, one row each: the plans module counts them against the `inboxes` limit. */
export function inboxesHeld(orgId: string): SQL {
  return sql`select 1 from inboxes where org_id = ${orgId}`;
}
