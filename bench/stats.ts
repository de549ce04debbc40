/**
 * Statistics over a large outbox: one million platform events for one organization (plus 100,000
 * of another, and 50,000 usage records), bulk-inserted with generate_series on PostgreSQL, then
 * POST …/stats/query through the app (validation, SQL bucketing, serialization) over one year,
 * by week and by day, every metric and one metric. Prints p50/p99 per case. Whole hours are read
 * from stats_hourly (rebuilt here, since the bulk insert bypassed the dispatcher); the Kolkata case
 * (+05:30) cannot use hourly counts and shows the cost of reading the outbox itself.
 *
 *   npm run bench -- stats
 *
 * Environment: BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres; a throwaway
 * database svc_bench_stats is created and dropped), BENCH_EVENTS (1000000), BENCH_RUNS (40 per case).
 */
import { sql } from 'drizzle-orm';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openStore, percentile, postgresReachable, printTable } from './_stores.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const TYPES = [
  'lead.created',
  'lead.qualified',
  'lead.updated',
  'workflow.run.finished',
  'workflow.run.failed',
  'agent.run.finished',
  'post.published',
  'post.created',
];
const METRICS = ['leads.created', 'leads.qualified', 'runs.succeeded', 'runs.failed', 'agent.runs', 'posts.published', 'usage.costUsd'];

