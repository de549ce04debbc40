import { sql, type SQL } from 'drizzle-orm';
import type { Bus } from '../../../platform/bus.ts';
import { transaction, type Db } from '../../../platform/db.ts';

interface Queued {
  /** pg_notify(…) calls for the other instances; null when too large for one NOTIFY. */
  notify: SQL[] | null;
  /** Sends it in a transaction of its own (the bus parks a large message in a row). */
  fallback: (tx: Db) => Promise<void>;
  /** Identical wake-ups in one batch collapse into one. */
  dedupe?: string;
}

/**
 * Tells the OTHER instances about changes this one has already committed (and emitted locally), in
 * batches: whatever was queued while one NOTIFY statement was in flight goes out in the next one.
 *
 * Why not a NOTIFY inside each change's transaction: PostgreSQL serializes the commits of
 * NOTIFY-carrying transactions (a database-wide lock held across the commit's WAL flush), so a
 * NOTIFY per run step caps the whole database at a few hundred such commits per second. Here many
 * runs share one.
 *
 * Only for messages whose truth lives in the database: a message lost with a crash between commit
 * and send is found by the receivers' own polls (run streams catch up from run_events; workers
 * poll for due work).
 */
export class OthersNotifier {
  private readonly bus: Bus;
  private readonly db: Db;
  private readonly enabled: boolean;
  private queue: Queued[] = [];
  private sending: Promise<void> | null = null;

  constructor(bus: Bus, db: Db, enabled: boolean) {
    this.bus = bus;
    this.db = db;
    this.enabled = enabled;
  }

  /** Messages on a bus channel; those of one channel arrive in the order they were queued. */
  send(channel: string, messages: unknown[]): void {
    if (!this.enabled || messages.length === 0) return;
    this.enqueue({ notify: this.bus.notifyOthersSql(channel, messages), fallback: (tx) => this.bus.publishToOthersInTx(tx, channel, messages) });
  }

  /** A wake-up (null message) on a channel; several in one batch are sent once. */
  wake(channel: string): void {
    if (!this.enabled) return;
    this.enqueue({ notify: this.bus.notifyOthersSql(channel, [null]), fallback: (tx) => this.bus.publishToOthersInTx(tx, channel, [null]), dedupe: channel });
  }

  /** For a caller with its own channel naming (the organization stream). */
  enqueue(item: Queued): void {
    if (!this.enabled) return;
    this.queue.push(item);
    if (!this.sending) this.sending = this.pump();
  }

  /** Resolves when everything queued so far has been sent (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.sending) await this.sending;
  }

  private async pump(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue;
        this.queue = [];
        await this.sendBatch(batch).catch(() => {
          // The receivers' polls cover a lost message.
        });
      }
    } finally {
      this.sending = null;
    }
  }

  private async sendBatch(batch: Queued[]): Promise<void> {
    // Identical wake-ups (null messages) collapse into one.
    const seen = new Set<string>();
    let calls: SQL[] = [];
    const flush = async () => {
      if (calls.length) await this.db.execute(sql`select ${sql.join(calls, sql`, `)}`);
      calls = [];
    };
    for (const item of batch) {
      if (item.dedupe !== undefined) {
        if (seen.has(item.dedupe)) continue;
        seen.add(item.dedupe);
      }
      if (item.notify) {
        calls.push(...item.notify);
        if (calls.length >= 200) await flush();
        continue;
      }
      // Too large for one NOTIFY: keep the order of what came before.
      await flush();
      await transaction(this.db, async (tx) => item.fallback(tx));
    }
    await flush();
  }
}

const notifiers = new WeakMap<Bus, OthersNotifier>();

/** The one notifier of a bus (one per app instance). */
export function othersNotifier(bus: Bus, db: Db, kind: 'pglite' | 'postgres'): OthersNotifier {
  let notifier = notifiers.get(bus);
  if (!notifier) {
    notifier = new OthersNotifier(bus, db, kind === 'postgres');
    notifiers.set(bus, notifier);
  }
  return notifier;
}
