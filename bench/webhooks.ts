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
 * The floor: the same number of signed POSTs of a lead event's size to the same receiver, from a
 * bare loop through the same sender (sendSigned: the same HTTP client, connection reuse and
 * signature) with as many in flight as the deliverer's batch; each store's deliveries/s is printed
 * as a ratio to it.
 *
 * Environment: BENCH_PG_URL, BENCH_EVENTS (2000), BENCH_ENDPOINTS (10), BENCH_RATE (150 events/s).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { sendSigned } from '../src/modules/webhooks/signer.ts';
import { openStore, percentile, postgresReachable, printTable, type BenchStore } from './_stores.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 10);
const CREATE_CONCURRENCY = 8;
const RATE = Number(process.env.BENCH_RATE ?? 150);

/** Deliveries in flight at once: the deliverer's batch (src/modules/webhooks/deliverer.ts). */
const IN_FLIGHT = 200;

function startReceiver(expected: number) {
  const receiver = fork(fileURLToPath(new URL('./_receiver.ts', import.meta.url)), [String(expected)]);
  const port = new Promise<number>((resolve) => receiver.once('message', (m: { port: number }) => resolve(m.port)));
  const done = new Promise<{ samples: [number, number][]; first: number; last: number }>((resolve) => receiver.on('message', (m: { samples?: [number, number][]; first: number; last: number }) => m.samples && resolve(m as never)));
  return { receiver, port, done };
}

/** Signed POSTs/s from a bare loop: what the wire, the receiver and the HTTP client allow. */
async function floor(): Promise<number> {
  const total = EVENTS * ENDPOINTS;
  const { receiver, port, done } = startReceiver(total);
  const url = `http://127.0.0.1:${await port}/hook/floor`;
  const lead = { id: 'lead_01JBENCH', name: 'Bench 1', email: 'bench-1@example.com', phone: null, company: null, status: 'NEW', score: 0, tags: ['bench'], source: null, custom: {}, createdAt: new Date().toISOString(), updatedAt: new Date().toISOString() };
  const started = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < total) {
      const i = next++;
      const body = JSON.stringify({ id: `evt_floor_${i}`, type: 'lead.created', organizationId: 'org_bench', at: new Date().toISOString(), data: { lead, actor: { type: 'system', id: 'bench' } } });
      await sendSigned({ url, secret: 'whsec_bench_floor_secret', body, eventType: 'lead.created', deliveryId: `dlv_floor_${i}`, allowPrivate: true, previewBytes: 512 });
    }
  }));
  const result = await done;
  receiver.kill();
  return total / ((result.last - started) / 1000);
}

async function run(store: BenchStore, paced: boolean) {
  const config = loadConfig({ DATA_DIR: store.dataDir, APP_SECRET: 'bench-secret-long-enough', WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'silent' });
  const app = await buildApp({ config, database: store.database, logger: false });
  await app.ready();
  const { auth, webhooks, leads, orgs } = app.services;
  const { organization } = await auth.createUserWithOrg({ email: `bench-${Date.now()}@example.com`, password: 'bench-password' });
  const projectId = await orgs.defaultProjectId(organization.id);

  const { receiver, port: receiverPort, done } = startReceiver(EVENTS * ENDPOINTS);
  const port = await receiverPort;
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
  const floorRate = await floor();
  const rows = [];
  const stores: BenchStore['name'][] = (await postgresReachable()) ? ['postgres', 'embedded'] : ['embedded'];
  for (const name of stores) {
    for (const paced of [true, false]) {
      const store = await openStore(name, 'webhooks');
      try {
        const row = await run(store, paced);
        rows.push({ ...row, 'ratio to floor': (row['deliveries/s'] / floorRate).toFixed(2) });
      } finally {
        await store.dispose();
      }
    }
  }
  console.log(`\nWebhook delivery: ${ENDPOINTS} endpoints, ${EVENTS} lead events (first attempts, receiver answers 204)\n`);
  printTable(rows);
  console.log(`\nFloor: ${Math.round(floorRate)} signed POSTs/s from a bare loop (${IN_FLIGHT} in flight, the same sender and receiver).`);
  console.log('Goals (issue 19): burst deliveries/s at least 0.5 of the floor and paced p99 under 250 ms on PostgreSQL; the embedded store keeps up with 150 events/s × 10 endpoints.');
}
