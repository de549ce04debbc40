/**
 * Analytics: BENCH_INTEGRATIONS (50) Google integrations connected through the OAuth flow (the
 * loopback authorization server of the tests), each with a GA4 property and a Search Console site
 * holding a year of daily numbers in the Google APIs' own wire formats (the loopback stand-in of the
 * tests), synced with one on-demand run each (`POST …/integrations/:id/sync` for the whole year) —
 * then POST …/stats/query over those rows (a year by day and by week, the GA4 and Search Console
 * metrics) and GET …/analytics/daily (one integration's year). Prints the sync's time and rows per
 * second, and p50/p99 per query. PostgreSQL.
 *
 *   npm run bench -- analytics
 *
 * Environment: BENCH_PG_URL (a throwaway database svc_bench_analytics), BENCH_INTEGRATIONS (50),
 * BENCH_RUNS (40 per query).
 */
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { follow, OAuthStandIn } from '../test/oauth-provider.ts';
import { GoogleStandIn } from '../test/google-stand-in.ts';
import { openStore, percentile, postgresReachable, printTable } from './_stores.ts';

const INTEGRATIONS = Number(process.env.BENCH_INTEGRATIONS ?? 50);
const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const DAY = 86_400_000;

export async function main(): Promise<void> {
  if (!(await postgresReachable())) {
    console.error('PostgreSQL is not reachable (BENCH_PG_URL); this benchmark needs it.');
    process.exit(1);
  }
  const oauth = await new OAuthStandIn().start();
  const google = await new GoogleStandIn().start();
  const store = await openStore('postgres', 'analytics');
  const config = loadConfig({
    NODE_ENV: 'test',
    APP_SECRET: 'bench-secret-long-enough-123',
    DATA_DIR: store.dataDir,
    RATE_LIMIT_MAX: '1000000',
    LOG_LEVEL: 'warn',
    PUBLIC_URL: 'http://127.0.0.1:3000',
    ...oauth.env(),
    ...google.env(),
  });
  const app = await buildApp({ config, database: store.database, logger: false });
  await app.ready();
  try {
    const { organization } = await app.services.auth.createUserWithOrg({
      email: 'bench@example.com',
      password: 'bench password 123',
      organizationName: 'Bench',
    });
    const { key } = await app.services.apiKeys.create(organization.id, { name: 'bench', scopes: ['*'] });
    const base = `/api/v1/orgs/${organization.id}`;
    const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
      app.inject({ method, url: `${base}${url}`, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });

    // A year ending yesterday: every day has numbers, a little different per integration and day.
    const today = Date.parse(new Date().toISOString().slice(0, 10));
    const days = Array.from({ length: 365 }, (_, i) => new Date(today - (365 - i) * DAY).toISOString().slice(0, 10));
    const ids: string[] = [];
    let t0 = performance.now();
    for (let n = 1; n <= INTEGRATIONS; n++) {
      const property = `properties/${1000 + n}`;
      const site = `https://site${n}.example/`;
      google.setGa4(property, Object.fromEntries(days.map((d, i) => [d, { sessions: 100 + ((n * 7 + i) % 50), totalUsers: 80 + (i % 30), keyEvents: i % 5 }])));
      google.setGsc(
        site,
        Object.fromEntries(days.map((d, i) => [d, { clicks: 20 + (i % 10), impressions: 1000 + n, ctr: (20 + (i % 10)) / (1000 + n), position: 5 + (i % 3) }])),
      );
      oauth.forgetConsent();
      const started = await call('POST', '/integrations/oauth/google/start', { name: `Site ${n}` });
      if (started.statusCode !== 200) throw new Error(`start: ${started.statusCode} ${started.body}`);
      const callback = new URL(await follow((started.json() as { authorizationUrl: string }).authorizationUrl));
      const cookies = Object.fromEntries(started.cookies.map((c) => [c.name, c.value]));
      const back = await app.inject({ method: 'GET', url: callback.pathname + callback.search, cookies });
      const id = new URL(back.headers.location as string).searchParams.get('connected');
      if (!id) throw new Error(`callback: ${back.statusCode} ${back.headers.location}`);
      const patched = await call('PATCH', `/integrations/${id}`, { config: { propertyId: property, siteUrl: site } });
      if (patched.statusCode !== 200) throw new Error(`config: ${patched.statusCode} ${patched.body}`);
      ids.push(id);
    }
    const connectMs = performance.now() - t0;

    t0 = performance.now();
    const runIds: string[] = [];
    for (const id of ids) {
      const res = await call('POST', `/integrations/${id}/sync`, { from: days[0], to: days.at(-1) });
      if (res.statusCode !== 202) throw new Error(`sync: ${res.statusCode} ${res.body}`);
      runIds.push((res.json() as { syncRunId: string }).syncRunId);
    }
    let rows = 0;
    for (;;) {
      const states = await Promise.all(
        ids.map(async (id, i) =>
          ((await call('GET', `/integrations/${id}/sync-runs`)).json() as { items: { id: string; status: string; rows: number }[] }).items.find(
            (r) => r.id === runIds[i],
          )!,
        ),
      );
      if (states.some((s) => s.status === 'failed')) throw new Error('a sync run failed');
      if (states.every((s) => s.status === 'succeeded')) {
        rows = states.reduce((sum, s) => sum + s.rows, 0);
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const syncMs = performance.now() - t0;
    console.log(
      `${INTEGRATIONS} integrations connected through OAuth in ${(connectMs / 1000).toFixed(1)} s; a year synced for each: ${rows.toLocaleString('en')} daily rows in ${(syncMs / 1000).toFixed(1)} s (${Math.round(rows / (syncMs / 1000)).toLocaleString('en')} rows/s, ${(syncMs / INTEGRATIONS).toFixed(0)} ms per integration)\n`,
    );

    const from = days[0]!;
    const to = days.at(-1)!;
    const all = ['ga4.sessions', 'ga4.users', 'ga4.conversions', 'gsc.clicks', 'gsc.impressions', 'gsc.ctr', 'gsc.position'];
    const cases: { name: string; run: () => ReturnType<typeof call> }[] = [
      { name: 'stats/query: year by day, 7 analytics metrics', run: () => call('POST', '/stats/query', { metrics: all, from, to, granularity: 'day' }) },
      { name: 'stats/query: year by week, 7 analytics metrics', run: () => call('POST', '/stats/query', { metrics: all, from, to, granularity: 'week' }) },
      { name: 'stats/query: year by day, ga4.sessions', run: () => call('POST', '/stats/query', { metrics: ['ga4.sessions'], from, to, granularity: 'day' }) },
      {
        name: 'stats/query: 28 days by day, 7 metrics, Europe/Paris',
        run: () => call('POST', '/stats/query', { metrics: all, from: days.at(-28)!, to, granularity: 'day', timezone: 'Europe/Paris' }),
      },
      { name: 'analytics/daily: one integration, a year', run: () => call('GET', `/analytics/daily?integrationId=${ids[0]}&from=${from}&to=${to}`) },
    ];
    const out: Record<string, string | number>[] = [];
    for (const c of cases) {
      const first = await c.run();
      if (first.statusCode !== 200) throw new Error(`${c.name}: HTTP ${first.statusCode} ${first.body}`);
      for (let i = 0; i < 2; i++) await c.run();
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const s = performance.now();
        await c.run();
        times.push(performance.now() - s);
      }
      times.sort((a, b) => a - b);
      out.push({ case: c.name, 'p50 ms': percentile(times, 50).toFixed(1), 'p99 ms': percentile(times, 99).toFixed(1), 'max ms': times.at(-1)!.toFixed(1) });
    }
    printTable(out);
  } finally {
    await app.close();
    await store.dispose();
    await oauth.stop();
    await google.stop();
  }
}
