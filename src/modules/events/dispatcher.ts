import { asc, inArray, isNull, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Database, Db } from '../../platform/db.ts';
import { events } from './tables.ts';
import { toEnvelope, type EventRow } from './service.ts';
import type { OrgMessage, OrgStream } from './org-stream.ts';

/** Runs inside the dispatch transaction: whatever it writes commits together with "dispatched". */
export type EventSubscriber = (tx: Db, batch: EventRow[]) => Promise<void>;

const BATCH = 200;

/**
 * Reads committed platform events from the outbox and fans each out: to the subscribers (webhook
 * deliveries, event-triggered workflows) in the same transaction that marks it dispatched, and to
 * the organization stream when that transaction commits. An event whose own transaction rolled back
 * never existed, so it is never sent; one committed before a crash is still undispatched after it.
 */
export class Dispatcher {
  private readonly database: Database;
  private readonly clock: Clock;
  private readonly stream: OrgStream;
  private readonly subscribers: { name: string; fn: EventSubscriber }[] = [];
  private readonly afterCommit: (() => void)[] = [];

  constructor(database: Database, clock: Clock, stream: OrgStream) {
    this.database = database;
    this.clock = clock;
    this.stream = stream;
  }

  subscribe(name: string, fn: EventSubscriber): void {
    this.subscribers.push({ name, fn });
  }

  /** Called after each committed batch (e.g. to wake the webhook sender). */
  onDispatched(fn: () => void): void {
    this.afterCommit.push(fn);
  }

  /** One batch; true when there may be more. */
  async round(): Promise<boolean> {
    const byOrg = new Map<string, OrgMessage[]>();
    const count = await this.database.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      byOrg.clear();
      const batch = await tx.select().from(events).where(isNull(events.dispatchedAt)).orderBy(asc(events.id)).limit(BATCH).for('update', { skipLocked: true });
      if (batch.length === 0) return 0;
      for (const { fn } of this.subscribers) await fn(tx, batch);
      const ids = new Map<string, string[]>();
      for (const row of batch) {
        byOrg.set(row.orgId, [...(byOrg.get(row.orgId) ?? []), { kind: row.type, data: toEnvelope(row) }]);
        ids.set(row.orgId, [...(ids.get(row.orgId) ?? []), row.id]);
      }
      await this.stream.announceDispatchedInTx(tx, ids);
      await tx.update(events).set({ dispatchedAt: this.clock.now() }).where(inArray(events.id, batch.map((e) => e.id)));
      return batch.length;
    });
    if (count === 0) return false;
    for (const [orgId, messages] of byOrg) this.stream.emitLocal(orgId, messages);
    for (const fn of this.afterCommit) fn();
    return count === BATCH;
  }

  async pending(): Promise<number> {
    const [row] = await this.database.db.select({ n: sql<number>`count(*)::int` }).from(events).where(isNull(events.dispatchedAt));
    return row?.n ?? 0;
  }
}
