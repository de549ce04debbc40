/**
 * Organization stream fan-out: 2,000 concurrent SSE connections to one app process (the clients
 * run in a separate process), then lead events; prints server memory per connection and the
 * fan-out latency (event commit → frame at the client) p50/p99, on the embedded store and on
 * PostgreSQL.
 *
 *   npm run bench -- org-stream
 *
 * Environment: BENCH_PG_URL, BENCH_CONNECTIONS (2000), BENCH_EVENTS (20).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openStore, percentile, postgresReachable, printTable, type BenchStore } from './_stores.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 2000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 100));
  }
};

async function run(store: BenchStore) {
  const config = loadConfig({ DATA_DIR: store.dataDir, APP_SECRET: 'bench-secret-long-enough', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000' });
  const app = await buildApp({ config, database: store.database, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { auth, leads, orgs } = app.services;
  const email = `stream-${Date.now()}@example.com`;
  const { organization } = await auth.createUserWithOrg({ email, password: 'bench-password' });
  const token = (await auth.login(email, 'bench-password')).tokens.accessToken;
  const projectId = await orgs.defaultProjectId(organization.id);
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/v1/orgs/${organization.id}/events`;

  await settle();
  const before = process.memoryUsage();
  const clients = fork(fileURLToPath(new URL('./_stream-clients.ts', import.meta.url)), [url, token, String(CONNECTIONS)]);
  await new Promise<void>((resolve, reject) =>
    clients.on('message', (m: { connected?: number; error?: string }) => (m.error ? reject(new Error(m.error)) : m.connected && resolve())),
  );
  await settle();
  const after = process.memoryUsage();

  const scope = { orgId: organization.id, projectId, actor: { type: 'system' as const, id: 'bench' } };
  for (let i = 0; i < EVENTS; i++) {
    await leads.create(scope, { name: `Streamed ${i}` });
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 1000));
  const latencies = await new Promise<number[]>((resolve) => {
    clients.on('message', (m: { latencies?: number[] }) => m.latencies && resolve(m.latencies));
    clients.send('report');
  });
  clients.kill();
  await app.close();
  latencies.sort((a, b) => a - b);
  return {
    store: store.name,
    connections: CONNECTIONS,
    'frames received': `${latencies.length}/${CONNECTIONS * EVENTS}`,
    'heap KB/conn': ((after.heapUsed - before.heapUsed) / 1024 / CONNECTIONS).toFixed(1),
    'rss KB/conn': ((after.rss - before.rss) / 1024 / CONNECTIONS).toFixed(1),
    'fan-out p50 ms': percentile(latencies, 50),
    'fan-out p99 ms': percentile(latencies, 99),
  };
}

export async function main(): Promise<void> {
  const rows = [];
  const stores: BenchStore['name'][] = (await postgresReachable()) ? ['embedded', 'postgres'] : ['embedded'];
  for (const name of stores) {
    const store = await openStore(name, 'stream');
    try {
      rows.push(await run(store));
    } finally {
      await store.dispose();
    }
  }
  console.log(`\nOrganization stream: ${CONNECTIONS} connections on one process, ${EVENTS} lead events\n`);
  printTable(rows);
  console.log('\nGoal: fan-out p99 under 250 ms, under 50 KB per connection.');
}
