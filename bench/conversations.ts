/**
 * Conversations: inbound messages/s through the api channel's route and through the WhatsApp
 * webhook (signed as Meta signs it) — autocannon from a separate process, each message with its own
 * provider id — on PostgreSQL and on the embedded PGlite, in two shapes — people who
 * already have a thread (200 contacts) and a new person every message (a new lead and conversation
 * each time) — and the inbound → organization stream latency p50/p99: an SSE client on the org
 * stream, in its own process, times each POST it sends until the `conversation.message` frame
 * carrying that message arrives.
 *
 *   npm run bench -- conversations
 *
 * Environment: BENCH_PG_URL (a throwaway database `svc_bench_conversations` is created there and
 * dropped after), BENCH_STORES (`postgres,pglite`), BENCH_CONNECTIONS (20), BENCH_SECONDS (6 per
 * case), BENCH_WARMUP_SECONDS (2), BENCH_LATENCY_MESSAGES (300), BENCH_LATENCY_GAP_MS (10),
 * BENCH_BOT_TURNS (50: messages, one new contact each, timed until the bot's answer is delivered).
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { LoadResult } from './load.ts';
import type { InboundJob } from './_load-inbound.ts';
import { openStore, percentile, postgresReachable, printTable, type BenchStore } from './_stores.ts';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const STORES = (process.env.BENCH_STORES ?? 'postgres,pglite').split(',').map((s) => s.trim());
const LATENCY_MESSAGES = Number(process.env.BENCH_LATENCY_MESSAGES ?? 300);
const LATENCY_GAP_MS = Number(process.env.BENCH_LATENCY_GAP_MS ?? 10);
const BOT_TURNS = Number(process.env.BENCH_BOT_TURNS ?? 50);

/**
 * Inbound → the bot's answer delivered: an api inbox whose bot answers from its FAQ with the offline
 * model delivers its replies to a receiver in this process, which notes when each arrives; one new
 * contact at a time, so each time is one message's whole way (store, dispatch, the turn, the
 * outbound queue, the signed delivery).
 */
