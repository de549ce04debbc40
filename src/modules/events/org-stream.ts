import { asc, inArray } from 'drizzle-orm';
import type { Bus } from '../../platform/bus.ts';
import type { Db } from '../../platform/db.ts';
import type { Deps } from '../../platform/deps.ts';
import type { EventsPorts } from './ports.ts';
import { toEnvelope } from './service.ts';
import { events } from './tables.ts';

/** One message of the organization stream: `event:` is `kind`, `data:` is `data`. */
export interface OrgMessage {
  kind: string;
  data: unknown;
  /** Only that user's connections (and the organization's API keys) receive it. */
  userId?: string | null;
}

const channel = (orgId: string) => `org:${orgId}`;
/** Which platform events another instance has just dispatched: ids only, the rows are in `events`. */
const DISPATCHED = 'org-events:dispatched';
interface Dispatched {
  orgId: string;
  ids: string[];
}

/**
 * The live organization stream (no replay): notifications, approval requests, run and agent
 * summaries and every platform event, across app instances through the bus.
 */
export class OrgStream {
  private readonly bus: Bus;
  private readonly db: Db;

  constructor(deps: Deps, ports: EventsPorts) {
    this.bus = ports.bus;
    this.db = deps.db;
    this.bus.subscribe(DISPATCHED, (message) => void this.relay(message as Dispatched).catch(() => {}));
  }

  /**
   * Tells the other instances which platform events this one dispatched (when the caller's
   * transaction commits). Only ids travel: an instance with a listener in the organization reads
   * the events themselves, and one without pays nothing — most events have no listener anywhere.
   */
  announceDispatchedInTx(tx: Db, byOrg: Map<string, string[]>): Promise<void> {
    return this.bus.publishToOthersInTx(
      tx,
      DISPATCHED,
      [...byOrg].map(([orgId, ids]): Dispatched => ({ orgId, ids })),
    );
  }

  private async relay({ orgId, ids }: Dispatched): Promise<void> {
    if (!this.listenedHere(orgId)) return;
    const rows = await this.db.select().from(events).where(inArray(events.id, ids)).orderBy(asc(events.id));
    this.emitLocal(
      orgId,
      rows.filter((row) => row.orgId === orgId).map((row) => ({ kind: row.type, data: toEnvelope(row) })),
    );
  }

  publish(orgId: string, message: OrgMessage): Promise<void> {
    return this.bus.publish(channel(orgId), message);
  }

  /** Sent when the caller's transaction commits. */
  publishInTx(tx: Db, orgId: string, message: OrgMessage): Promise<void> {
    return this.bus.publishInTx(tx, channel(orgId), message);
  }

  /** Several messages of one organization at commit, in as few notifications as fit. */
  publishManyInTx(tx: Db, orgId: string, messages: OrgMessage[]): Promise<void> {
    return this.bus.publishManyInTx(tx, channel(orgId), messages);
  }

  /** Other instances hear of these at commit; call emitLocal for this one after the commit. */
  publishToOthersInTx(tx: Db, orgId: string, messages: OrgMessage[]): Promise<void> {
    return this.bus.publishToOthersInTx(tx, channel(orgId), messages);
  }

  /** The NOTIFY for the other instances as parameters of a statement of fixed text (see Bus.notifyOthersParams). */
  notifyOthersParams(orgId: string, messages: OrgMessage[]) {
    return this.bus.notifyOthersParams(channel(orgId), messages);
  }

  /** NOTIFY expressions for the other instances, to run inside the caller's own statement (see Bus.notifyOthersSql). */
  notifyOthersSql(orgId: string, messages: OrgMessage[]) {
    return this.bus.notifyOthersSql(channel(orgId), messages);
  }

  /** Whether a connection of this instance listens to the organization's stream. */
  listenedHere(orgId: string): boolean {
    return this.bus.listenerCount(channel(orgId)) > 0;
  }

  emitLocal(orgId: string, messages: OrgMessage[]): void {
    for (const message of messages) this.bus.emitLocal(channel(orgId), message);
  }

  subscribe(orgId: string, handler: (message: OrgMessage) => void): () => void {
    return this.bus.subscribe(channel(orgId), handler as (m: unknown) => void);
  }
}
