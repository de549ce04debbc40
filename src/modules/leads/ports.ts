import type { Db } from '../../platform/db.ts';
import type { LimitName } from '../../shared/plans.ts';
import type { NewEvent } from '../events/index.ts';

/**
 * What the leads module uses of other modules, as interfaces: services.ts hands in the real ones
 * (the events module's recorder, orgs, plans).
 */

/** The events module's recorder: events written in the caller's transaction (the outbox). */
export interface EventsPort {
  /** With `wake: 'caller'` no NOTIFY goes with the events: the caller calls wakeLocal() after its commit. */
  record(tx: Db, list: NewEvent | NewEvent[], options?: { wake?: 'commit' | 'caller' }): Promise<unknown>;
  /** Wakes this instance's dispatcher now: for a caller whose events just committed. */
  wakeLocal(): void;
}

/** The orgs module: the project a lead goes to. */
export interface OrgsPort {
  /** The project a request may use (a project-bound API key's own; 404 for another organization's); null when none is named. */
  projectFor(scope: { orgId: string; projectId: string | null }, requested: string | null | undefined): Promise<string | null>;
  /** The project a resource goes to when none is named: the organization's first. */
  defaultProjectId(orgId: string): Promise<string>;
}

/** The plans module: the leads limit (CONTRACT §12). */
export interface PlansPort {
  readonly enabled: boolean;
  /** The plan's value of a limit; null: none. In a transaction, pass it (`db`): the plan may be read. */
  limitOf(orgId: string, limit: LimitName, db?: Db): Promise<number | null>;
  /** In the creating transaction: 429 PLAN_LIMIT when one more lead would pass the limit (holds a lock until it ends). */
  assertRoom(tx: Db, orgId: string, limit: 'leads', adding?: number): Promise<void>;
}

export interface LeadsPorts {
  events: EventsPort;
  orgs: OrgsPort;
  plans?: PlansPort;
}
