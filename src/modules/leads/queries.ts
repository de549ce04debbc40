import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../platform/db.ts';
import { inScope, tenant, type Tenant } from '../../platform/tenant.ts';
import { leads } from './tables.ts';

/** Reads of the leads table for other modules; this module alone writes it. */

/** How many leads an organization has, or a project-bound key's project, and how many are NEW. */
export async function leadCounts(db: Db, scope: Tenant): Promise<{ total: number; fresh: number }> {
  const [row] = await db
    .select({ total: sql<number>`count(*)::int`, fresh: sql<number>`(count(*) filter (where ${leads.status} = 'NEW'))::int` })
    .from(leads)
    .where(tenant(scope, leads));
  return row!;
}

export type LeadRow = typeof leads.$inferSelect;

/** A filter of an organization's project's leads, as other modules name an audience. */
export interface LeadFilter {
  leadIds?: string[];
  status?: string[];
  tags?: string[];
  minScore?: number;
}

/**
 * A subquery of the leads a filter selects in a project — `lead_id`, `email` (lower case) and
 * `phone` — for a statement that turns them into something of its own (a campaign's recipients).
 */
export function leadsMatching(orgId: string, projectId: string, filter: LeadFilter): SQL {
  const where: SQL[] = [sql`l.org_id = ${orgId}`, sql`l.project_id = ${projectId}`];
  if (filter.leadIds) where.push(sql`l.id = any(${sql.param(filter.leadIds)}::text[])`);
  if (filter.status?.length) where.push(sql`l.status = any(${sql.param(filter.status)}::text[])`);
  if (filter.tags?.length) where.push(sql`l.tags @> ${sql.param(filter.tags)}::text[]`);
  if (filter.minScore !== undefined) where.push(sql`l.score >= ${filter.minScore}`);
  return sql`select l.id as lead_id, lower(l.email) as email, l.phone as phone from ${leads} l where ${sql.join(where, sql` and `)}`;
}

/** Leads by id (whatever their organization: the caller's ids came from its own rows). */
export function leadsByIds(db: Db, ids: string[]): Promise<LeadRow[]> {
  return ids.length ? db.select().from(leads).where(inArray(leads.id, ids)) : Promise.resolve([]);
}

/** One lead the scope may see, or undefined. */
export async function leadInScope(db: Db, scope: Tenant, id: string): Promise<LeadRow | undefined> {
  const [row] = await db
    .select()
    .from(leads)
    .where(inScope(scope, leads, and(eq(leads.id, id))));
  return row;
}