async function botLatencies(
  post: (inboxUrl: string, body: unknown) => Promise<number>,
  createInbox: (url: string) => Promise<string>,
  turns: number,
): Promise<number[]> {
  const arrived = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const address = (JSON.parse(body) as { payload?: { conversation?: { contact?: { address?: string } } } }).payload?.conversation?.contact?.address;
      if (address) {
        arrived.set(address, performance.now());
        waiting.get(address)?.();
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const inboxUrl = await createInbox(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/bot`);
    const times: number[] = [];
    for (let i = 0; i < turns; i++) {
      const address = `visitor-${Date.now()}-${i}@bench.example`;
      const answered = new Promise<void>((resolve) => waiting.set(address, resolve));
      const sent = performance.now();
      const status = await post(inboxUrl, { contact: { address }, text: 'When do you open tomorrow?', externalId: `bot-${address}` });
      if (status >= 300) throw new Error(`inbound answered ${status}`);
      await Promise.race([answered, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      const at = arrived.get(address);
      if (at !== undefined) times.push(at - sent);
    }
    return times;
  } finally {
    receiver.close();
  }
}

const script = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));

function child<T>(file: string, args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script(file), ...args], { maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${file} failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as T);
    });
  });
}

async function inbound(job: Omit<InboundJob, 'connections' | 'seconds'>): Promise<LoadResult> {
  await child<LoadResult>('_load-inbound.ts', [JSON.stringify({ ...job, connections: CONNECTIONS, seconds: WARMUP })]);
  return child<LoadResult>('_load-inbound.ts', [JSON.stringify({ ...job, connections: CONNECTIONS, seconds: SECONDS })]);
}

async function run(store: BenchStore): Promise<Record<string, string | number>[]> {
  const config = loadConfig({
    NODE_ENV: 'development',
    DATA_DIR: store.dataDir,
    APP_SECRET: 'bench-secret-that-is-long-enough',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000000',
    AUTH_RATE_LIMIT_MAX: '100000000',
    // METRICS_PORT=0 measures the cost of the metrics hook (docs/operations.md).
    ...(process.env.METRICS_PORT ? { METRICS_PORT: process.env.METRICS_PORT } : {}),
  });
  const app = await buildApp({ config, database: store.database, logger: false });
  try {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const { auth, apiKeys, conversations } = app.services;
    const email = `conversations-${Date.now()}@bench.example`;
    const { organization } = await auth.createUserWithOrg({ email, password: 'bench password', organizationName: 'Bench' });
    const token = (await auth.login(email, 'bench password')).tokens.accessToken;
    const { key } = await apiKeys.create(organization.id, { name: 'bench', scopes: ['conversations:read', 'conversations:write'] });
    const scope = { orgId: organization.id, projectId: null, actor: { type: 'system' as const, id: 'bench' } };
    // Outbound goes nowhere in this benchmark: inbound only (the bot is off).
    const inbox = await conversations.createInbox(scope, {
      name: 'bench',
      channel: 'api',
      config: { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/nowhere` },
    });
    const url = `${address}/api/v1/orgs/${organization.id}/inboxes/${inbox.id}/messages`;
    const name = store.name === 'postgres' ? 'PostgreSQL' : 'PGlite (embedded)';
    const rows: Record<string, string | number>[] = [];
    const row = (label: string, r: LoadResult) => ({
      store: name,
      case: label,
      'msgs/s': Math.round(r.rps),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      '2xx': r.ok,
      'non-2xx': r.non2xx,
      errors: r.errors,
    });
    rows.push(row('api, 200 known contacts', await inbound({ url, apiKey: key, contacts: 200 })));
    rows.push(row('api, a new contact each', await inbound({ url, apiKey: key, contacts: 0 })));
    // The WhatsApp route: Meta's signed webhook (signature check, parse, store, events).
    const wa = { appSecret: 'bench-app-secret', phoneNumberId: '100200300' };
    const waInbox = await conversations.createInbox(scope, {
      name: 'bench-wa',
      channel: 'whatsapp',
      config: { phoneNumberId: wa.phoneNumberId },
      credentials: { accessToken: 'bench-token', appSecret: wa.appSecret },
    });
    const waUrl = `${address}/api/v1/hooks/whatsapp/${waInbox.id}`;
    rows.push(row('WhatsApp webhook, 200 known contacts', await inbound({ url: waUrl, whatsapp: wa, contacts: 200 })));
    rows.push(row('WhatsApp webhook, a new contact each', await inbound({ url: waUrl, whatsapp: wa, contacts: 0 })));

    const botTimes = await botLatencies(
      async (inboxUrl, body) =>
        (await fetch(inboxUrl, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) })).status,
      async (url) => {
        const bot = await conversations.createInbox(scope, {
          name: 'bench-bot',
          channel: 'api',
          config: { url, faq: [{ question: 'When do you open tomorrow?', answer: 'From 9 to 17.' }] },
          bot: { enabled: true, modelId: 'offline' },
        });
        return `${address}/api/v1/orgs/${organization.id}/inboxes/${bot.id}/messages`;
      },
      BOT_TURNS,
    );
    botTimes.sort((a, b) => a - b);
    rows.push({
      store: name,
      case: `inbound → bot answer delivered (${botTimes.length}/${BOT_TURNS}, offline model)`,
      'msgs/s': '',
      'p50 ms': botTimes.length ? percentile(botTimes, 50).toFixed(1) : '',
      'p99 ms': botTimes.length ? percentile(botTimes, 99).toFixed(1) : '',
      '2xx': '',
      'non-2xx': '',
      errors: BOT_TURNS - botTimes.length,
    });

    const streamUrl = `${address}/api/v1/orgs/${organization.id}/events`;
    const { latencies, missing } = await child<{ latencies: number[]; missing: number }>('_inbound-latency.ts', [
      streamUrl,
      token,
      url,
      key,
      String(LATENCY_MESSAGES),
      String(LATENCY_GAP_MS),
    ]);
    latencies.sort((a, b) => a - b);
    rows.push({
      store: name,
      case: `inbound → org stream (${latencies.length}/${LATENCY_MESSAGES} seen${missing ? `, ${missing} missing` : ''})`,
      'msgs/s': '',
      'p50 ms': percentile(latencies, 50).toFixed(1),
      'p99 ms': percentile(latencies, 99).toFixed(1),
      '2xx': '',
      'non-2xx': '',
      errors: missing,
    });
    return rows;
  } finally {
    await app.close();
  }
}

export async function main(): Promise<void> {
  console.log(`conversations benchmark: ${CONNECTIONS} connections, ${SECONDS} s per case (after a ${WARMUP} s warm-up), Node ${process.version}\n`);
  const rows: Record<string, string | number>[] = [];
  const stores: BenchStore['name'][] = [];
  if (STORES.includes('postgres')) {
    if (await postgresReachable()) stores.push('postgres');
    else console.log('PostgreSQL is not reachable: running the embedded store only.\n');
  }
  if (STORES.includes('pglite')) stores.push('embedded');
  for (const name of stores) {
    const store = await openStore(name, 'conversations');
    try {
      rows.push(...(await run(store)));
    } finally {
      await store.dispose();
    }
  }
  printTable(rows);
  console.log('\nGoals: at least 1,000 inbound messages/s on PostgreSQL; inbound → org stream p99 under 100 ms.');
}
