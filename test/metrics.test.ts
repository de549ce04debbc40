import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './harness.ts';
import { eventually } from './helpers.ts';
import { Receiver } from './receiver.ts';
import { SseClient } from './sse-client.ts';
import { runAgent, waitForRun } from './agents.ts';
import { api, manual } from './workflows.ts';
import { registry } from '../src/platform/metrics.ts';

/** Issue 18, metrics: Prometheus metrics on METRICS_PORT after real traffic, the bearer token, off by default. */

const TOKEN = 'metrics-token-for-tests';
let t: TestApp;
let receiver: Receiver;
let metricsUrl: string;

beforeAll(async () => {
  // The metrics are process-wide, and the test files before this one in the worker counted theirs.
  registry.resetMetrics();
  // Workers start later: the first scrape sees work waiting in the queues.
  t = await buildTestApp({ env: { METRICS_PORT: '0', METRICS_TOKEN: TOKEN, SSE_PING_MS: '5000' }, workers: false });
  receiver = await new Receiver().start();
  expect(t.app.metricsPort).toBeGreaterThan(0);
  metricsUrl = `http://127.0.0.1:${t.app.metricsPort}/metrics`;
});
afterAll(async () => {
  await receiver?.stop();
  await t?.close();
});

async function scrape(token: string | null = TOKEN): Promise<{ status: number; body: string; contentType: string }> {
  const res = await request(metricsUrl, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  return { status: res.statusCode, body: await res.body.text(), contentType: String(res.headers['content-type']) };
}

/** The value of one series, `name{a="x",…}` with exactly these labels (in any order), or undefined. */
function sample(body: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of body.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.keys(found).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('metrics', () => {
  it('reads queue depth and age per worker loop, then counts requests, runs, deliveries, model usage and streams', async () => {
    const w = api(t);
    const auth = { token: t.orgA.token };
    const base = `/api/v1/orgs/${t.orgA.orgId}`;

    // Waiting work, no workers yet.
    const workflow = await w.create([manual], []);
    const run = await w.run(workflow.id);
    const agentRun = await t.call({ method: 'POST', url: `${base}/agents/run`, auth, payload: { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads' } });
    expect(agentRun.statusCode).toBe(202);
    const waiting = await scrape();
    expect(waiting.status).toBe(200);
    expect(waiting.contentType).toContain('text/plain');
    for (const queue of [
      'workflow_runs',
      'webhook_deliveries',
      'scheduled_posts',
      'agent_runs',
      'campaign_sends',
      'conversation_inbound',
      'conversation_outbound',
    ]) {
      expect(sample(waiting.body, 'worker_queue_depth', { queue }), queue).toBeGreaterThanOrEqual(0);
      expect(sample(waiting.body, 'worker_queue_oldest_age_seconds', { queue }), queue).toBeGreaterThanOrEqual(0);
    }
    expect(sample(waiting.body, 'worker_queue_depth', { queue: 'workflow_runs' })).toBe(1);
    expect(sample(waiting.body, 'worker_queue_depth', { queue: 'agent_runs' })).toBe(1);
    expect(sample(waiting.body, 'worker_queue_oldest_age_seconds', { queue: 'workflow_runs' })).toBeLessThan(60);
    expect(sample(waiting.body, 'worker_queue_depth', { queue: 'webhook_deliveries' })).toBe(0);

    // Now the traffic.
    t.app.startWorkers();
    const created = await t.call({ method: 'POST', url: `${base}/webhook-endpoints`, auth, payload: { url: receiver.url(), events: ['lead.created'] } });
    expect(created.statusCode).toBe(201);
    expect((await t.call({ method: 'POST', url: `${base}/leads`, auth, payload: { email: 'metrics@example.com' } })).statusCode).toBe(201);
    expect((await t.call({ method: 'GET', url: `${base}/leads`, auth })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: '/api/v1/no-such-route', auth })).statusCode).toBe(404);
    await receiver.waitFor(1);
    expect((await w.until(run.id)).status).toBe('SUCCEEDED');
    expect((await waitForRun(t, t.orgA.orgId, agentRun.json().id, auth)).status).toBe('succeeded');
    await runAgent(t, t.orgA.orgId, auth, { type: 'REPORT_WRITER', task: 'Write a short report' });

    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const sse = await SseClient.open(`${origin}${base}/events`, { authorization: `Bearer ${t.orgA.token}` });
    try {
      expect(sse.status).toBe(200);
      const body = (
        await eventually(async () => {
          const s = await scrape();
          return (sample(s.body, 'webhook_deliveries_total', { outcome: 'succeeded' }) ?? 0) >= 1 ? s : null;
        })
      ).body;

      // Requests by route pattern, never the raw URL.
      const leads = { method: 'GET', route: '/api/v1/orgs/:orgId/leads', status: '200' };
      expect(sample(body, 'http_requests_total', leads)).toBe(1);
      expect(sample(body, 'http_requests_total', { method: 'POST', route: '/api/v1/orgs/:orgId/leads', status: '201' })).toBe(1);
      expect(sample(body, 'http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
      expect(sample(body, 'http_request_duration_seconds_count', leads)).toBe(1);
      expect(sample(body, 'http_request_duration_seconds_bucket', { ...leads, le: '+Inf' })).toBe(1);
      const seconds = sample(body, 'http_request_duration_seconds_sum', leads)!;
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThan(10);
      expect(body).not.toContain(t.orgA.orgId);

      expect(sample(body, 'workflow_run_duration_seconds_count', { status: 'SUCCEEDED' })).toBe(1);
      expect(sample(body, 'workflow_run_duration_seconds_sum', { status: 'SUCCEEDED' })).toBeLessThan(10);
      expect(sample(body, 'webhook_deliveries_total', { outcome: 'succeeded' })).toBe(1);

      const input = sample(body, 'ai_tokens_total', { model: 'offline', direction: 'input' })!;
      expect(input).toBeGreaterThan(0);
      expect(sample(body, 'ai_tokens_total', { model: 'offline', direction: 'output' })).toBeGreaterThan(0);
      expect(sample(body, 'ai_cost_usd_total', { model: 'offline' })).toBeGreaterThanOrEqual(0);
      // The same tokens the usage API reports.
      const usage = (await t.call({ method: 'GET', url: `${base}/usage`, auth })).json() as { totals: { inputTokens: number } };
      expect(input).toBe(usage.totals.inputTokens);

      expect(sample(body, 'sse_connections_open')).toBe(1);
      expect(sample(body, 'db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
      expect(sample(body, 'db_pool_waiting_requests')).toBe(0);
      expect(sample(body, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
      expect(body).toContain('nodejs_eventloop_lag_seconds');

      // The Grafana dashboard asks only for series this scrape has.
      const dashboard = JSON.parse(readFileSync(new URL('../docs/grafana-dashboard.json', import.meta.url), 'utf8')) as {
        panels: { targets: { expr: string }[] }[];
      };
      const names = new Set(
        dashboard.panels.flatMap((p) =>
          p.targets.flatMap((x) => [...x.expr.matchAll(/([a-z_][a-z0-9_]*)\{/g)].map((m) => m[1]!.replace(/_(bucket|count|sum)$/, ''))),
        ),
      );
      expect(names.size).toBeGreaterThan(10);
      for (const name of names) expect(body, name).toContain(`# TYPE ${name} `);
    } finally {
      sse.close();
    }
    await eventually(async () => sample((await scrape()).body, 'sse_connections_open') === 0);
  });

  it('answers 401 without the bearer token or with a wrong one, and only /metrics', async () => {
    const none = await scrape(null);
    expect(none.status).toBe(401);
    expect(none.body).not.toContain('http_requests_total');
    expect((await scrape('metrics-token-for-test')).status).toBe(401);
    expect((await scrape(`${TOKEN}x`)).status).toBe(401);
    expect((await scrape(TOKEN)).status).toBe(200);
    const other = await request(metricsUrl.replace('/metrics', '/'), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(other.statusCode).toBe(404);
    await other.body.dump();
    // And never on the public port.
    const publicPort = await t.call({ method: 'GET', url: '/metrics' });
    expect(publicPort.body).not.toContain('http_requests_total');
  });

  it('listens nowhere when METRICS_PORT is unset', async () => {
    const servers = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
    const before = servers();
    const plain = await buildTestApp({ workers: false });
    try {
      expect(plain.app.metricsPort).toBeNull();
      expect(servers()).toBe(before);
      expect((await plain.call({ method: 'GET', url: '/metrics' })).body).not.toContain('http_requests_total');
    } finally {
      await plain.close();
    }
  });
});
