import type { Bus } from '../../platform/bus.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db.ts';
import { newId } from '../../platform/ids.ts';
import { events } from './tables.ts';

/** The SPEC's platform event envelope. */
export interface PlatformEvent {
  id: string;
  type: string;
  organizationId: string;
  projectId?: string;
  at: string;
  payload: Record<string, unknown>;
}

export interface NewEvent {
  orgId: string;
  projectId?: string | null;
  type: string;
  payload: Record<string, unknown>;
}

export type EventRow = typeof events.$inferSelect;

export function toEnvelope(row: EventRow): PlatformEvent {
  const envelope: PlatformEvent = { id: row.id, type: row.type, organizationId: row.orgId, at: row.at.toISOString(), payload: row.payload };
  if (row.projectId) envelope.projectId = row.projectId;
  return envelope;
}

/** Dates inside payloads travel as ISO strings, exactly as the API shows them. */
function plain(payload: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(payload)) as Record<string, unknown>;
}

/**
 * Writes platform events into the outbox. Always called with the transaction that makes the
 * change, so an event exists exactly when its change was committed.
 */
export const DISPATCHER_WAKE = 'wake:dispatcher';

export class EventsService {
  private readonly clock: Clock;
  private readonly bus: Bus;

  constructor(clock: Clock, bus: Bus) {
    this.clock = clock;
    this.bus = bus;
  }

  async record(tx: Db, list: NewEvent | NewEvent[]): Promise<PlatformEvent[]> {
    const items = Array.isArray(list) ? list : [list];
    if (items.length === 0) return [];
    const at = this.clock.now();
    const rows: EventRow[] = items.map((e) => ({
      id: newId('event', at.getTime()),
      orgId: e.orgId,
      projectId: e.projectId ?? null,
      type: e.type,
      payload: plain(e.payload),
      at,
      dispatchedAt: null,
    }));
    await tx.insert(events).values(rows);
    // Wakes the dispatchers of every instance the moment this transaction commits.
    await this.bus.publishInTx(tx, DISPATCHER_WAKE, null);
    return rows.map(toEnvelope);
  }
}
