/**
 * Campaigns: one e-mail campaign of BENCH_RECIPIENTS (100,000) leads, one step, no rate limit, sent
 * to a loopback SMTP server in its own process — messages per second (overall, and per tenth of the
 * audience, to see whether it holds), and the server process's memory as the campaign goes on (it
 * must not grow with the audience). On PostgreSQL (BENCH_STORES=postgres,pglite adds the embedded
 * store, with BENCH_EMBEDDED_RECIPIENTS, 5,000).
 *
 *   npm run bench -- campaigns
 *
 * Environment: BENCH_PG_URL (a throwaway database `svc_bench_campaigns`), BENCH_RECIPIENTS,
 * BENCH_STORES (`postgres`), BENCH_EMBEDDED_RECIPIENTS, BENCH_PROFILE (a file: the server's CPU
 * profile while the campaign sends, for Chrome DevTools).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openStore, PG_URL, postgresReachable, printTable, withDatabase, type BenchStore } from './_stores.ts';

const RECIPIENTS = Number(process.env.BENCH_RECIPIENTS ?? 100_000);
const EMBEDDED_RECIPIENTS = Number(process.env.BENCH_EMBEDDED_RECIPIENTS ?? 5_000);
const STORES = (process.env.BENCH_STORES ?? 'postgres').split(',').map((s) => s.trim());
const MB = 1024 * 1024;

/** The SMTP sink process and a way to ask it how many mails it has. */
async function sink(): Promise<{ port: number; count(): Promise<{ received: number; distinct: number }>; stop(): Promise<void> }> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [fileURLToPath(new URL('./_smtp-sink.ts', import.meta.url))], { stdio: 'pipe' });
  const lines = createInterface({ input: child.stdout });
  const next = () => new Promise<Record<string, number>>((resolve) => lines.once('line', (line) => resolve(JSON.parse(line) as Record<string, number>)));
  const { port } = await next();
  return {
    port: port!,
    count: async () => {
      const answer = next();
      child.stdin.write('count\n');
      return answer as Promise<{ received: number; distinct: number }>;
    },
    stop: async () => {
      child.stdin.end();
      await once(child, 'exit');
    },
  };
}

/** `count` leads with unique addresses and the tag `bench`, in one statement per 50,000. */
async function seed(store: BenchStore, orgId: string, count: number): Promise<void> {
  const insert = `
    insert into leads (id, org_id, project_id, name, email, email_key, source, status, score, tags, custom, created_at, updated_at)
    select 'lead_cmp' || lpad(i::text, 8, '0'), $1, p.id, 'Person ' || i, 'person' || i || '@bench.example', 'person' || i || '@bench.example', 'bench', 'NEW', 0,
      array['bench'], '{}'::jsonb, now(), now()
    from generate_series($2::int, $3::int) as i, (select id from projects where org_id = $1 order by created_at limit 1) as p`;
  for (let from = 1; from <= count; from += 50_000) {
    const to = Math.min(count, from + 49_999);
    if (store.name === 'postgres') {
      const client = new pg.Client({ connectionString: withDatabase(PG_URL, 'svc_bench_campaigns') });
      await client.connect();
      try {
        await client.query(insert, [orgId, from, to]);
      } finally {
        await client.end();
      }
    } else {
      await store.database.prepared('bench_seed', insert, [orgId, from, to]);
    }
  }
}

