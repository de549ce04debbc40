import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, manual } from './workflows.ts';
import { buildTestApp, type TestApp } from './harness.ts';

/**
 * Issue 10, item 5: outbound calls end on time, and the SSRF guard knows the IPv6 forms that embed
 * an IPv4 address and host names with a trailing dot, when a URL is stored and when a call is made.
 */

/** A loopback TCP server that accepts connections and never says a word: no HTTP answer, no TLS handshake. */
async function silentServer(): Promise<{ server: Server; port: number; connections: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server = createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as { port: number }).port,
    connections: () => count,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('outbound calls end at their deadline', () => {
  let t: TestApp;
  let silent: Awaited<ReturnType<typeof silentServer>>;
  const TIMEOUT_MS = 400;

  beforeAll(async () => {
    silent = await silentServer();
    t = await buildTestApp({ env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WORKFLOW_POLL_MS: '50' } });
  });
  afterAll(async () => {
    await t?.close();
    await silent?.close();
  });

  // undici waited for its own 10 s connect time-out on a TLS handshake that never came, whatever
  // the call's time-out; the test ping used to answer after about 10 s.
  for (const scheme of ['https', 'http'] as const) {
    it(`a webhook test ping to a ${scheme} receiver that never answers fails at WEBHOOK_TIMEOUT_MS`, async () => {
      const base = `/api/v1/orgs/${t.orgA.orgId}`;
      const auth = { token: t.orgA.token };
      const created = await t.call({
        method: 'POST',
        url: `${base}/webhook-endpoints`,
        auth,
        payload: { url: `${scheme}://127.0.0.1:${silent.port}/hook`, events: ['*'] },
      });
      expect(created.statusCode).toBe(201);
      const before = silent.connections();
      const started = Date.now();
      const res = await t.call({ method: 'POST', url: `${base}/webhook-endpoints/${created.json().id}/test`, auth });
      const elapsed = Date.now() - started;
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ ok: false, error: `no answer within ${TIMEOUT_MS} ms` });
      expect(silent.connections()).toBeGreaterThan(before);
      expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(elapsed).toBeLessThan(TIMEOUT_MS + 1500);
    });
  }

  it('a utility.httpRequest step against a TLS handshake that never completes fails at its timeoutMs', async () => {
    const w = api(t);
    const flow = await w.create(
      [manual, { id: 'call', type: 'utility.httpRequest', params: { method: 'GET', url: `https://127.0.0.1:${silent.port}/x`, timeoutMs: 300 } }],
      [{ from: 'start', to: 'call' }],
    );
    const started = Date.now();
    const run = await w.until((await w.run(flow.id)).id, ['FAILED', 'SUCCEEDED'], 8_000);
    const elapsed = Date.now() - started;
    expect(run.status).toBe('FAILED');
    expect(w.step(run, 'call')!.error!.message).toContain('no answer within 300 ms');
    expect(w.step(run, 'call')!.durationMs!).toBeLessThan(1500);
    expect(elapsed).toBeLessThan(4000);
  });
});

describe('the SSRF guard refuses embedded-IPv4 IPv6 forms and trailing-dot host names', () => {
  let t: TestApp;
  let silent: Awaited<ReturnType<typeof silentServer>>;

  beforeAll(async () => {
    silent = await silentServer();
    // As in production: only public https targets.
    t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'false', WORKFLOW_POLL_MS: '50' } });
  });
  afterAll(async () => {
    await t?.close();
    await silent?.close();
  });

  const refused = [
    'https://[::127.0.0.1]/x', // IPv4-compatible: ipaddr.js calls ::7f00:1 unicast
    'https://[::7f00:1]/x',
    'http://[::ffff:127.0.0.1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:0:7f00:1]/', // IPv4-translated
    'http://[64:ff9b::7f00:1]/',
    'https://[64:ff9b::7f00:1]/', // NAT64
    'https://[64:ff9b:1::a00:1]/',
    'https://[2002:7f00:1::1]/', // 6to4
    'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', // Teredo
    'http://localhost./',
    'https://localhost./',
    'https://internal./',
    'https://example.com./',
    'https://metadata/',
  ];

  it('at creation: a webhook endpoint with any of them is a 400 naming body.url', async () => {
    const base = `/api/v1/orgs/${t.orgA.orgId}`;
    for (const url of refused) {
      const res = await t.call({ method: 'POST', url: `${base}/webhook-endpoints`, auth: { token: t.orgA.token }, payload: { url, events: ['*'] } });
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.url' }] });
    }
    // A public address in an IPv4-mapped form is what it is: public, so accepted.
    const ok = await t.call({
      method: 'POST',
      url: `${base}/webhook-endpoints`,
      auth: { token: t.orgA.token },
      payload: { url: 'https://[::ffff:8.8.8.8]/hook', events: ['*'] },
    });
    expect(ok.statusCode).toBe(201);
  });

  it('at save: a workflow whose node targets one of them literally is a 422 naming the node and param', async () => {
    const base = `/api/v1/orgs/${t.orgA.orgId}`;
    for (const [type, url] of [
      ['utility.httpRequest', 'https://[::127.0.0.1]/x'],
      ['utility.webhookOut', 'https://localhost./hook'],
      ['utility.httpRequest', 'https://[64:ff9b::7f00:1]/'],
    ] as const) {
      const params = type === 'utility.httpRequest' ? { method: 'GET', url } : { url };
      const res = await t.call({
        method: 'POST',
        url: `${base}/workflows`,
        auth: { token: t.orgA.token },
        payload: { name: 'w', nodes: [manual, { id: 'call', type, params }], edges: [{ from: 'start', to: 'call' }] },
      });
      expect(res.statusCode, url).toBe(422);
      expect(res.json(), url).toMatchObject({ code: 'WORKFLOW_INVALID', details: { nodeId: 'call', param: 'url' } });
    }
  });

  it('at connection: a URL computed by an expression is blocked before any connection is made', async () => {
    const w = api(t);
    const flow = await w.create(
      [manual, { id: 'call', type: 'utility.httpRequest', params: { method: 'GET', url: '{{ target }}', timeoutMs: 2000 } }],
      [{ from: 'start', to: 'call' }],
    );
    for (const target of [`https://[::127.0.0.1]:${silent.port}/x`, `https://localhost.:${silent.port}/x`]) {
      const run = await w.until((await w.run(flow.id, { input: { target } })).id, ['FAILED', 'SUCCEEDED'], 8_000);
      expect(run.status, target).toBe('FAILED');
      expect(w.step(run, 'call')!.error!.message, target).toMatch(/embeds an IPv4 address|ending in a dot/);
    }
    expect(silent.connections()).toBe(0);
  });
});
