/**
 * Executions end to end, as the side-by-side run against n8n measured them (bench/peers.md): a real
 * server process (`node src/main.ts`), a workflow trigger.webhook → data.set → utility.webhookOut
 * to a receiver in its own process, and autocannon in its own process POSTing to the webhook URL.
 * Per store and round (rounds alternate between the stores, so a drift of the machine's speed falls
 * on both):
 *
 *  - saturated: BENCH_CONNECTIONS (20) connections as fast as answered for BENCH_SECONDS: executions
 *    completed per second (receiver arrivals over the time to the last one), trigger → receiver
 *    p50/p99, the trigger's own answer time p99, how long the backlog took to drain after the load stopped, triggers refused (429), and
 *    the CPU per execution of the server process and of PostgreSQL (its processes on this machine);
 *  - overload: paced at BENCH_OVERLOAD (1.3) × the saturated rate: accepted and refused triggers,
 *    trigger → receiver p50/p99 of the accepted ones, drain time (BENCH_OVERLOAD_CONNECTIONS, 100,
 *    so that the rate is reached while answers wait).
 *
 *   npm run bench -- executions
 *
 * Environment: BENCH_PG_URL, BENCH_STORES (postgres,embedded), BENCH_ROUNDS (2), BENCH_CONNECTIONS
 * (20), BENCH_SECONDS (10), BENCH_OVERLOAD (1.3), BENCH_OVERLOAD_CONNECTIONS (100), BENCH_LOG_LEVEL (info: access logs written, to
 * /dev/null), BENCH_CPU_PROF (a directory: the server runs with --cpu-prof and is stopped with SIGTERM,
 * so that it writes a .cpuprofile there per store and round), and any of the service's variables (WORKFLOW_CONCURRENCY, DATABASE_POOL_SIZE, RUN_QUEUE_MAX_*, RUN_TRIGGERS_IN_FLIGHT) passed through.
 */
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startServer } from '../test/processes.ts';
import type { LoadJob, LoadResult } from './load.ts';
import { admin, PG_URL, percentile, postgresCpuMs, postgresReachable, printTable, processCpuMs, withDatabase } from './_stores.ts';

const STORES = (process.env.BENCH_STORES ?? 'postgres,embedded').split(',').map((s) => s.trim());
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const OVERLOAD = Number(process.env.BENCH_OVERLOAD ?? 1.3);
const LOAD_SCRIPT = fileURLToPath(new URL('./load.ts', import.meta.url));
const PASSED = [
  'WORKFLOW_CONCURRENCY',
  'DATABASE_POOL_SIZE',
  'RUN_QUEUE_MAX_PER_WORKFLOW',
  'RUN_QUEUE_MAX_PER_ORG',
  'RUN_QUEUE_MAX_AGE_MS',
  'RUN_TRIGGERS_IN_FLIGHT',
];
/** Enough connections for the paced phase to reach its rate while answers queue up. */
const OVERLOAD_CONNECTIONS = Number(process.env.BENCH_OVERLOAD_CONNECTIONS ?? 100);

function load(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [LOAD_SCRIPT, JSON.stringify(job)], { maxBuffer: 1 << 20 }, (error, stdout) => {
      if (error) reject(error);
      else resolve(JSON.parse(stdout) as LoadResult);
    });
  });
}

interface Service {
  child: ChildProcess;
  hookUrl: string;
  receiver: ChildProcess;
  stop(): Promise<void>;
}

