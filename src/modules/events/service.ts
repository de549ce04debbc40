import { sql } from 'drizzle-orm';
import type { Bus } from '../../platform/bus.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db.ts';
import type { Deps } from '../../platform/deps.ts';
import type { EventsPorts } from './ports.ts';
import { eventRows, outboxSql, type EventRow, type NewEvent } from './outbox.ts';

export type { EventRow, NewEvent } from './outbox.ts';

/** The SPEC's platform event envelope. */
export interface PlatformEvent {
  id: string;
  type: string;
  organizationId: string;
  projectId?: string;
  at: string;
  payload: Record<string, unknown>;
}

export function toEnvelope(row: EventRow): PlatformEvent {
  const envelope: PlatformEvent = { id: row.id, type: row.type, organizationId: row.orgId, at: row.at.toISOString(), payload: row.payload };
  if (row.projectId) envelope.projectId = row.projectId;
  return envelope;
}

/** Dates inside payloads travel as ISO strings, exactly as the API shows them. */
function plain(payload: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(payload)) as Record<string, unknown>;
}

export const DISPATCHER_WAKE = 'wake:dispatcher';

/**
 * Writes platform events into the outbox. Always called with the transaction that makes the
 * change, so an event exists exactly when its change was committed. A statement that writes
 * events itself composes the same CTEs (outbox.ts).
 */
export class EventsService {
  private readonly clock: Clock;
  private readonly bus: Bus;

  constructor(deps: Deps, ports: EventsPorts) {
    this.clock = deps.clock;
    this.bus = ports.bus;
  }

  /**
   * Writes the events in the caller's transaction. By default every instance's dispatcher is woken
   * when it commits (a NOTIFY in the transaction). With `wake: 'caller'` there is no NOTIFY — a
   * NOTIFY makes commits queue behind each other across the whole database — and the caller calls
   * wakeLocal() after its commit; other instances' dispatchers find the events on their next poll,
   * and any one dispatcher is enough.
   */
  async record(tx: Db, list: NewEvent | NewEvent[], options: { wake?: 'commit' | 'caller' } = {}): Promise<PlatformEvent[]> {
    const items = Array.isArray(list) ? list : [list];
    if (items.length === 0) return [];
    const rows = eventRows(items, this.clock.now());
    const insert = outboxSql(rows);
    if (options.wake === 'caller') await tx.execute(sql`with ${insert} select count(*) from new_outbox`);
    // The rows and the wake-up of every instance's dispatcher (heard at commit) in one statement.
    else await tx.execute(sql`with ${insert} select ${this.bus.notifySql(DISPATCHER_WAKE, null)} from (select 1 from new_outbox limit 1) x`);
    return rows.map((row) => toEnvelope({ ...row, payload: plain(row.payload) }));
  }

  /** Wakes this instance's dispatcher now: for a caller whose events just committed. */
  wakeLocal(): void {
    this.bus.emitLocal(DISPATCHER_WAKE, null);
  }
}
