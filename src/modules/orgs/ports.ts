import type { Db } from '../../platform/db.ts';

/** What the orgs module needs of others, handed in by services.ts. */

/** The plans module: the plan new organizations get, and the members limit (CONTRACT §12). */
export interface OrgsPlansPort {
  /** The plan new organizations get (null: no PLANS). */
  readonly initialPlan: string | null;
  /** In the adding transaction: 429 PLAN_LIMIT when `adding` more members would pass the limit (holds a lock until it ends). */
  assertRoom(tx: Db, orgId: string, limit: 'members', adding?: number): Promise<void>;
}

/** OrgsService: the plans module when plans are on. */
export interface OrgsPorts {
  plans?: OrgsPlansPort;
}
