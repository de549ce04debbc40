import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { lt, sql, type SQL } from 'drizzle-orm';
import type { Database, Db } from './db.ts';
import { busMessages } from './tables.ts';

const PG_CHANNEL = 'svc_bus';
const MAX_NOTIFY = 7000;

type Handler = (message: unknown) => void;
interface Wire {
  o: string;
  c: string;
  ms?: unknown[];
  r?: string;
}

/**
 * Live messages between parts of the service and across app instances. In-process delivery always;
 * on PostgreSQL, LISTEN/NOTIFY carries messages to the other instances sharing the database.
 * `publishInTx` rides on the caller's transaction: the message exists exactly when the commit does.
 */
export class Bus {
  private readonly emitter = new EventEmitter();
  private readonly origin = randomBytes(6).toString('hex');
  private readonly ownPrefix = `{"o":"${this.origin}"`;
  private readonly database: Database;
  private listener: pg.Client | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private closed = false;

  constructor(database: Database) {
    this.database = database;
    this.emitter.setMaxListeners(0);
  }

  async start(): Promise<void> {
    const onPayload = (payload: string) => void this.receive(payload);
    if (this.database.kind === 'pglite') {
      this.unlisten = await this.database.pglite!.listen(PG_CHANNEL, onPayload);
      return;
    }
    // A lost LISTEN connection must not silence the bus: it is made again, and a try that fails
    // (PostgreSQL still restarting) is tried again, 0.5 s, 1 s, 2 s… up to 5 s apart, for as long as
    // it takes. (pg reports a failed connect only to the connect() call, never as an 'error' event.)
    const connect = async () => {
      const client = new pg.Client({ connectionString: this.database.url });
      client.on('notification', (n) => n.payload && onPayload(n.payload));
      client.on('error', () => {
        if (this.listener !== client) return;
        this.listener = null;
        client.end().catch(() => {});
        again(500);
      });
      try {
        await client.connect();
        await client.query(`listen ${PG_CHANNEL}`);
      } catch (error) {
        client.end().catch(() => {});
        throw error;
      }
      if (this.closed) {
        await client.end().catch(() => {});
        return;
      }
      this.listener = client;
    };
    const again = (delayMs: number) => {
      if (this.closed) return;
      setTimeout(() => void connect().catch(() => again(Math.min(delayMs * 2, 5000))), delayMs).unref();
    };
    await connect();
  }

  subscribe(channel: string, handler: Handler): () => void {
    this.emitter.on(channel, handler);
    return () => this.emitter.off(channel, handler);
  }

  listenerCount(channel: string): number {
    return this.emitter.listenerCount(channel);
  }

  /** Publish now (after a commit, or for state that lives nowhere else). */
  async publish(channel: string, message: unknown): Promise<void> {
    this.emitter.emit(channel, message);
    if (this.database.kind === 'postgres' && !this.closed) await this.notify(this.database.db, channel, [message], true);
  }

  /** Publish when the caller's transaction commits; nothing is sent if it rolls back. */
  async publishInTx(tx: Db, channel: string, message: unknown): Promise<void> {
    await this.notify(tx, channel, [message], false);
  }

  /** Several messages for one channel at commit, packed into as few NOTIFYs as fit. */
  async publishManyInTx(tx: Db, channel: string, messages: unknown[]): Promise<void> {
    if (messages.length) await this.notify(tx, channel, messages, false);
  }

  /**
   * For a caller that emits locally itself right after its commit: the NOTIFY reaches only the
   * other instances (on PGlite there are none).
   */
  async publishToOthersInTx(tx: Db, channel: string, messages: unknown[]): Promise<void> {
    if (messages.length && this.database.kind === 'postgres') await this.notify(tx, channel, messages, true);
  }

  /**
   * `pg_notify(…)` expressions carrying messages to the other instances, for a caller that runs them
   * inside its own statement (one round trip with its write) and emits locally right after it.
   * Empty on PGlite (no other instances); null when a message is too large for one NOTIFY.
   */
  notifyOthersSql(channel: string, messages: unknown[]): SQL[] | null {
    if (this.database.kind !== 'postgres' || messages.length === 0) return [];
    const out: SQL[] = [];
    for (const message of messages) {
      const json = JSON.stringify(message) ?? 'null';
      if (Buffer.byteLength(json) > MAX_NOTIFY) return null;
      out.push(sql`pg_notify(${PG_CHANNEL}, ${`{"o":"${this.origin}","c":${JSON.stringify(channel)},"ms":[${json}]}`})`);
    }
    return out;
  }