async function run(store: BenchStore, recipients: number): Promise<Record<string, string | number>[]> {
  const relay = await sink();
  const config = loadConfig({
    NODE_ENV: 'development',
    DATA_DIR: store.dataDir,
    APP_SECRET: 'bench-secret-that-is-long-enough',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000000',
    SMTP_URL: `smtp://127.0.0.1:${relay.port}`,
    PUBLIC_URL: 'https://bench.example',
  });
  const app = await buildApp({ config, database: store.database, logger: false });
  const name = store.name === 'postgres' ? 'PostgreSQL' : 'PGlite (embedded)';
  try {
    const { auth, campaigns, conversations } = app.services;
    const { organization } = await auth.createUserWithOrg({
      email: `campaigns-${Date.now()}@bench.example`,
      password: 'bench password',
      organizationName: 'Bench',
    });
    const scope = { orgId: organization.id, projectId: null, actor: { type: 'system' as const, id: 'bench' } };
    await seed(store, organization.id, recipients);
    const inbox = await conversations.createInbox(scope, { name: 'bench', channel: 'email', config: { address: 'news@bench.example', fromName: 'Bench' } });
    const created = await campaigns.create(scope, {
      name: 'bench',
      inboxId: inbox.id,
      audience: { tags: ['bench'] },
      steps: [{ delaySeconds: 0, subject: 'News for {{ lead.name }}', text: 'Hello {{ lead.name }}, here is our news.' }],
      settings: { perMinute: 100_000, dailyLimit: 10_000_000, maxErrors: 1_000_000 },
    });
    global.gc?.();
    const profiler = process.env.BENCH_PROFILE ? new Session() : null;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    const before = process.memoryUsage();
    const t0 = performance.now();
    const started = await campaigns.start(scope, created.id);
    const resolvedMs = performance.now() - t0;
    const marks: { at: number; received: number; rss: number; heap: number }[] = [];
    let last = 0;
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      const { received } = await relay.count();
      const m = process.memoryUsage();
      marks.push({ at: performance.now() - t0, received, rss: m.rss, heap: m.heapUsed });
      if (received >= started.total) break;
      if (marks.length > 10 && received === last && marks.at(-10)!.received === received) throw new Error(`stalled at ${received} of ${started.total}`);
      last = received;
    }
    if (profiler) writeFileSync(process.env.BENCH_PROFILE!, JSON.stringify((await profiler.post('Profiler.stop')).profile));
    const seconds = marks.at(-1)!.at / 1000;
    const { received, distinct } = await relay.count();
    const tenths: number[] = [];
    for (let k = 1; k <= 10; k++) {
      const target = (started.total * k) / 10;
      const mark = marks.find((x) => x.received >= target)!;
      const prev = k === 1 ? { at: resolvedMs, received: 0 } : marks.find((x) => x.received >= (started.total * (k - 1)) / 10)!;
      tenths.push(Math.round((mark.received - prev.received) / ((mark.at - prev.at) / 1000)));
    }
    const at = (fraction: number) => marks.find((x) => x.received >= started.total * fraction)!;
    return [
      {
        store: name,
        recipients: started.total,
        'audience resolved (s)': (resolvedMs / 1000).toFixed(1),
        'msgs/s overall': Math.round(received / ((marks.at(-1)!.at - resolvedMs) / 1000)),
        'msgs/s per tenth (min–max)': `${Math.min(...tenths)}–${Math.max(...tenths)}`,
        'total s': seconds.toFixed(0),
        received,
        'distinct Message-IDs': distinct,
        'heap MB before / 10% / 50% / 100%': [before.heapUsed, at(0.1).heap, at(0.5).heap, at(1).heap].map((b) => (b / MB).toFixed(0)).join(' / '),
        'rss MB 10% / 50% / 100%': [at(0.1).rss, at(0.5).rss, at(1).rss].map((b) => (b / MB).toFixed(0)).join(' / '),
      },
    ];
  } finally {
    await app.close();
    await relay.stop();
  }
}

export async function main(): Promise<void> {
  console.log(`campaigns benchmark: one e-mail step to ${RECIPIENTS.toLocaleString('en')} recipients, no rate limit, Node ${process.version}\n`);
  const rows: Record<string, string | number>[] = [];
  if (STORES.includes('postgres')) {
    if (await postgresReachable()) {
      const store = await openStore('postgres', 'campaigns');
      try {
        rows.push(...(await run(store, RECIPIENTS)));
      } finally {
        await store.dispose();
      }
    } else console.log('PostgreSQL is not reachable.\n');
  }
  if (STORES.includes('pglite')) {
    const store = await openStore('embedded', 'campaigns');
    try {
      rows.push(...(await run(store, EMBEDDED_RECIPIENTS)));
    } finally {
      await store.dispose();
    }
  }
  printTable(rows);
  console.log('\nGoal: at least 500 messages/s sustained on PostgreSQL, memory flat (not growing with the audience).');
}
