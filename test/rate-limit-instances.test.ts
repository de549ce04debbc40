import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { openDatabase, type Database } from '../src/platform/db.ts';
import type { App } from '../src/platform/http/types.ts';
import { buildTestApp, type TestApp } from './harness.ts';
import { onPostgres } from './database.ts';

/**
 * Issue 18, shared rate limits: two instances on one database count against one limit. On
 * PostgreSQL the second instance has its own connection pool (as another process would); on the
 * embedded store both apps share the one database, as the one process is the only instance there.
 */
describe('rate limits shared by two instances', () => {
  let t: TestApp;
  let second: App;
  let secondDb: Database | null = null;
  const MAX = 40;

  beforeAll(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MAX: String(MAX), AUTH_RATE_LIMIT_MAX: '6' }, workers: false });
    secondDb = onPostgres ? openDatabase({ databaseUrl: t.database.url, dataDir: '/tmp', poolSize: 5 }) : null;
    second = await buildApp({ config: t.config, database: secondDb ?? t.database, logger: false, workers: false });
    await second.ready();
  });
  afterAll(async () => {
    await second?.close();
    await secondDb?.close();
    await t?.close();
  });

  it('a credential gets RATE_LIMIT_MAX requests in all, whichever instance answers, concurrently', async () => {
    const url = `/api/v1/orgs/${t.orgA.orgId}/leads`;
    const headers = { 'x-api-key': t.orgA.apiKey };
    // 60 requests at once, alternating between the instances.
    const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? second : t.app).inject({ url, headers })));
    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(MAX);
    expect(statuses.filter((s) => s === 429)).toHaveLength(60 - MAX);
    // Each request has its own place in the one count: the remaining values are MAX-1 … 0, once each.
    const remaining = responses
      .filter((r) => r.statusCode === 200)
      .map((r) => Number(r.headers['ratelimit-remaining']))
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: MAX }, (_, i) => i));
    const limited = responses.find((r) => r.statusCode === 429)!;
    expect(limited.json()).toMatchObject({ code: 'RATE_LIMIT' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-limit']).toBe(String(MAX));
    // Exactly at the limit, sequentially too: another credential, MAX on one side and one more on the other.
    const other = { 'x-api-key': t.orgB.apiKey };
    for (let i = 0; i < MAX; i++)
      expect((await (i < MAX / 2 ? t.app : second).inject({ url: `/api/v1/orgs/${t.orgB.orgId}/leads`, headers: other })).statusCode).toBe(200);
    expect((await second.inject({ url: `/api/v1/orgs/${t.orgB.orgId}/leads`, headers: other })).statusCode).toBe(429);
    expect((await t.app.inject({ url: `/api/v1/orgs/${t.orgB.orgId}/leads`, headers: other })).statusCode).toBe(429);
  });

  it("the password routes' per-address limit holds across instances, apart from the general one", async () => {
    const login = (app: App) =>
      app.inject({ method: 'POST', url: '/api/v1/auth/login', remoteAddress: '192.0.2.33', payload: { email: t.orgA.ownerEmail, password: 'wrong password' } });
    const statuses = [];
    for (let i = 0; i < 8; i++) statuses.push((await login(i % 2 ? second : t.app)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429, 429]);
    // The same address has its general budget untouched by the password routes.
    const res = await t.app.inject({ url: `/api/v1/orgs/${t.orgA.orgId}/leads`, remoteAddress: '192.0.2.33' });
    expect(res.statusCode).toBe(401);
    expect(res.headers['ratelimit-remaining']).toBe(String(MAX - 1));
  });

  it('a window that ended starts afresh, and the maintenance purge deletes ended windows', async () => {
    const { database } = t;
    await database.db.execute(sql`update rate_limit_counters set expires_at = 0`);
    const res = await second.inject({ url: `/api/v1/orgs/${t.orgA.orgId}/leads`, headers: { 'x-api-key': t.orgA.apiKey } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-remaining']).toBe(String(MAX - 1));
    await t.app.services.rateLimits.purge();
    const left = await database.prepared<{ key: string }>('rl_left', 'select key from rate_limit_counters', []);
    expect(left.map((r) => r.key)).toEqual([
      `k:${((await t.app.services.guard.authenticate({ headers: { 'x-api-key': t.orgA.apiKey } } as never)) as { keyId: string }).keyId}`,
    ]);
  });
});
