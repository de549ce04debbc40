/**
 * One organization's expressions against another's latency (issue 29): a real server process
 * (`node src/main.ts`), organizations A and B. Organization B asks, one request after another,
 * `/healthz`, its lead list (100 leads, a page of 20) and an expression preview that is evaluated in
 * a worker (`$sum([1..10])`), first with nothing else going on, then while organization A keeps
 * BENCH_ATTACKERS (64) preview calls of an endless recursion in flight (each runs to the 1 s
 * expression time limit; repeated as each answers). Prints B's p50/p99 per request in both phases,
 * the ratios (attack / quiet), and how many of A's calls were answered meanwhile.
 *
 *   npm run bench -- expressions
 *
 * Environment: BENCH_PG_URL, BENCH_STORES (postgres,embedded), BENCH_ROUNDS (1), BENCH_SECONDS (10,
 * per phase), BENCH_ATTACKERS (64), and the service's EXPRESSION_THREADS / EXPRESSION_THREADS_PER_ORG
 * passed through.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { freePort, startServer } from '../test/processes.ts';
import { admin, PG_URL, percentile, postgresReachable, printTable, withDatabase } from './_stores.ts';

const STORES = (process.env.BENCH_STORES ?? 'postgres,embedded').split(',').map((s) => s.trim());
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ATTACKERS = Number(process.env.BENCH_ATTACKERS ?? 64);
const PASSED = ['EXPRESSION_THREADS', 'EXPRESSION_THREADS_PER_ORG', 'EXPRESSION_TIMEOUT_MS'];
const RECURSION = '($f := function($n){ $f($n + 1) }; $f(0))';

interface Org {
  id: string;
  token: string;
  workflowId: string;
}

async function call(base: string, path: string, token: string | null, body?: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...(signal ? { signal } : {}),
  });
}

async function organization(base: string, label: string): Promise<Org> {
  const res = await call(base, '/api/v1/auth/register', null, {
    email: `bench-${label}@expressions.example`,
    password: 'bench expressions passphrase',
    organizationName: label,
  });
  if (res.status !== 201) throw new Error(`register ${label}: ${res.status} ${await res.text()}`);
  const { organization: org, tokens } = (await res.json()) as { organization: { id: string }; tokens: { accessToken: string } };
  const wf = await call(base, `/api/v1/orgs/${org.id}/workflows`, tokens.accessToken, {
    name: 'preview',
    nodes: [{ id: 'start', type: 'trigger.manual' }],
    edges: [],
  });
  if (wf.status !== 201) throw new Error(`workflow ${label}: ${wf.status} ${await wf.text()}`);
  return { id: org.id, token: tokens.accessToken, workflowId: ((await wf.json()) as { id: string }).id };
}

const preview = (base: string, org: Org, expression: string, signal?: AbortSignal) =>
  call(base, `/api/v1/orgs/${org.id}/workflows/${org.workflowId}/expressions/evaluate`, org.token, { expression }, signal);

const KINDS = ['/healthz', 'lead list', 'expression'] as const;
type Kind = (typeof KINDS)[number];

/** B's requests in turn for `seconds`: each one's latency, by kind. */
async function measureB(base: string, b: Org, seconds = SECONDS): Promise<Record<Kind, number[]>> {
  const out: Record<Kind, number[]> = { '/healthz': [], 'lead list': [], expression: [] };
  const ends = Date.now() + seconds * 1000;
  for (let i = 0; Date.now() < ends; i++) {
    const kind = KINDS[i % KINDS.length]!;
    const started = performance.now();
    const res =
      kind === '/healthz'
        ? await call(base, '/healthz', null)
        : kind === 'lead list'
          ? await call(base, `/api/v1/orgs/${b.id}/leads?pageSize=20`, b.token)
          : await preview(base, b, '$sum([1..10])');
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${kind}: ${res.status}`);
    out[kind].push(performance.now() - started);
  }
  for (const kind of KINDS) out[kind].sort((x, y) => x - y);
  return out;
}

/** A's calls, ATTACKERS at a time, each sent again as it answers, until stopped. */
function attack(base: string, a: Org): { stop(): { answered: number; limit: number } } {
  const controller = new AbortController();
  let answered = 0;
  let limit = 0;
  const loop = async () => {
    while (!controller.signal.aborted) {
      try {
        const res = await preview(base, a, RECURSION, controller.signal);
        const body = (await res.json()) as { code?: string };
        answered++;
        if (body.code === 'EXPRESSION_LIMIT') limit++;
      } catch {
        return;
      }
    }
  };
  for (let i = 0; i < ATTACKERS; i++) void loop();
  return {
    stop: () => {
      controller.abort();
      return { answered, limit };
    },
  };
}

async function startService(store: string): Promise<{ base: string; child: ChildProcess; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-expressions-'));
  const database = 'svc_bench_expressions';
  const env: Record<string, string> = { DATA_DIR: dataDir, APP_SECRET: 'bench-expressions-secret-long-enough', RATE_LIMIT_MAX: '100000000', LOG_LEVEL: 'warn' };
  for (const name of PASSED) if (process.env[name]) env[name] = process.env[name]!;
  if (store === 'postgres') {
    await admin(`drop database if exists "${database}" with (force)`);
    await admin(`create database "${database}"`);
    env.DATABASE_URL = withDatabase(PG_URL, database);
  }
  const port = await freePort();
  const child = await startServer(port, env, new Set(), 120_000);
  return {
    base: `http://127.0.0.1:${port}`,
    child,
    async stop() {
      // A's evaluations still queued would take a minute to drain: the process is killed instead.
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      if (store === 'postgres') await admin(`drop database if exists "${database}" with (force)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function main(): Promise<void> {
  const stores = (await postgresReachable()) ? STORES : STORES.filter((s) => s !== 'postgres');
  const rows: Record<string, string | number>[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const store of stores) {
      const service = await startService(store);
      try {
        const a = await organization(service.base, 'A');
        const b = await organization(service.base, 'B');
        for (let i = 0; i < 100; i++) {
          const res = await call(service.base, `/api/v1/orgs/${b.id}/leads`, b.token, { name: `Lead ${i}`, email: `lead${i}@b.example` });
          if (res.status !== 201) throw new Error(`lead: ${res.status} ${await res.text()}`);
        }
        // Warm-up (JIT, the lead list's plan, the workers), not counted.
        await measureB(service.base, b, 2);
        const quiet = await measureB(service.base, b);
        const flood = attack(service.base, a);
        // A's calls reach the server and fill A's share of the workers.
        await new Promise((r) => setTimeout(r, 1000));
        const during = await measureB(service.base, b);
        const { answered, limit } = flood.stop();
        const name = store === 'postgres' ? 'PostgreSQL' : 'embedded';
        for (const kind of KINDS) {
          const q50 = percentile(quiet[kind], 50);
          const q99 = percentile(quiet[kind], 99);
          const d50 = percentile(during[kind], 50);
          const d99 = percentile(during[kind], 99);
          rows.push({
            round,
            store: name,
            'B request': kind,
            'quiet n': quiet[kind].length,
            'quiet p50/p99 ms': `${q50.toFixed(1)} / ${q99.toFixed(1)}`,
            'attack n': during[kind].length,
            'attack p50/p99 ms': `${d50.toFixed(1)} / ${d99.toFixed(1)}`,
            'p50 ratio': (d50 / q50).toFixed(2),
            'p99 ratio': (d99 / q99).toFixed(2),
            "A's calls answered (EXPRESSION_LIMIT)": kind === '/healthz' ? `${answered} (${limit})` : '',
          });
        }
      } finally {
        await service.stop();
      }
    }
  }
  console.log(
    `\nExpressions: organization B's requests, quiet and while organization A keeps ${ATTACKERS} preview calls of an endless recursion in flight (${SECONDS} s per phase)\n`,
  );
  printTable(rows);
  // Before the expression workers (the same bench on the commit before them): one /healthz of B
  // answered in the 10 s of the attack on PostgreSQL, after 11.2 s; on the embedded store one lead
  // list, after 83 s.
  console.log("\nGoal (issue 29): B's latency does not depend on A's expressions (ratios near 1).");
}
