/**
 * Webhook delivery: 10 endpoints on one loopback receiver (its own process), 2,000 lead events
 * → 20,000 deliveries, three times per store: paced (events at a steady BENCH_RATE per second,
 * the latency a receiver sees in normal operation), as a burst (events as fast as 8 writers can
 * create leads, the writers and the deliverer sharing the process; latency then is mostly
 * queueing) and as a backlog (all 20,000 deliveries due before the deliverer starts, which then
 * drains them alone: the delivery path's own speed). Prints first-attempt latency (event commit,
 * or the drain's start, → receiver) p50/p99 and deliveries per second, on PostgreSQL and on the
 * embedded store.
 *
 *   npm run bench -- webhooks
 *
 * The floor: the same number of signed POSTs of a lead event's size to the same receiver, from a
 * bare loop through the same sender (sendSigned: the same HTTP client, connection reuse and
 * signature) with as many in flight as the deliverer can have (its batch in each lane), measured
 * just before each burst and backlog; their deliveries/s are printed as a ratio to it. Every
 * receiver, the floor's included, is a new process warmed up by 2,000 unrecorded POSTs first.
 *
 * Environment: BENCH_PG_URL, BENCH_EVENTS (2000), BENCH_ENDPOINTS (10), BENCH_RATE (150 events/s),
 * BENCH_STORES (`postgres,embedded`), BENCH_LOADS (`paced,burst,backlog`), BENCH_ROUNDS (3: bursts
 * and backlogs, each after its own floor; the median ratio is printed last).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { sendSigned } from '../src/modules/webhooks/signer.ts';
import { DELIVERY_BATCH } from '../src/modules/webhooks/deliverer.ts';
import { DELIVERY_LANES } from '../src/workers.ts';
import { cpuMeter, openStore, percentile, postgresReachable, printTable, processCpuMs, type BenchStore } from './_stores.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 10);
const CREATE_CONCURRENCY = 8;
const RATE = Number(process.env.BENCH_RATE ?? 150);
const STORES = (process.env.BENCH_STORES ?? 'postgres,embedded').split(',').map((s) => s.trim());
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LOADS = (process.env.BENCH_LOADS ?? 'paced,burst,backlog').split(',').map((s) => s.trim()) as Load[];

/** Deliveries in flight at once, at most: the deliverer's batch in each of its lanes. */
const IN_FLIGHT = DELIVERY_BATCH * DELIVERY_LANES;

const LEAD = {
  id: 'lead_01JBENCH',
  name: 'Bench 1',
  email: 'bench-1@example.com',
  phone: null,
  company: null,
  status: 'NEW',
  score: 0,
  tags: ['bench'],
  source: null,
  custom: {},
  createdAt: new Date().toISOString(),
  updatedAt: new Date().toISOString(),
};

/** A lead event's envelope as the deliverer sends it, for the floor and the warm-up. */
function envelope(i: number): string {
  return JSON.stringify({
    id: `evt_floor_${i}`,
    type: 'lead.created',
    organizationId: 'org_bench',
    at: new Date().toISOString(),
    data: { lead: LEAD, actor: { type: 'system', id: 'bench' } },
  });
}

/** `total` signed POSTs to `url` + i, `inFlight` at a time, through the deliverer's sender. */
async function post(url: string, total: number, inFlight: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) {
        const i = next++;
        await sendSigned({
          url: `${url}${i % ENDPOINTS}`,
          secret: 'whsec_bench_floor_secret',
          body: envelope(i),
          eventType: 'lead.created',
          deliveryId: `dlv_floor_${i}`,
          allowPrivate: true,
          previewBytes: 512,
        });
      }
    }),
  );
}

/**
 * A new receiver process, warmed up (its JIT, and this process's connections to it) by 2,000
 * unrecorded POSTs before anything is measured against it: what a receiver in normal operation is.
 */
function startReceiver(expected: number) {
  const receiver = fork(fileURLToPath(new URL('./_receiver.ts', import.meta.url)), [String(expected)]);
  const port = new Promise<number>((resolve) => receiver.once('message', (m: { port: number }) => resolve(m.port))).then(async (p) => {
    await post(`http://127.0.0.1:${p}/warm/`, 2000, IN_FLIGHT);
    return p;
  });
  const done = new Promise<{ samples: [number, number][]; first: number; last: number }>((resolve) =>
    receiver.on('message', (m: { samples?: [number, number][]; first: number; last: number }) => m.samples && resolve(m as never)),
  );
  return { receiver, port, done };
}

/** CPU µs per delivery of this process (the sender), PostgreSQL and the receiver over a phase. */
function cpuPerDelivery(receiverPid: number) {
  const meter = cpuMeter();
  const receiver0 = processCpuMs(receiverPid);
  return (deliveries: number) => {
    const { ownMsPer, postgresMsPer } = meter.stop(deliveries);
    const receiverMsPer = (processCpuMs(receiverPid) - receiver0) / deliveries;
    const us = (ms: number | null) => (ms === null ? '–' : Math.round(ms * 1000));
    return { ours: us(ownMsPer), postgres: us(postgresMsPer), receiver: us(receiverMsPer) };
  };
}

/** Signed POSTs/s from a bare loop: what the wire, the receiver and the HTTP client allow. */
async function floor(): Promise<{ rate: number; cpu: ReturnType<ReturnType<typeof cpuPerDelivery>> }> {
  const total = EVENTS * ENDPOINTS;
  const { receiver, port, done } = startReceiver(total);
  const url = `http://127.0.0.1:${await port}/hook/floor/`;
  const cpu = cpuPerDelivery(receiver.pid!);
  const started = Date.now();
  await post(url, total, IN_FLIGHT);
  const result = await done;
  const used = cpu(total);
  receiver.kill();
  return { rate: total / ((result.last - started) / 1000), cpu: used };
}

