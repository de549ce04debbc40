import { sql } from 'drizzle-orm';
import type { Db } from '../../platform/db.ts';
import { tenant, type Tenant } from '../../platform/tenant.ts';
import { leads } from './tables.ts';

/** Reads of the leads table for other modules; this module alone writes it. */

/** How many leads an organization has, or a project-bound key's project, and how many are NEW. */
export async function leadCounts(db: Db, scope: Tenant): Promise<{ total: number; fresh: number }> {
  const [row] = await db.select({ total: sql<number>`count(*)::int`, fresh: sql<number>`(count(*) filter (where ${leads.status} = 'NEW'))::int` }).from(leads).where(tenant(scope, leads));
  return row!;
}