  /**
   * A `pg_notify(…)` expression to put in the caller's own statement: every instance, this one
   * included, hears it when the transaction commits. For small messages (wake-ups, ids).
   */
  notifySql(channel: string, message: unknown): SQL {
    return sql`pg_notify(${PG_CHANNEL}, ${`{"o":"","c":${JSON.stringify(channel)},"ms":[${JSON.stringify(message) ?? 'null'}]}`})`;
  }

  /**
   * For a statement of fixed text that tells the other instances itself (`pg_notify($a, $b)` where `$a`
   * is not null) and emits locally right after its commit: the NOTIFY channel and payload. Null: no
   * other instance to tell (PGlite); false: the messages do not fit one NOTIFY (use publishInTx).
   */
  notifyOthersParams(channel: string, messages: unknown[]): { channel: string; payload: string } | null | false {
    if (this.database.kind !== 'postgres') return null;
    const json = messages.map((m) => JSON.stringify(m) ?? 'null').join(',');
    if (Buffer.byteLength(json) > MAX_NOTIFY) return false;
    return { channel: PG_CHANNEL, payload: `{"o":"${this.origin}","c":${JSON.stringify(channel)},"ms":[${json}]}` };
  }

  emitLocal(channel: string, message: unknown): void {
    this.emitter.emit(channel, message);
  }

  private async notify(db: Db, channel: string, messages: unknown[], skipSelf: boolean): Promise<void> {
    const origin = skipSelf ? this.origin : '';
    const payloads: string[] = [];
    let pack: string[] = [];
    let size = 0;
    const flush = () => {
      if (pack.length) payloads.push(`{"o":"${origin}","c":${JSON.stringify(channel)},"ms":[${pack.join(',')}]}`);
      pack = [];
      size = 0;
    };
    for (const message of messages) {
      const json = JSON.stringify(message) ?? 'null';
      if (Buffer.byteLength(json) > MAX_NOTIFY) {
        const id = randomBytes(12).toString('hex');
        await db.insert(busMessages).values({ id, channel, message: message as object });
        payloads.push(JSON.stringify({ o: origin, c: channel, r: id }));
        continue;
      }
      if (size + json.length > MAX_NOTIFY) flush();
      pack.push(json);
      size += json.length + 1;
    }
    flush();
    if (payloads.length === 1) await db.execute(sql`select pg_notify(${PG_CHANNEL}, ${payloads[0]})`);
    else if (payloads.length > 1)
      await db.execute(sql`select pg_notify(${PG_CHANNEL}, p) from unnest(${sql.param(payloads)}::text[]) with ordinality as t(p, n) order by n`);
  }

  private async receive(payload: string): Promise<void> {
    // Our own messages for the others come back too: recognise them without parsing them.
    if (payload.startsWith(this.ownPrefix)) return;
    let wire: Wire;
    try {
      wire = JSON.parse(payload) as Wire;
    } catch {
      return;
    }
    if (wire.o === this.origin) return;
    if (this.emitter.listenerCount(wire.c) === 0) return;
    if (wire.r) {
      const result = (await this.database.db.execute(sql`select message from bus_messages where id = ${wire.r}`)) as unknown as {
        rows: { message: unknown }[];
      };
      if (result.rows[0]) this.emitter.emit(wire.c, result.rows[0].message);
      return;
    }
    for (const message of wire.ms ?? []) this.emitter.emit(wire.c, message);
  }

  /** Large-message rows are only needed for the moment of delivery. */
  async purge(olderThan: Date): Promise<void> {
    await this.database.db.delete(busMessages).where(lt(busMessages.createdAt, olderThan));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.emitter.removeAllListeners();
    if (this.unlisten) await this.unlisten().catch(() => {});
    if (this.listener) await this.listener.end().catch(() => {});
  }
}
