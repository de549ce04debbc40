import type { SQL } from 'drizzle-orm';
import type { Db } from '../../platform/db.ts';
import type { CountLimit, MonthlyLimit } from '../../shared/plans.ts';

/**
 * What the plans module needs of others, handed in by services.ts. Plans reads no other module's
 * table itself: each limit's rows are counted through a fragment the owning module exports, and an
 * organization's plan is read and set through the orgs module.
 */

/** The rows an organization holds of a counted resource, one row each (`select 1 from … where …`). */
export type HeldRows = (orgId: string) => SQL;

/** What an organization started of a monthly resource since `since` (an ISO instant), one row each. */
export type StartedRows = (orgId: string, since: string) => SQL;

/** The registry of counted resources: for each limit, the fragment of the module that owns its rows. */
export interface CountedResources {
  held: Record<CountLimit, HeldRows>;
  started: Record<MonthlyLimit, StartedRows>;
}

/** The orgs module: an organization's stored plan, and setting it. */
export interface OrgPlansPort {
  /** The stored plan (null: none), or undefined for no such organization. */
  storedPlan(db: Db, orgId: string): Promise<string | null | undefined>;
  /** Sets the plan; the organization's id and name, or undefined for no such organization. */
  storePlan(db: Db, orgId: string, plan: string): Promise<{ id: string; name: string } | undefined>;
}

/** The bus: a set-plan drops every instance's cached plan. */
export interface PlansBusPort {
  publish(channel: string, message: unknown): Promise<void>;
  subscribe(channel: string, handler: (message: unknown) => void): unknown;
}

export interface PlansPorts {
  bus: PlansBusPort;
  orgs: OrgPlansPort;
  counted: CountedResources;
}
