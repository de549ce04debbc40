/**
 * Webhook delivery: 10 endpoints on one loopback receiver (its own process), 2,000 lead events
 * → 20,000 deliveries, twice per store: paced (events at a steady BENCH_RATE per second, the
 * latency a receiver sees in normal operation) and as a burst (events as fast as 8 writers can
 * create leads, the throughput ceiling; latency then is mostly queueing). Prints first-attempt
 * latency (event commit → receiver) p50/p99 and deliveries per second, on PostgreSQL and on the
 * embedded store.
 *
 *   npm run bench -- webhooks
 *
 * Environment: BENCH_PG_URL, BENCH_EVENTS (2000), BENCH_ENDPOINTS (10), BENCH_RATE (150 events/s).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openStore, percentile, postgresReachable, printTable, type BenchStore } from './_stores.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 10);
const CREATE_CONCURRENCY = 8;
const RATE = Number(process.env.BENCH_RATE ?? 150);

async function run(store: BenchStore, paced: boolean) {
  const config = loadConfig({ DATA_DIR: store.dataDir, APP_SECRET: 'bench-secret-long-enough', WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'silent' });
  const app = await buildApp({ config, database: store.database, logger: false });
  await app.ready();
  const { auth, webhooks, leads, orgs } = app.services;
  const { organization } = await auth.createUserWithOrg({ email: `bench-${Date.now()}@example.com`, password: 'bench-password' });
  const projectId = await orgs.defaultProjectId(organization.id);

  const receiver = fork(fileURLToPath(new URL('./_receiver.ts', import.meta.url)), [String(EVENTS * ENDPOINTS)]);
  const port = await new Promise<number>((resolve) => receiver.once('message', (m: { port: number }) => resolve(m.port)));
  const done = new Promise<{ samples: [number, number][]; first: number; last: number }>((resolve) => receiver.on('message', (m: { samples?: [number, number][]; first: number; last: number }) => m.samples && resolve(m as never)));
  for (let i = 0; i < ENDPOINTS; i++) await webhooks.create({ orgId: organization.id, projectId: null, actor: { type: 'system', id: 'bench' } }, { url: `http://127.0.0.1:${port}/hook/${i}`, events: ['*'] });

  const scope = { orgId: organization.id, projectId, actor: { type: 'system' as const, id: 'bench' } };
  const started = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, async () => {
    while (next < EVENTS) {
      const i = next++;
      if (paced) {
        const due = started + (i * 1000) / RATE;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      }
      await leads.create(scope, { name: `Bench ${i}`, email: `bench-${i}@example.com`, tags: ['bench'] });
    }
  }));
  const createdIn = Date.now() - started;
  const result = await done;
  receiver.kill();
  await app.close();
  const latencies = result.samples.map(([at, arrived]) => arrived - at).sort((a, b) => a - b);
  const seconds = (result.last - started) / 1000;
  return {
    store: store.name,
    load: paced ? `paced ${RATE}/s` : 'burst',
    events: EVENTS,
    deliveries: result.samples.length,
    'events/s written': Math.round(EVENTS / (createdIn / 1000)),
    'deliveries/s': Math.round(result.samples.length / seconds),
    'latency p50 ms': percentile(latencies, 50),
    'latency p99 ms': percentile(latencies, 99),
    'latency max ms': latencies[latencies.length - 1]!,
  };
}

export async function main(): Promise<void> {
  const rows = [];
  const stores: BenchStore['name'][] = (await postgresReachable()) ? ['postgres', 'embedded'] : ['embedded'];
  for (const name of stores) {
    for (const paced of [true, false]) {
      const store = await openStore(name, 'webhooks');
      try {
        rows.push(await run(store, paced));
      } finally {
        await store.dispose();
      }
    }
  }
  console.log(`\nWebhook delivery: ${ENDPOINTS} endpoints, ${EVENTS} lead events (first attempts, receiver answers 204)\n`);
  printTable(rows);
  console.log('\nGoal: p99 under 500 ms (paced), at least 300 deliveries/s on PostgreSQL.');
}
