import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase, type Database } from '../src/platform/db.ts';

export const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = '/' + name;
  return u.toString();
}

export async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

export interface BenchStore {
  name: 'postgres' | 'embedded';
  database: Database;
  dataDir: string;
  dispose(): Promise<void>;
}

/** A migrated throwaway store: a fresh PostgreSQL database, or PGlite in a temp directory. */
export async function openStore(name: BenchStore['name'], label: string, poolSize = 20): Promise<BenchStore> {
  const dataDir = mkdtempSync(join(tmpdir(), `svc-bench-${label}-`));
  if (name === 'postgres') {
    const db = `svc_bench_${label}`;
    await admin(`drop database if exists "${db}" with (force)`);
    await admin(`create database "${db}"`);
    const database = openDatabase({ databaseUrl: withDatabase(PG_URL, db), dataDir, poolSize });
    await database.migrate();
    return {
      name,
      database,
      dataDir,
      dispose: async () => {
        await database.close();
        await admin(`drop database if exists "${db}" with (force)`);
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const database = openDatabase({ dataDir, databaseUrl: undefined });
  await database.migrate();
  return {
    name,
    database,
    dataDir,
    dispose: async () => {
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function postgresReachable(): Promise<boolean> {
  try {
    await admin('select 1');
    return true;
  } catch {
    return false;
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function printTable(rows: Record<string, string | number>[]): void {
  if (rows.length === 0) return;
  const keys = Object.keys(rows[0]!);
  const width = keys.map((k) => Math.max(k.length, ...rows.map((r) => String(r[k]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(width[i]!)).join('  ');
  console.log(line(keys));
  console.log(line(width.map((w) => '-'.repeat(w))));
  for (const r of rows) console.log(line(keys.map((k) => String(r[k]))));
}

/**
 * A process's name and CPU time (user + system, ms) from /proc, and that of its children which
 * exited and were waited for; null when it is gone.
 */
function procCpu(pid: number | string): { name: string; ms: number; childrenMs: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    // After the name: utime, stime, cutime and cstime are the 12th to 15th fields (stat's 14th to
    // 17th), in USER_HZ (100) ticks.
    return {
      name: stat.slice(stat.indexOf('(') + 1, close),
      ms: (Number(fields[11]) + Number(fields[12])) * 10,
      childrenMs: (Number(fields[13]) + Number(fields[14])) * 10,
    };
  } catch {
    return null;
  }
}

/** CPU time (ms) of one process (another than this one: a server under test); 0 when it is gone. */
export const processCpuMs = (pid: number) => procCpu(pid)?.ms ?? 0;

/**
 * CPU time (ms) of every local process named `postgres`, and of those that have exited (a backend
 * of a closed connection, an autovacuum worker: the postmaster waits for them, so their time is in
 * its children's), so that a difference of two readings never loses a process that ended between
 * them; null when none is visible.
 */
export function postgresCpuMs(): number | null {
  const all = readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .map(procCpu)
    .filter((p) => p?.name === 'postgres');
  return all.length ? all.reduce((sum, p) => sum + p!.ms + p!.childrenMs, 0) : null;
}

/**
 * The CPU a phase of a benchmark cost: this process's (the service and, on the embedded store, its
 * database) and PostgreSQL's (its processes on this machine; the other databases' idle work too,
 * which is small). `stop(n)` gives both per unit of work.
 */
export function cpuMeter(): { stop(units: number): { ownMsPer: number; postgresMsPer: number | null } } {
  const own = process.cpuUsage();
  const pgStart = postgresCpuMs();
  return {
    stop(units) {
      const used = process.cpuUsage(own);
      const pgEnd = postgresCpuMs();
      return {
        ownMsPer: (used.user + used.system) / 1000 / units,
        postgresMsPer: pgStart === null || pgEnd === null ? null : (pgEnd - pgStart) / units,
      };
    },
  };
}
