import type { Bus } from '../../platform/bus.ts';
import type { Db } from '../../platform/db.ts';

/** What the events module's services are built with besides the deps, handed in by services.ts. */

/** The ports of EventsService and of the OrgStream. */
export interface EventsPorts {
  /** The bus: the dispatchers' wake-up at commit, and the organization stream's channels across instances. */
  bus: Bus;
}

/** The organization stream as the dispatcher uses it (the module's OrgStream). */
export interface DispatchStreamPort {
  /** Whether a connection of this instance listens to the organization's stream. */
  listenedHere(orgId: string): boolean;
  /** Tells the other instances which platform events this one dispatched (when the caller's transaction commits). */
  announceDispatchedInTx(tx: Db, byOrg: Map<string, string[]>): Promise<void>;
  emitLocal(orgId: string, messages: { kind: string; data: unknown }[]): void;
}

/** The ports of the Dispatcher. */
export interface DispatcherPorts {
  orgStream: DispatchStreamPort;
}
