import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { sql, type SQL } from 'drizzle-orm';
import { PgDialect, type PgDatabase, type PgQueryResultHKT, type PgTransaction, type PgTransactionConfig } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';

export type Db = PgDatabase<PgQueryResultHKT>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Tx = PgTransaction<any, any, any>;

/**
 * What every embedded database loads: pg_trgm and btree_gin back lead search and filters (migrations
 * create the extensions).
 */
export const PGLITE_OPTIONS: PGliteOptions = { extensions: { btree_gin, pg_trgm } };

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations', import.meta.url));

/** The one stateful dependency: embedded PGlite or a PostgreSQL server, behind the same Drizzle API. */
export interface Database {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** The PGlite instance when embedded (LISTEN/NOTIFY is in-process there). */
  pglite?: PGlite;
  /** The pool when on PostgreSQL. */
  pool?: pg.Pool;
  url?: string;
  /**
   * A hot-path statement of fixed text. On PostgreSQL it is prepared once per pooled connection under
   * `name` (parsed and planned once, then only executed: for the big single-statement writes that is
   * most of the server's work); on PGlite it runs as is. Give each text its own name. With `tx` it runs
   * inside that transaction, unprepared: the same statement for a caller that must write more with it.
   */
  prepared<T>(name: string, text: string, values: unknown[], tx?: Db): Promise<T[]>;
  /** Applies the migrations not applied yet; says how many that was, of how many there are. */
  migrate(): Promise<MigrationResult>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

// Timestamps and bigints come back as JS values the API can serialize directly.
pg.types.setTypeParser(20, (v) => Number(v)); // int8 counts
pg.types.setTypeParser(1700, (v) => Number(v)); // numeric

export function openDatabase(options: { databaseUrl?: string; dataDir: string; poolSize?: number }): Database {
  const url = options.databaseUrl;
  if (url && /^postgres(ql)?:\/\//.test(url)) {
    const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
    // A client losing its connection (PostgreSQL restarted, a backend terminated) must not crash
    // the process. The pool listens on idle clients only; a client checked out between two queries
    // (inside a transaction, a worker's claim) emits the error with nobody listening, and Node
    // throws an unhandled 'error' event. So every client gets a listener of its own when it
    // connects: the query in flight fails with the error, and the pool drops the client on release.
    pool.on('error', () => {});
    pool.on('connect', (client) => {
      client.on('error', () => {});
      releaseOnFailedBegin(client);
    });
    const db = drizzlePg(pool) as unknown as Db;
    return {
      db,
      kind: 'postgres',
      pool,
      url,
      prepared: async <T>(name: string, text: string, values: unknown[], tx?: Db) =>
        tx ? rows<T>(tx, fixedText(text, values)) : ((await pool.query({ name, text, values })).rows as T[]),
      migrate: async () => {
        // Instances starting together (compose's replicas) migrate one after the other: each holds
        // an advisory lock on one connection and migrates through it; the later ones find nothing
        // left to apply.
        const client = await pool.connect();
        try {
          await client.query('select pg_advisory_lock(hashtext($1))', ['automation-service:migrate']);
          const one = drizzlePg(client) as unknown as Db;
          return await counted(one, () => migratePg(one as never, { migrationsFolder: MIGRATIONS_DIR }));
        } finally {
          await client.query('select pg_advisory_unlock(hashtext($1))', ['automation-service:migrate']).catch(() => undefined);
          // Already released if a migration's BEGIN failed (releaseOnFailedBegin).
          try {
            client.release();
          } catch {
            /* released with its error */
          }
        }
      },
      ping: async () => {
        await db.execute(sql`select 1`);
      },
      close: async () => {
        await pool.end();
      },
    };
  }
  let client: PGlite;
  if (url === 'memory://') {
    client = new PGlite(PGLITE_OPTIONS);
  } else if (url && !url.startsWith('file://')) {
    throw new Error(`DATABASE_URL must be postgres://…, memory:// or unset; got "${url.split(':')[0]}:…"`);
  } else {
    const dir = url ? fileURLToPath(url) : join(options.dataDir, 'pgdata');
    mkdirSync(dir, { recursive: true });
    const unlock = lockDataDir(dir);
    client = new PGlite(dir, PGLITE_OPTIONS);
    const database = wrapPglite(client);
    const close = database.close;
    return {
      ...database,
      close: async () => {
        await close();
        unlock();
      },
    };
  }
  return wrapPglite(client);
}

/** Whether a process with this id exists (lock files and test databases name their owner's pid). */
/**
 * drizzle-orm's node-postgres transaction() runs BEGIN before the try/finally that releases its
 * pooled client (drizzle-team/drizzle-orm#6241, open in 0.45.4, the newest): when BEGIN fails — the
 * client's connection died while it sat idle, as a PostgreSQL restart leaves them — the client is
 * never released, and each such failure takes one of the pool's ten connections for the life of the
 * process until every query waits for ever. A client whose BEGIN fails is released here (with the
 * error, so the pool discards it); drizzle then has nothing to release.
 */
function releaseOnFailedBegin(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const isBegin = (first: unknown) => {
    const text = typeof first === 'string' ? first : (first as { text?: unknown } | null)?.text;
    return typeof text === 'string' && /^\s*begin\b/i.test(text);
  };
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const result = query(...args);
    if (isBegin(args[0]) && result instanceof Promise) {
      result.catch((error: Error) => client.release(error));
    }
    return result;
  };
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The embedded database belongs to one process at a time: a second one (a CLI command while the
 * server runs) would write to files the first has cached, and its writes would be lost. A lock file
 * holds the owner's pid; one left by a process that died is taken over.
 */
function lockDataDir(dir: string): () => void {
  const file = `${dir}.lock`;
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(file, 'utf8').trim());
      if (owner && owner !== process.pid && processAlive(owner)) {
        throw new EmbeddedDatabaseBusy(
          `The embedded database in ${dir} is in use by process ${owner}. Stop it first (or run the command through the running server's API), or use PostgreSQL (DATABASE_URL) to share one database between processes.`,
          owner,
        );
      }
      rmSync(file, { force: true });
    }
  }
  return () => {
    try {
      if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
}

export class EmbeddedDatabaseBusy extends Error {
  /** The process that holds the database. */
  readonly owner: number;

  constructor(message: string, owner: number) {
    super(message);
    this.owner = owner;
  }
}

export interface MigrationResult {
  /** Migrations this call applied. */
  applied: number;
  /** Migrations recorded in the database afterwards. */
  total: number;
  ms: number;
}

/** Drizzle's migrators say nothing: count its bookkeeping rows before and after, for the start-up log. */
async function counted(db: Db, run: () => Promise<unknown>): Promise<MigrationResult> {
  const recorded = async () => {
    // The table is planned even in an untaken CASE branch, so ask whether it exists first.
    const [table] = await rows<{ t: string | null }>(db, sql`select to_regclass('drizzle.__drizzle_migrations')::text as t`);
    if (!table?.t) return 0;
    const [row] = await rows<{ n: number }>(db, sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
    return Number(row?.n ?? 0);
  };
  const started = performance.now();
  const before = await recorded();
  await run();
  const total = await recorded();
  return { applied: total - before, total, ms: Math.round(performance.now() - started) };
}

export function wrapPglite(client: PGlite): Database {
  yieldBetweenStatements(client);
  const db = drizzlePglite(client) as unknown as Db;
  return {
    db,
    kind: 'pglite',
    pglite: client,
    prepared: async <T>(_name: string, text: string, values: unknown[], tx?: Db) =>
      tx ? rows<T>(tx, fixedText(text, values)) : (await client.query<T>(text, values)).rows,
    migrate: () => counted(db, () => migratePglite(db as never, { migrationsFolder: MIGRATIONS_DIR })),
    ping: async () => {
      await db.execute(sql`select 1`);
    },
    close: async () => {
      if (!client.closed) await client.close();
    },
  };
}

/**
 * PGlite runs each protocol exchange synchronously on this thread, and the statements queued for its
 * one connection follow one another in microtasks: under load the event loop (incoming requests,
 * answers, timers, outbound calls) waited for the whole queue, 200–600 ms at a time. A turn of the
 * event loop before each exchange lets that I/O in between.
 */
function yieldBetweenStatements(client: PGlite): void {
  const exchange = client.execProtocolStream.bind(client);
  client.execProtocolStream = async (...args: Parameters<PGlite['execProtocolStream']>) => {
    await new Promise<void>((resolve) => setImmediate(resolve));
    return exchange(...args);
  };
}

/** A statement of fixed text with `$n` placeholders as a Drizzle query, each placeholder bound to its value. */
function fixedText(text: string, values: unknown[]): SQL {
  // split with a capture group: text, placeholder number, text, …
  const parts = text.split(/\$(\d+)/);
  return sql.join(parts.map((part, i) => (i % 2 === 0 ? sql.raw(part) : sql`${sql.param(values[Number(part) - 1])}`)));
}

/**
 * A Drizzle expression as a piece of a statement of fixed text (Database.prepared): its parameters
 * numbered from `$first` on, and what each is, in that order — a constant or a `sql.placeholder`,
 * bound at each execution with `fillPlaceholders(params, values)`. So an expression kept once as a
 * Drizzle builder can join a hot statement without a second copy of its text.
 */
export function fixedFragment(query: SQL, first: number): { text: string; params: unknown[] } {
  const { sql: text, params } = new PgDialect().sqlToQuery(query);
  return { text: text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + first - 1}`), params };
}

/** Rows of a raw query, whichever driver ran it. */
export async function rows<T>(db: Db, query: ReturnType<typeof sql>): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

/**
 * `fn` in a transaction, handed the transaction as a `Db`: every function that takes a `Db` (a
 * module's queries, the events CTEs, the tenant filter) runs inside it unchanged. Drizzle types the
 * transaction as its own class, which TypeScript does not see as the database it came from; this is
 * the one place that says it is.
 */
export function transaction<T>(db: Db, fn: (tx: Db) => Promise<T>, config?: PgTransactionConfig): Promise<T> {
  return db.transaction((trx) => fn(trx as unknown as Db), config);
}

/**
 * `fn` in a transaction whose statements the planner may not answer by bitmap scans: for a statement
 * that needs only the first rows of an index in its order (a capped count, a claim of the oldest due
 * rows), where a planner misled by its statistics would read and sort every match first.
 */
export function withoutBitmapScans<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  return transaction(db, async (tx) => {
    await tx.execute(sql`set local enable_bitmapscan = off`);
    return fn(tx);
  });
}

/** Whether a database error carries this SQLSTATE, thrown by the driver or wrapped by Drizzle. */
function hasSqlState(error: unknown, state: string): boolean {
  const e = error as { code?: string; cause?: { code?: string } } | undefined;
  return e?.code === state || e?.cause?.code === state;
}

export const isUniqueViolation = (error: unknown): boolean => hasSqlState(error, '23505');
export const isForeignKeyViolation = (error: unknown): boolean => hasSqlState(error, '23503');
