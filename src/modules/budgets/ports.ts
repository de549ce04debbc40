import type { Db } from '../../platform/db.ts';
import type { NewEvent } from '../events/index.ts';
import type { NewNotification } from '../notifications/index.ts';

/**
 * What the budgets module uses of other modules, as interfaces: services.ts hands in the real ones
 * (the usage module's spending, the events module's recorder, notifications).
 */

/** The usage module: what the organization spent between two instants (USD). */
export interface UsagePort {
  spent(orgId: string, from: Date, to: Date, db?: Db): Promise<number>;
}

/** The events module's recorder: `budget.warning` and `budget.exceeded`, in the caller's transaction (the outbox). */
export interface EventsPort {
  record(tx: Db, list: NewEvent | NewEvent[]): Promise<unknown>;
}

/** A notification to the organization's owners, in the caller's transaction. */
export interface NotifyPort {
  notify(input: NewNotification, tx?: Db): Promise<unknown>;
}

export interface BudgetsPorts {
  usage: UsagePort;
  events: EventsPort;
  notifications: NotifyPort;
}
