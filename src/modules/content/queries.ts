import { sql } from 'drizzle-orm';
import type { Db } from '../../platform/db.ts';
import { tenant, type Tenant } from '../../platform/tenant.ts';
import { posts } from './tables.ts';

/** Reads of the content tables for other modules; this module alone writes them. */

/** How many posts an organization has, or a project-bound key's project. */
export async function postCount(db: Db, scope: Tenant): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(posts)
    .where(tenant(scope, posts));
  return row!.n;
}