export async function main(): Promise<void> {
  if (!(await postgresReachable())) {
    console.error('PostgreSQL is not reachable (BENCH_PG_URL); this benchmark needs it.');
    process.exit(1);
  }
  const store = await openStore('postgres', 'stats');
  const config = loadConfig({
    NODE_ENV: 'test',
    APP_SECRET: 'bench-secret-long-enough-123',
    DATA_DIR: store.dataDir,
    RATE_LIMIT_MAX: '1000000',
    LOG_LEVEL: 'warn',
  });
  const app = await buildApp({ config, database: store.database, logger: false, workers: false });
  await app.ready();
  try {
    const { organization } = await app.services.auth.createUserWithOrg({
      email: 'bench@example.com',
      password: 'bench password 123',
      organizationName: 'Bench',
    });
    const other = await app.services.auth.createUserWithOrg({ email: 'other@example.com', password: 'bench password 123', organizationName: 'Other' });
    const projectId = await app.services.orgs.defaultProjectId(organization.id);
    const { key } = await app.services.apiKeys.create(organization.id, { name: 'bench', scopes: ['usage:read'] });
    const db = store.database.db;
    const start = '2025-01-01T00:00:00Z';
    const spreadS = (365 * 86_400) / EVENTS;

    let t0 = performance.now();
    // Events spread evenly over 2025, types round-robin, payloads of a realistic size.
    await db.execute(sql`
      insert into events (id, org_id, project_id, type, payload, at)
      select 'evt_bench' || lpad(g::text, 10, '0'), ${organization.id}, ${projectId},
        (${sql.param(TYPES)}::text[])[1 + (g % ${TYPES.length})],
        jsonb_build_object('lead', jsonb_build_object('id', 'lead_' || md5(g::text), 'name', 'Person ' || g, 'email', 'p' || g || '@example.com', 'status', 'NEW', 'score', g % 100, 'tags', jsonb_build_array('bench', 'x')), 'actor', jsonb_build_object('type', 'system', 'id', 'bench')),
        ${start}::timestamptz + (g * ${spreadS}::float8 * interval '1 second')
      from generate_series(1, ${EVENTS}) g`);
    await db.execute(sql`
      insert into events (id, org_id, project_id, type, payload, at)
      select 'evt_other' || lpad(g::text, 10, '0'), ${other.organization.id}, null, (${sql.param(TYPES)}::text[])[1 + (g % ${TYPES.length})], '{}'::jsonb,
        ${start}::timestamptz + (g * ${spreadS * 10}::float8 * interval '1 second')
      from generate_series(1, ${Math.round(EVENTS / 10)}) g`);
    await db.execute(sql`
      insert into usage_records (id, org_id, project_id, model_id, input_tokens, output_tokens, cost_usd, at)
      select 'use_bench' || g, ${organization.id}, ${projectId}, 'openai:gpt-4.1-mini', 1000 + g % 500, 200, 0.0004 + (g % 7) * 0.0001::float8,
        ${start}::timestamptz + (g * ${(365 * 86_400) / 50_000}::float8 * interval '1 second')
      from generate_series(1, 50000) g`);
    const loadMs = performance.now() - t0;
    t0 = performance.now();
    await db.execute(sql`vacuum analyze events`);
    await db.execute(sql`vacuum analyze usage_records`);
    const vacuumMs = performance.now() - t0;
    t0 = performance.now();
    // The bulk insert bypassed the dispatcher: count the hours the way a backfill would.
    const hours = await app.services.stats.rebuild(organization.id);
    await db.execute(sql`vacuum analyze stats_hourly`);
    const rebuildMs = performance.now() - t0;
    console.log(`stats_hourly rebuilt: ${hours.toLocaleString('en')} hourly rows in ${(rebuildMs / 1000).toFixed(1)} s`);
    console.log(
      `inserted ${EVENTS.toLocaleString('en')} events (+${Math.round(EVENTS / 10).toLocaleString('en')} of another org, 50,000 usage records) in ${(loadMs / 1000).toFixed(1)} s; vacuum analyze ${(vacuumMs / 1000).toFixed(1)} s`,
    );

    const cases: { name: string; body: Record<string, unknown> }[] = [
      { name: 'year by week, 7 metrics', body: { metrics: METRICS, from: '2025-01-01', to: '2025-12-31', granularity: 'week' } },
      { name: 'year by day, 7 metrics', body: { metrics: METRICS, from: '2025-01-01', to: '2025-12-31', granularity: 'day' } },
      { name: 'year by week, 6 event metrics', body: { metrics: METRICS.slice(0, 6), from: '2025-01-01', to: '2025-12-31', granularity: 'week' } },
      { name: 'year by week, usage.costUsd', body: { metrics: ['usage.costUsd'], from: '2025-01-01', to: '2025-12-31', granularity: 'week' } },
      { name: 'year by week, leads.created', body: { metrics: ['leads.created'], from: '2025-01-01', to: '2025-12-31', granularity: 'week' } },
      { name: 'year by day, leads.created', body: { metrics: ['leads.created'], from: '2025-01-01', to: '2025-12-31', granularity: 'day' } },
      {
        name: 'year by day, 7 metrics, Europe/Paris',
        body: { metrics: METRICS, from: '2025-01-01', to: '2025-12-31', granularity: 'day', timezone: 'Europe/Paris' },
      },
      {
        name: 'year by week, 7 metrics, Asia/Kolkata (outbox only)',
        body: { metrics: METRICS, from: '2025-01-01', to: '2025-12-31', granularity: 'week', timezone: 'Asia/Kolkata' },
      },
      { name: 'month by hour, 7 metrics', body: { metrics: METRICS, from: '2025-06-01', to: '2025-06-30', granularity: 'hour' } },
    ];
    const rows: Record<string, string | number>[] = [];
    for (const c of cases) {
      const call = () => app.inject({ method: 'POST', url: `/api/v1/orgs/${organization.id}/stats/query`, headers: { 'x-api-key': key }, payload: c.body });
      const first = await call();
      if (first.statusCode !== 200) throw new Error(`${c.name}: HTTP ${first.statusCode} ${first.body}`);
      const body = first.json() as { series: { metric: string; total: number; points: unknown[] }[] };
      for (let i = 0; i < 2; i++) await call();
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const s = performance.now();
        await call();
        times.push(performance.now() - s);
      }
      times.sort((a, b) => a - b);
      const leads = body.series.find((s) => s.metric === 'leads.created');
      rows.push({
        case: c.name,
        points: body.series[0]!.points.length,
        'leads.created total': leads ? leads.total : '-',
        'p50 ms': percentile(times, 50).toFixed(1),
        'p99 ms': percentile(times, 99).toFixed(1),
        'max ms': times.at(-1)!.toFixed(1),
      });
    }
    printTable(rows);
  } finally {
    await app.close();
    await store.dispose();
  }
}
