/**
 * Leads API throughput: lead create (new people), lead create (duplicates) and a filtered list,
 * on PostgreSQL and on the embedded PGlite, beside a bare Fastify + pg route doing one INSERT
 * (the floor) in the same run. Each case runs against a real listening server with autocannon
 * at a fixed concurrency, from a separate process.
 *
 *   npm run bench -- leads
 *
 * Environment: BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres; a throwaway
 * database `svc_bench` is created there and dropped after), BENCH_CONNECTIONS (20),
 * BENCH_SECONDS (6 per case), BENCH_WARMUP_SECONDS (2, unrecorded, before each case),
 * BENCH_ROUNDS (3: create and floor alternate this many times on PostgreSQL; medians are shown),
 * BENCH_STORES (`postgres,pglite`: which stores to run), BENCH_SCALE (1000000: leads seeded on
 * PostgreSQL for the search-at-scale cases; 0 skips them), BENCH_LIST_CONNECTIONS (4: concurrency of
 * those cases, a few users searching at once).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/platform/db.ts';
import type { LoadJob, LoadResult } from './load.ts';
import { PG_URL, admin, postgresReachable, withDatabase } from './_stores.ts';

const BENCH_DB = 'svc_bench';
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const STORES = (process.env.BENCH_STORES ?? 'postgres,pglite').split(',').map((s) => s.trim());
const POOL_SIZE = 20;
const SCALE = Number(process.env.BENCH_SCALE ?? 1_000_000);
const LIST_CONNECTIONS = Number(process.env.BENCH_LIST_CONNECTIONS ?? 4);

interface Row extends LoadResult {
  case: string;
  store: string;
}

const LOAD_SCRIPT = fileURLToPath(new URL('./load.ts', import.meta.url));

/** autocannon in a child process, so the load generator does not share the server's event loop. */
function load(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [LOAD_SCRIPT, JSON.stringify(job)], { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`load generator failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as LoadResult);
    });
  });
}

/** One short unrecorded round first, so the JIT and the pools are warm, then the measured one. */
async function measure(job: Omit<LoadJob, 'connections' | 'seconds'>): Promise<LoadResult> {
  await load({ ...job, connections: CONNECTIONS, seconds: WARMUP });
  return load({ ...job, connections: CONNECTIONS, seconds: SECONDS });
}

/** The round with the median throughput. */
function median(results: LoadResult[]): LoadResult {
  return [...results].sort((a, b) => a.rps - b.rps)[Math.floor(results.length / 2)]!;
}

interface Target {
  job: Omit<LoadJob, 'connections' | 'seconds'>;
  close(): Promise<void>;
}

interface Service extends Target {
  list: string;
  leadsUrl: string;
  orgId: string;
  headers: Record<string, string>;
  /** The organization's lead count as the API gives it (`~n` when it is an estimate). */
  total(): Promise<string>;
}

async function startService(database: Database, dataDir: string): Promise<Service> {
  await database.migrate();
  const config = loadConfig({
    NODE_ENV: 'development',
    APP_SECRET: 'bench-secret-that-is-long-enough',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000000',
    AUTH_RATE_LIMIT_MAX: '100000000',
  });
  const app = await buildApp({ config, database, workers: !process.env.NO_WORKERS });
  const { organization } = await app.services.auth.createUserWithOrg({ email: 'bench@example.com', password: 'bench password', organizationName: 'Bench' });
  const { key } = await app.services.apiKeys.create(organization.id, { name: 'bench', scopes: ['leads:read', 'leads:write'] });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `${address}/api/v1/orgs/${organization.id}/leads`;
  const headers = { 'x-api-key': key };
  return {
    job: { url, kind: 'create-new', headers },
    list: `${url}?status=NEW&tags=x&q=acme`,
    leadsUrl: url,
    orgId: organization.id,
    headers,
    total: async () => {
      const page = (await app.inject({ url: `/api/v1/orgs/${organization.id}/leads?pageSize=1`, headers })).json<{ total: number; totalIsEstimate?: boolean }>();
      return `${page.totalIsEstimate ? '~' : ''}${page.total}`;
    },
    close: () => app.close(),
  };
}

/**
 * Adds `count` leads to the organization's first project in a few statements: 5,000 companies, 1,000
 * e-mail domains, 20 sources of which `trade-fair` is 0.5 %, statuses spread evenly, 50 tags, two
 * per lead. Their matching keys are set as create would set them (the claims are not needed here).
 */
async function seedLeads(url: string, orgId: string, count: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>('select id from projects where org_id = $1 order by created_at limit 1', [orgId]);
    const batch = 100_000;
    for (let from = 1; from <= count; from += batch) {
      await client.query(`
        insert into leads (id, org_id, project_id, name, email, email_key, phone, phone_key, company, website, website_key, source, status, score, tags, custom, created_at, updated_at)
        select 'lead_seed' || lpad(i::text, 8, '0'), $1, $2, 'Person ' || i, 'p' || i || '@domain' || (i % 1000) || '.example', 'p' || i || '@domain' || (i % 1000) || '.example',
          case when i % 3 = 0 then '+1415' || lpad((i % 10000000)::text, 7, '0') end, case when i % 3 = 0 then '+1415' || lpad((i % 10000000)::text, 7, '0') end,
          'Company ' || (i % 5000), 'https://www' || (i % 1000) || '.domain.example', 'www' || (i % 1000) || '.domain.example',
          case when i % 200 = 0 then 'trade-fair' else 'source-' || (i % 19) end,
          (array['NEW','CONTACTED','ENGAGED','QUALIFIED','UNQUALIFIED','CUSTOMER','LOST'])[1 + i % 7], (i::bigint * 7919) % 101,
          array['t' || (i % 50), 't' || ((i / 50) % 50)], '{}'::jsonb,
          now() - (i || ' seconds')::interval, now() - (i || ' seconds')::interval
        from generate_series($3::int, $4::int) as i`, [orgId, rows[0]!.id, from, Math.min(count, from + batch - 1)]);
    }
    await client.query('analyze leads');
  } finally {
    await client.end();
  }
}

/** Searches and filters at scale: selective ones (under 1 % of leads) and broad ones. */
function scaleCases(service: Service): { name: string; query: string }[] {
  return [
    ['q: a company (0.02 %)', 'q=Company%204321'],
    ['q: an e-mail domain (0.1 %)', 'q=domain77.example'],
    ['q: a phone number (1 lead)', 'q=%2B14150003'],
    ['filter: source (0.5 %)', 'source=trade-fair'],
    ['filter: minScore=100 (1 %)', 'minScore=100'],
    ['filter: status + tag (0.3 %)', 'status=QUALIFIED&tags=t7'],
    ['q + filter (0.02 %)', 'q=Company%20123&status=NEW'],
    ['broad q: "example" (all)', 'q=example'],
    ['broad q: "person 1" (11 %)', 'q=person%201'],
    ['broad filter: status=NEW (14 %)', 'status=NEW'],
    ['broad: no filter, sort by name', 'sort=name'],
  ].map(([name, query]) => ({ name: name!, query: `${service.leadsUrl}?${query}` }));
}

async function benchScale(store: string, service: Service, url: string): Promise<Row[]> {
  const started = Date.now();
  await seedLeads(url, service.orgId, SCALE);
  const total = await service.total();
  console.log(`seeded ${SCALE} leads in ${((Date.now() - started) / 1000).toFixed(0)} s (${total} in the organization)\n`);
  const rows: Row[] = [];
  for (const { name, query } of scaleCases(service)) {
    const job = { url: query, kind: 'list' as const, headers: service.headers };
    await load({ ...job, connections: LIST_CONNECTIONS, seconds: WARMUP });
    const result = await load({ ...job, connections: LIST_CONNECTIONS, seconds: SECONDS });
    rows.push({ case: `${name}, ${total} leads, ${LIST_CONNECTIONS} conn.`, store, ...result });
  }
  return rows;
}

/** The floor: what Fastify and pg do for one INSERT of the same body, with nothing of ours in between. */
async function startBare(url: string): Promise<Target> {
  const pool = new pg.Pool({ connectionString: url, max: POOL_SIZE });
  // The throwaway database is dropped with force at the end; an idle client's death is expected then.
  pool.on('error', () => {});
  await pool.query(`create table if not exists bare_leads (
    id text primary key, org_id text not null, name text, email text, company text, source text,
    tags text[] not null default '{}', custom jsonb not null default '{}', created_at timestamptz not null default now())`);
  const app = Fastify({ logger: false });
  app.post('/leads', async (request, reply) => {
    const b = request.body as { name?: string; email?: string; company?: string; source?: string; tags?: string[]; custom?: object };
    const { rows } = await pool.query(
      'insert into bare_leads (id, org_id, name, email, company, source, tags, custom) values ($1, $2, $3, $4, $5, $6, $7, $8) returning *',
      [randomUUID(), 'org_bench', b.name ?? null, b.email ?? null, b.company ?? null, b.source ?? null, b.tags ?? [], b.custom ?? {}],
    );
    reply.code(201);
    return rows[0];
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    job: { url: `${address}/leads`, kind: 'create-new', headers: {} },
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}

/**
 * Lead create and the floor, measured in alternation (create, floor, create, floor, …) so that a
 * drift in the machine's speed during the run (seen here: ±40 % between identical runs) touches
 * both alike; the median round of each is reported. Then the duplicates and the list, once each.
 */
async function benchPostgres(store: string, database: Database, dataDir: string, url: string): Promise<Row[]> {
  const service = await startService(database, dataDir);
  const bare = await startBare(url);
  try {
    const creates: LoadResult[] = [];
    const floors: LoadResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      creates.push(await measure(service.job));
      floors.push(await measure(bare.job));
    }
    const rows: Row[] = [
      { case: `lead create (new people), median of ${ROUNDS}`, store, ...median(creates) },
      { case: 'lead create (duplicates)', store, ...(await measure({ ...service.job, kind: 'create-duplicate' })) },
    ];
    rows.push({ case: `filtered list (${await service.total()} leads)`, store, ...(await measure({ url: service.list, kind: 'list', headers: service.headers })) });
    rows.push({ case: `bare Fastify + pg INSERT (floor), median of ${ROUNDS}`, store: 'PostgreSQL', ...median(floors) });
    console.log(`rounds, create / floor req/s: ${creates.map((c, i) => `${c.rps.toFixed(0)} / ${floors[i]!.rps.toFixed(0)}`).join(', ')}\n`);
    if (SCALE > 0) rows.push(...(await benchScale(store, service, url)));
    return rows;
  } finally {
    await bare.close();
    await service.close();
  }
}

async function benchEmbedded(store: string, database: Database, dataDir: string): Promise<Row[]> {
  const service = await startService(database, dataDir);
  try {
    const rows: Row[] = [
      { case: 'lead create (new people)', store, ...(await measure(service.job)) },
      { case: 'lead create (duplicates)', store, ...(await measure({ ...service.job, kind: 'create-duplicate' })) },
    ];
    rows.push({ case: `filtered list (${await service.total()} leads)`, store, ...(await measure({ url: service.list, kind: 'list', headers: service.headers })) });
    return rows;
  } finally {
    await service.close();
  }
}

function table(rows: Row[]): string {
  const head = ['case', 'store', 'req/s', 'p50 ms', 'p99 ms', '2xx', 'non-2xx', 'errors'];
  const body = rows.map((r) => [r.case, r.store, r.rps.toFixed(0), r.p50.toFixed(1), r.p99.toFixed(1), String(r.ok), String(r.non2xx), String(r.errors)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

export async function main(): Promise<void> {
  console.log(`leads benchmark: ${CONNECTIONS} connections, ${SECONDS} s per case (after a ${WARMUP} s warm-up), Node ${process.version}\n`);
  const rows: Row[] = [];

  if (!STORES.includes('postgres')) {
    // skipped on request
  } else if (await postgresReachable()) {
    await admin(`drop database if exists "${BENCH_DB}" with (force)`);
    await admin(`create database "${BENCH_DB}"`);
    const url = withDatabase(PG_URL, BENCH_DB);
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-pg-'));
    try {
      const database = openDatabase({ databaseUrl: url, dataDir, poolSize: POOL_SIZE });
      try {
        rows.push(...(await benchPostgres('PostgreSQL', database, dataDir, url)));
      } finally {
        await database.close();
      }
    } finally {
      await admin(`drop database if exists "${BENCH_DB}" with (force)`);
      rmSync(dataDir, { recursive: true, force: true });
    }
  } else {
    console.log(`PostgreSQL is not reachable at ${PG_URL.replace(/\/\/[^@]*@/, '//')}: running the embedded store only, without the floor.\n`);
  }

  if (STORES.includes('pglite')) {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-pglite-'));
    try {
      // The default store: PGlite on disk in DATA_DIR.
      const database = openDatabase({ dataDir });
      try {
        rows.push(...(await benchEmbedded('PGlite (embedded)', database, dataDir)));
      } finally {
        await database.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  console.log(table(rows));
  const create = rows.find((r) => r.store === 'PostgreSQL' && r.case.startsWith('lead create (new people)'));
  const bare = rows.find((r) => r.case.startsWith('bare'));
  if (create && bare) {
    const ratio = create.rps / bare.rps;
    console.log(`\nlead create / bare INSERT on PostgreSQL: ${ratio.toFixed(2)} of the floor's throughput (goal >= 0.50); create p99 ${create.p99.toFixed(1)} ms (goal < 50 ms)`);
  }
}
