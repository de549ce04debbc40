import { lt } from 'drizzle-orm';
import type { Clock } from './clock.ts';
import type { Database } from './db.ts';
import { rateLimitCounters } from './tables.ts';

/**
 * Rate-limit counters in the database, so that a limit holds for the sum of the instances that share
 * it (CONTRACT §12; on the embedded store the one process is the only instance, and the same table
 * serves). A key's window starts with its first request and lasts the limiter's time window, as in
 * @fastify/rate-limit's in-memory store, so the RateLimit-* headers and Retry-After mean what they
 * meant before.
 *
 * Cost: the requests of one instance are counted in one statement at a time (group commit). Every
 * increment that arrives while a statement is in flight waits for the next one, which adds them all
 * in one `insert … on conflict do update … returning` over the distinct keys: one round trip counts a
 * burst of any size, and each request still gets its exact place in its key's count, so the sum over
 * instances never exceeds a limit (no local allowance, no overshoot).
 */
export class SharedRateLimitCounters {
  private pending = new Map<string, Pending>();
  private running = false;

  private readonly database: Database;
  private readonly clock: Clock;

  constructor(database: Database, clock: Clock) {
    this.database = database;
    this.clock = clock;
  }

  /** Counts one request for `key` in a window of `windowMs`: its place in the window, and the ms left. */
  incr(key: string, windowMs: number): Promise<{ current: number; ttl: number }> {
    return new Promise((resolve, reject) => {
      const entry = this.pending.get(key);
      if (entry) entry.waiters.push({ resolve, reject });
      else this.pending.set(key, { windowMs, waiters: [{ resolve, reject }] });
      if (!this.running) {
        this.running = true;
        // A microtask first, so requests counted in the same tick share the first statement too.
        queueMicrotask(() => void this.drain());
      }
    });
  }

  /** The count of `key`'s window without counting (0 when none is open). */
  async read(key: string): Promise<{ current: number; ttl: number }> {
    const now = this.clock.now().getTime();
    const [row] = await this.database.prepared<{ hits: number; expires_at: number }>(
      'rate_limit_read',
      'select hits, expires_at from rate_limit_counters where key = $1 and expires_at > $2',
      [key, now],
    );
    return row ? { current: Number(row.hits), ttl: Number(row.expires_at) - now } : { current: 0, ttl: 0 };
  }

  /** Deletes the windows that ended (the maintenance loop). */
  async purge(): Promise<void> {
    await this.database.db.delete(rateLimitCounters).where(lt(rateLimitCounters.expiresAt, this.clock.now().getTime()));
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.size > 0) {
        const batch = this.pending;
        this.pending = new Map();
        await this.count(batch);
      }
    } finally {
      this.running = false;
    }
  }

  private async count(batch: Map<string, Pending>): Promise<void> {
    const keys = [...batch.keys()];
    const entries = [...batch.values()];
    const now = this.clock.now().getTime();
    try {
      const rows = await this.database.prepared<{ key: string; hits: number; expires_at: number }>('rate_limit_incr', INCR, [
        now,
        keys,
        entries.map((e) => e.windowMs),
        entries.map((e) => e.waiters.length),
      ]);
      const byKey = new Map(rows.map((row) => [row.key, row]));
      for (const [key, { waiters }] of batch) {
        const row = byKey.get(key);
        if (!row) throw new Error(`rate-limit counter for ${key} was not returned`);
        const first = Number(row.hits) - waiters.length;
        const ttl = Number(row.expires_at) - now;
        waiters.forEach((w, i) => w.resolve({ current: first + i + 1, ttl }));
      }
    } catch (error) {
      for (const { waiters } of entries) for (const w of waiters) w.reject(error as Error);
    }
  }
}

interface Pending {
  windowMs: number;
  waiters: Array<{ resolve: (value: { current: number; ttl: number }) => void; reject: (error: Error) => void }>;
}

/**
 * One statement for every key of a batch: a key whose window ended starts a new one with this batch's
 * requests; otherwise they are added. The SET expressions all read the row as it was.
 */
const INCR = `insert into rate_limit_counters as c (key, window_start, expires_at, hits)
select u.k, $1::bigint, $1::bigint + u.w, u.n from unnest($2::text[], $3::bigint[], $4::int[]) as u(k, w, n)
on conflict (key) do update set
  hits = case when c.expires_at <= $1::bigint then excluded.hits else c.hits + excluded.hits end,
  window_start = case when c.expires_at <= $1::bigint then excluded.window_start else c.window_start end,
  expires_at = case when c.expires_at <= $1::bigint then excluded.expires_at else c.expires_at end
returning key, hits, expires_at`;

/**
 * The `store` option of @fastify/rate-limit over these counters: every limiter created from the
 * plugin (createRateLimit) counts here. Keys must not collide between limiters: each limiter's key
 * generator gives its keys a prefix of its own.
 */
export function rateLimitStore(counters: SharedRateLimitCounters) {
  return class SharedStore {
    incr(key: string, cb: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
      counters.incr(key, timeWindow).then(
        (result) => cb(null, result),
        (error: Error) => cb(error),
      );
    }

    read(key: string, cb: (error: Error | null, result?: { current: number; ttl: number }) => void): void {
      counters.read(key).then(
        (result) => cb(null, result),
        (error: Error) => cb(error),
      );
    }

    child(): SharedStore {
      return new SharedStore();
    }
  };
}