type Load = 'paced' | 'burst' | 'backlog';

async function run(store: BenchStore, load: Load) {
  const paced = load === 'paced';
  const config = loadConfig({ DATA_DIR: store.dataDir, APP_SECRET: 'bench-secret-long-enough', WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'silent' });
  const app = await buildApp({ config, database: store.database, logger: false });
  await app.ready();
  const { auth, webhooks, leads, orgs } = app.services;
  const { organization } = await auth.createUserWithOrg({ email: `bench-${Date.now()}@example.com`, password: 'bench-password' });
  const projectId = await orgs.defaultProjectId(organization.id);

  const { receiver, port: receiverPort, done } = startReceiver(EVENTS * ENDPOINTS);
  const port = await receiverPort;
  for (let i = 0; i < ENDPOINTS; i++)
    await webhooks.create(
      { orgId: organization.id, projectId: null, actor: { type: 'system', id: 'bench' } },
      { url: `http://127.0.0.1:${port}/hook/${i}`, events: ['*'] },
    );

  const scope = { orgId: organization.id, projectId, actor: { type: 'system' as const, id: 'bench' } };
  // The backlog: the deliverer waits until every delivery is due, then drains them alone.
  const lanes = Object.entries(app.workers!.loops)
    .filter(([name]) => name.startsWith('webhooks'))
    .map(([, loop]) => loop);
  if (load === 'backlog') await Promise.all(lanes.map((lane) => lane.stop()));
  let cpu = cpuPerDelivery(receiver.pid!);
  let started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CREATE_CONCURRENCY }, async () => {
      while (next < EVENTS) {
        const i = next++;
        if (paced) {
          const due = started + (i * 1000) / RATE;
          if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        }
        await leads.create(scope, { name: `Bench ${i}`, email: `bench-${i}@example.com`, tags: ['bench'] });
      }
    }),
  );
  const createdIn = Date.now() - started;
  if (load === 'backlog') {
    const pending = async () =>
      Number(
        (
          (await app.services.db.execute(sql`select count(*)::int as n from webhook_deliveries where status = 'pending'`)) as unknown as {
            rows: { n: number }[];
          }
        ).rows[0]!.n,
      );
    while ((await pending()) < EVENTS * ENDPOINTS) await new Promise((r) => setTimeout(r, 50));
    cpu = cpuPerDelivery(receiver.pid!);
    started = Date.now();
    for (const lane of lanes) lane.start();
  }
  const result = await done;
  const used = cpu(result.samples.length);
  receiver.kill();
  await app.close();
  // Latency from the event's commit; for the backlog, from when the deliverer started.
  const latencies = result.samples.map(([at, arrived]) => arrived - Math.max(at, load === 'backlog' ? started : at)).sort((a, b) => a - b);
  const seconds = (result.last - started) / 1000;
  return {
    store: store.name,
    load: paced ? `paced ${RATE}/s` : load,
    events: EVENTS,
    deliveries: result.samples.length,
    'events/s written': Math.round(EVENTS / (createdIn / 1000)),
    'deliveries/s': Math.round(result.samples.length / seconds),
    'latency p50 ms': percentile(latencies, 50),
    'latency p99 ms': percentile(latencies, 99),
    'latency max ms': latencies[latencies.length - 1]!,
    'CPU µs/delivery ours/PG/receiver': `${used.ours}/${used.postgres}/${used.receiver}`,
  };
}

export async function main(): Promise<void> {
  // A first floor warms the sender and the receiver up; it is not counted.
  await floor();
  const rows = [];
  const reachable: BenchStore['name'][] = (await postgresReachable()) ? ['postgres', 'embedded'] : ['embedded'];
  const stores = reachable.filter((s) => STORES.includes(s));
  const medians: string[] = [];
  for (const name of stores) {
    for (const load of LOADS) {
      const ratios: number[] = [];
      for (let round = 1; round <= (load === 'paced' ? 1 : ROUNDS); round++) {
        // Each burst and backlog is compared with a floor measured just before it (the machine's
        // speed drifts, and the floor alone swings by a quarter between runs here).
        const measured = load === 'paced' ? null : await floor();
        const floorRate = measured?.rate ?? null;
        const store = await openStore(name, 'webhooks');
        try {
          const row = await run(store, load);
          if (floorRate !== null) ratios.push(row['deliveries/s'] / floorRate);
          rows.push({
            ...row,
            'floor/s': floorRate === null ? '–' : Math.round(floorRate),
            'floor CPU µs ours/receiver': measured ? `${measured.cpu.ours}/${measured.cpu.receiver}` : '–',
            'ratio to floor': floorRate === null ? '–' : (row['deliveries/s'] / floorRate).toFixed(2),
          });
        } finally {
          await store.dispose();
        }
      }
      if (ratios.length > 0)
        medians.push(
          `${name} ${load}: ${[...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)]!.toFixed(2)} (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
        );
    }
  }
  console.log(`\nWebhook delivery: ${ENDPOINTS} endpoints, ${EVENTS} lead events (first attempts, receiver answers 204)\n`);
  printTable(rows);
  console.log(`\nFloor: signed POSTs/s from a bare loop (${IN_FLIGHT} in flight, the same sender and receiver), measured before each burst and backlog.`);
  console.log(`Median ratio to the floor over ${ROUNDS} rounds: ${medians.join('; ')}`);
  console.log(
    'Goals (issue 19): burst deliveries/s at least 0.5 of the floor and paced p99 under 250 ms on PostgreSQL; the embedded store keeps up with 150 events/s × 10 endpoints.',
  );
}
