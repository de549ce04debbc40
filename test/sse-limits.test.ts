import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './harness.ts';
import { SseClient } from './sse-client.ts';
import { runAgent } from './agents.ts';

/** Issue 10 item 8 and item 9 (agent-run stream scope): caps on open streams, a time limit on receiving requests. */

let t: TestApp;
let origin: string;
let orgUrl: string;
const open: SseClient[] = [];

beforeAll(async () => {
  t = await buildTestApp({ env: { SSE_PING_MS: '200', SSE_MAX_PER_ORG: '25', REQUEST_TIMEOUT_MS: '1000' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  orgUrl = `${origin}/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  for (const sse of open) sse.close();
  await t.close();
});

const key = (scopes: string[]) => t.key(t.orgA.orgId, scopes);

async function stream(url: string, headers: Record<string, string>): Promise<SseClient> {
  const sse = await SseClient.open(url, headers);
  open.push(sse);
  expect(sse.status, JSON.stringify(sse.errorBody)).toBe(200);
  return sse;
}

function closeAll(): void {
  for (const sse of open.splice(0)) sse.close();
}

/** The refused request, read whole: status, Retry-After and the error body. */
async function refused(url: string, headers: Record<string, string>) {
  const res = await request(url, { headers });
  return { status: res.statusCode, retryAfter: res.headers['retry-after'], body: (await res.body.json()) as { code: string; message: string } };
}

/** Retries until the server has noticed closed streams and lets a new one open. */
async function eventuallyOpens(url: string, headers: Record<string, string>): Promise<SseClient> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const sse = await SseClient.open(url, headers);
    if (sse.status === 200) {
      open.push(sse);
      return sse;
    }
    if (Date.now() > deadline) throw new Error(`stream still refused: ${sse.status} ${JSON.stringify(sse.errorBody)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('open event streams are capped (CONTRACT §12)', () => {
  it('the 21st stream of one credential gets 429 RATE_LIMIT with Retry-After; other credentials still connect', async () => {
    const apiKey = await key(['workflows:read']);
    for (let i = 0; i < 20; i++) await stream(`${orgUrl}/events`, { 'x-api-key': apiKey });
    const over = await refused(`${orgUrl}/events`, { 'x-api-key': apiKey });
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('RATE_LIMIT');
    expect(over.body.message).toMatch(/per credential/);
    expect(Number(over.retryAfter)).toBeGreaterThanOrEqual(1);
    // The same user's token in the query is another credential.
    const session = await stream(`${orgUrl}/events?access_token=${t.orgA.token}`, {});
    // The streams carry the rate-limit headers like every other response.
    expect(session.status).toBe(200);
    // Closing one frees its place.
    open[0]!.close();
    await eventuallyOpens(`${orgUrl}/events`, { 'x-api-key': apiKey });
    closeAll();
  });

  it('counts streams per organization across credentials (SSE_MAX_PER_ORG)', async () => {
    const first = await key(['workflows:read']);
    const second = await key(['conversations:read']);
    const third = await key(['*']);
    for (let i = 0; i < 20; i++) await eventuallyOpens(`${orgUrl}/events`, { 'x-api-key': first });
    for (let i = 0; i < 5; i++) await stream(`${orgUrl}/events`, { 'x-api-key': second });
    const over = await refused(`${orgUrl}/events`, { 'x-api-key': third });
    expect(over.status).toBe(429);
    expect(over.body.message).toMatch(/per organization/);
    expect(Number(over.retryAfter)).toBeGreaterThanOrEqual(1);
    // Another organization has its own count.
    await stream(`${origin}/api/v1/orgs/${t.orgB.orgId}/events`, { 'x-api-key': t.orgB.apiKey });
    open.at(-2)!.close();
    await eventuallyOpens(`${orgUrl}/events`, { 'x-api-key': third });
    closeAll();
  });

  it('the agent-run stream needs workflows:read (agents:read gets 403) and shares the credential cap', async () => {
    const run = await runAgent(t, t.orgA.orgId, { token: t.orgA.token }, { type: 'REPORT_WRITER', task: 'stream scope' });
    const url = `${orgUrl}/agent-runs/${run.id}/events`;
    const agentsOnly = await refused(url, { 'x-api-key': await key(['agents:read']) });
    expect(agentsOnly.status).toBe(403);
    expect(agentsOnly.body.code).toBe('INSUFFICIENT_SCOPE');
    const reader = await key(['workflows:read']);
    const replay = await SseClient.open(url, { 'x-api-key': reader });
    expect(replay.status).toBe(200);
    await replay.waitForEvent('done');
    await replay.waitForEnd();
    for (let i = 0; i < 20; i++) await eventuallyOpens(`${orgUrl}/events`, { 'x-api-key': reader });
    const over = await refused(url, { 'x-api-key': reader });
    expect(over.status).toBe(429);
    expect(over.body.code).toBe('RATE_LIMIT');
    closeAll();
  });

  it('an SSE response carries the RateLimit headers', async () => {
    const res = await request(`${orgUrl}/events`, { headers: { authorization: `Bearer ${t.orgA.token}` } });
    try {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(Number(res.headers['ratelimit-limit'])).toBeGreaterThan(0);
      expect(res.headers['ratelimit-remaining']).toBeDefined();
      expect(res.headers['ratelimit-reset']).toBeDefined();
    } finally {
      res.body.destroy();
    }
  });
});

describe('REQUEST_TIMEOUT_MS', () => {
  it('cuts off a request body that arrives too slowly, while an SSE stream stays open past the time-out', async () => {
    const sse = await stream(`${orgUrl}/events`, { authorization: `Bearer ${t.orgA.token}` });
    const opened = Date.now();

    const socket = connect((t.app.server.address() as AddressInfo).port, '127.0.0.1');
    let answer = '';
    socket.on('data', (c: Buffer) => {
      answer += c.toString();
    });
    socket.on('error', () => {});
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('POST /api/v1/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{"email":"');
    const started = Date.now();
    // One byte every 100 ms: the connection is never idle, the body just never ends in time.
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write('a');
    }, 100);
    try {
      const end = await Promise.race([closed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 8000))]);
      expect(end, 'slow body still open after 8 s').toBeGreaterThan(0);
      expect(end - started).toBeGreaterThanOrEqual(900);
      expect(end - started).toBeLessThan(5000);
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      clearInterval(drip);
      socket.destroy();
    }

    // The stream, opened before the slow request, lives on well past REQUEST_TIMEOUT_MS.
    const wait = Math.max(0, opened + 2500 - Date.now());
    await new Promise((r) => setTimeout(r, wait));
    const pings = sse.messages.filter((m) => m.comment === 'ping').length;
    await sse.until(() => sse.messages.filter((m) => m.comment === 'ping').length > pings, 2000, 'a ping after the time-out');
    expect(sse.ended).toBe(false);
    expect(Date.now() - opened).toBeGreaterThan(2500);
    closeAll();
  });
});
