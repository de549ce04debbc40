import { mkdtempSync, rmSync } from 'node:fs';
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
      name, database, dataDir,
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
    name, database, dataDir,
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
