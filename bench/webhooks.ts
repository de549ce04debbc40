/**
 * Webhook delivery: 10 endpoints on one loopback receiver (its own process), 2,000 lead events
 * → 20,000 deliveries. Prints the first-attempt latency (event commit → receiver) p50/p99 and
 * deliveries per second, on PostgreSQL and on the embedded store.
 *
 *   npm run bench -- webhooks
 *
 * Environment: BENCH_PG_URL, BENCH_EVENTS (2000), BENCH_ENDPOINTS (10).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openStore, percentile, postgresReachable, printTable, type BenchStore } from './_stores.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 10);
const CREATE_CONCURRENCY = 8;

async function run(store: BenchStore) {
  const config = loadConfig({ DATA_DIR: store.dataDir, APP_SECRET: 'bench-secret-long-enough', WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'silent' });
  const app = await buildApp({ config, database: store.database, logger: false });
  await app.ready();
  const { auth, webhooks, leads, orgs } = app.services;
  const { organization } = await auth.createUserWithOrg({ email: `bench-${Date.now()}@example.com`, password: 'bench-password' });
  const projectId = await orgs.defaultProjectId(organization.id);

  const receiver = fork(fileURLToPath(new URL('./_receiver.ts', import.meta.url)), [String(EVENTS * ENDPOINTS)]);
  const port = await new Promise<number>((resolve) => receiver.once('message', (m: { port: number }) => resolve(m.port)));
  const done = new Promise<{ samples: [number, number][]; first: number; last: number }>((resolve) => receiver.on('message', (m: { samples?: [number, number][]; first: number; last: number }) => m.samples && resolve(m as never)));
  for (let i = 0; i < ENDPOINTS; i++) await webhooks.create(organization.id, { url: `http://127.0.0.1:${port}/hook/${i}`, events: ['*'] });

  const scope = { orgId: organization.id, projectId, actor: { type: 'system' as const, id: 'bench' } };
  const started = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: CREATE_CONCURRENCY }, async () => {
    while (next < EVENTS) {
      const i = next++;
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
    const store = await openStore(name, 'webhooks');
    try {
      rows.push(await run(store));
    } finally {
      await store.dispose();
    }
  }
  console.log(`\nWebhook delivery: ${ENDPOINTS} endpoints, ${EVENTS} lead events (first attempts, receiver answers 204)\n`);
  printTable(rows);
  console.log('\nGoal: p99 under 500 ms, at least 300 deliveries/s on PostgreSQL.');
}
