import type { Db } from '../../platform/db.ts';
import type { NewEvent } from '../events/index.ts';
import type { NewNotification } from '../notifications/index.ts';

/**
 * What the integrations module uses of other modules, as interfaces: services.ts hands in the real
 * ones (the events module's recorder, orgs, notifications).
 */

/** The events module's recorder: `integration.*` events in the caller's transaction (the outbox). */
export interface EventsPort {
  record(tx: Db, list: NewEvent | NewEvent[]): Promise<unknown>;
}

/** The orgs module: the project an integration belongs to. */
export interface OrgsPort {
  /**
   * The project a request may use: an API key's own project (naming another is a 403), or the
   * requested one, which must belong to the organization (else 404), or null when none is named.
   */
  projectFor(scope: { orgId: string; projectId: string | null }, requested: string | null | undefined): Promise<string | null>;
}

/** A notification to the organization (an integration that needs re-authorization), in the caller's transaction. */
export interface NotifyPort {
  notify(input: NewNotification, tx?: Db): Promise<unknown>;
}

export interface IntegrationsPorts {
  events: EventsPort;
  orgs: OrgsPort;
  notifications: NotifyPort;
}
