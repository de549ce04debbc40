import { sql, type SQL } from 'drizzle-orm';
import { rows, type Db } from '../../platform/db.ts';

/** Reads and writes of this module's tables for other modules (the plans module's); only through these. */

/** An organization's stored plan (null: none, DEFAULT_PLAN applies), or undefined for no such organization. */
export async function storedPlan(db: Db, orgId: string): Promise<string | null | undefined> {
  const [row] = await rows<{ plan: string | null }>(db, sql`select plan from organizations where id = ${orgId}`);
  return row ? row.plan : undefined;
}

/** Sets an organization's plan (the CLI's set-plan); its id and name, or undefined for no such organization. */
export async function storePlan(db: Db, orgId: string, plan: string): Promise<{ id: string; name: string } | undefined> {
  const [row] = await rows<{ id: string; name: string }>(
    db,
    sql`update organizations set plan = ${plan}, updated_at = now() where id = ${orgId} returning id, name`,
  );
  return row;
}

/** The members of an organization, one row each: the plans module counts them against the `members` limit. */
export function membersHeld(orgId: string): SQL {
  return sql`select 1 from memberships where org_id = ${orgId}`;
}