async function startService(store: string): Promise<Service> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-executions-'));
  const database = 'svc_bench_executions';
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    APP_SECRET: 'bench-executions-secret-long-enough',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    RATE_LIMIT_MAX: '100000000',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  };
  for (const name of PASSED) if (process.env[name]) env[name] = process.env[name]!;
  const profiles = process.env.BENCH_CPU_PROF;
  if (profiles) env.NODE_OPTIONS = `--cpu-prof --cpu-prof-dir=${profiles}`;
  if (store === 'postgres') {
    await admin(`drop database if exists "${database}" with (force)`);
    await admin(`create database "${database}"`);
    env.DATABASE_URL = withDatabase(PG_URL, database);
  }
  const children = new Set<ChildProcess>();
  const port = await freePort();
  const child = await startServer(port, env, children, 120_000);
  child.stderr?.resume();
  const receiver = fork(fileURLToPath(new URL('./_exec-receiver.ts', import.meta.url)));
  const receiverPort = await new Promise<number>((resolve) => receiver.once('message', (m: { port: number }) => resolve(m.port)));

  const api = `http://127.0.0.1:${port}/api/v1`;
  const registered = (await (
    await fetch(`${api}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@executions.example', password: 'bench executions passphrase', organizationName: 'Bench' }),
    })
  ).json()) as { organization: { id: string }; tokens: { accessToken: string } };
  const res = await fetch(`${api}/orgs/${registered.organization.id}/workflows`, {
    method: 'POST',
    headers: { authorization: `Bearer ${registered.tokens.accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'Bench: webhook → set → POST',
      nodes: [
        { id: 'hook', type: 'trigger.webhook' },
        { id: 'set', type: 'data.set', params: { fields: { sentAt: '{{ sentAt }}', greeting: 'Hello {{ n }}' } } },
        { id: 'out', type: 'utility.webhookOut', params: { url: `http://127.0.0.1:${receiverPort}/out` } },
      ],
      edges: [
        { from: 'hook', to: 'set' },
        { from: 'set', to: 'out' },
      ],
    }),
  });
  if (res.status !== 201) throw new Error(`creating the workflow: ${res.status} ${await res.text()}`);
  const { webhookUrl } = (await res.json()) as { webhookUrl: string };
  return {
    child,
    receiver,
    hookUrl: `http://127.0.0.1:${port}${new URL(webhookUrl).pathname}`,
    async stop() {
      receiver.kill();
      if (profiles) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      } else child.kill('SIGKILL');
      if (store === 'postgres') await admin(`drop database if exists "${database}" with (force)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The receiver's samples so far (it forgets them). */
function collect(receiver: ChildProcess): Promise<[number, number][]> {
  return new Promise((resolve) => {
    receiver.once('message', (m: { samples: [number, number][] }) => resolve(m.samples));
    receiver.send({ report: true });
  });
}

/** Load for BENCH_SECONDS, then wait until the accepted triggers have all arrived (or stop arriving). */
async function phase(service: Service, rate?: number, connections = CONNECTIONS) {
  const cpu0 = processCpuMs(service.child.pid!);
  const pg0 = postgresCpuMs();
  const started = Date.now();
  const result = await load({ url: service.hookUrl, kind: 'hook', headers: {}, connections, seconds: SECONDS, ...(rate ? { rate } : {}) });
  const loadEnded = Date.now();
  const accepted = result.statusCodes['202'] ?? 0;
  const samples: [number, number][] = [];
  let quietSince = Date.now();
  while (samples.length < accepted && Date.now() - quietSince < 15_000) {
    await new Promise((r) => setTimeout(r, 100));
    const more = await collect(service.receiver);
    if (more.length) quietSince = Date.now();
    samples.push(...more);
  }
  const lastArrival = Math.max(...samples.map(([, at]) => at));
  const cpu = processCpuMs(service.child.pid!) - cpu0;
  const pg = postgresCpuMs();
  const latencies = samples
    .filter(([sent]) => sent > 0)
    .map(([sent, at]) => at - sent)
    .sort((a, b) => a - b);
  return {
    accepted,
    refused: result.statusCodes['429'] ?? 0,
    other: result.non2xx - (result.statusCodes['429'] ?? 0) + result.errors,
    executions: samples.length,
    perSecond: samples.length / ((lastArrival - started) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    /** How long the trigger took to answer (202 or 429), p99: the wait before admission shows here. */
    answerP99: result.p99,
    drainS: Math.max(0, (lastArrival - loadEnded) / 1000),
    cpuMs: cpu / Math.max(1, samples.length),
    pgMs: pg0 === null || pg === null ? null : (pg - pg0) / Math.max(1, samples.length),
  };
}

export async function main(): Promise<void> {
  const stores = (await postgresReachable()) ? STORES : STORES.filter((s) => s !== 'postgres');
  const rows: Record<string, string | number>[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const store of stores) {
      const service = await startService(store);
      try {
        // A short warm-up (JIT, pools, prepared statements), not counted.
        await load({ url: service.hookUrl, kind: 'hook', headers: {}, connections: CONNECTIONS, seconds: 2 });
        await new Promise((r) => setTimeout(r, 3000));
        await collect(service.receiver);
        const full = await phase(service);
        await new Promise((r) => setTimeout(r, 2000));
        await collect(service.receiver);
        const over = await phase(service, Math.round(full.perSecond * OVERLOAD), OVERLOAD_CONNECTIONS);
        const name = store === 'postgres' ? 'PostgreSQL' : 'embedded';
        rows.push({
          round,
          store: name,
          load: `${CONNECTIONS} conn., unpaced`,
          'exec/s': full.perSecond.toFixed(0),
          accepted: full.accepted,
          refused: full.refused,
          errors: full.other,
          'p50/p99 ms': `${full.p50} / ${full.p99}`,
          'answer p99 ms': full.answerP99,
          'drain s': full.drainS.toFixed(1),
          'CPU ms/exec ours': full.cpuMs.toFixed(2),
          'CPU ms/exec PostgreSQL': store === 'postgres' && full.pgMs !== null ? full.pgMs.toFixed(2) : '-',
        });
        rows.push({
          round,
          store: name,
          load: `paced ${Math.round(full.perSecond * OVERLOAD)}/s (${OVERLOAD}×, ${OVERLOAD_CONNECTIONS} conn.)`,
          'exec/s': over.perSecond.toFixed(0),
          accepted: over.accepted,
          refused: over.refused,
          errors: over.other,
          'p50/p99 ms': `${over.p50} / ${over.p99}`,
          'answer p99 ms': over.answerP99,
          'drain s': over.drainS.toFixed(1),
          'CPU ms/exec ours': over.cpuMs.toFixed(2),
          'CPU ms/exec PostgreSQL': store === 'postgres' && over.pgMs !== null ? over.pgMs.toFixed(2) : '-',
        });
      } finally {
        await service.stop();
      }
    }
  }
  console.log(
    `\nExecutions: POST webhook trigger → data.set → utility.webhookOut (receiver and load generator in their own processes), ${SECONDS} s per phase\n`,
  );
  printTable(rows);
  console.log(
    '\nGoals (issue 19): ≥ 300 executions/s on PostgreSQL and ≥ 100 embedded; at 1.3× capacity the accepted work completes with p99 under 1 s and the excess is refused with Retry-After.',
  );
}
