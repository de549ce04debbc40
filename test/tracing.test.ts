import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../src/platform/tracing.ts';
import { buildTestApp, type TestApp } from './harness.ts';
import { eventually } from './helpers.ts';
import { Receiver } from './receiver.ts';
import { runAgent } from './agents.ts';

/** Issue 18, traces: spans exported over OTLP/HTTP (JSON) to a collector, here a loopback receiver of POST /v1/traces. */

type Attr = { key: string; value: { stringValue?: string; intValue?: string | number } };
type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: Attr[] };

let collector: Receiver;
let tracing: Tracing;
let t: TestApp;

beforeAll(async () => {
  collector = await new Receiver().start();
  tracing = await startTracing({ endpoint: `http://127.0.0.1:${collector.port}`, immediate: true });
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
  await tracing?.shutdown();
  await collector?.stop();
});

function spans(): OtlpSpan[] {
  const out: OtlpSpan[] = [];
  for (const r of collector.received) {
    expect(r.method).toBe('POST');
    expect(r.url).toBe('/v1/traces');
    const body = r.json as { resourceSpans: { resource: { attributes: Attr[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };
    for (const rs of body.resourceSpans) {
      expect(rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue).toBe('automation-service');
      for (const ss of rs.scopeSpans) out.push(...ss.spans);
    }
  }
  return out;
}
const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : Number(v.intValue));
};

describe('traces', () => {
  it("exports an HTTP server span named by its route, with the database spans of the request inside it, continuing the caller's trace", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await t.call({
      method: 'GET',
      url: `/api/v1/orgs/${t.orgA.orgId}/leads`,
      auth: { apiKey: t.orgA.apiKey },
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(res.statusCode).toBe(200);
    await tracing.flush();
    const server = await eventually(() => spans().find((s) => attr(s, 'http.route') === '/api/v1/orgs/:orgId/leads'));
    expect(server.kind).toBe(2); // SERVER
    expect(server.name).toBe('GET /api/v1/orgs/:orgId/leads');
    expect(server.traceId).toBe(traceId);
    expect(server.parentSpanId).toBe('00f067aa0ba902b7');
    expect(attr(server, 'http.response.status_code')).toBe(200);
    expect(JSON.stringify(server)).not.toContain(t.orgA.orgId);

    const queries = spans().filter((s) => s.traceId === traceId && attr(s, 'db.system.name') === 'postgresql');
    expect(queries.length).toBeGreaterThan(0);
    for (const q of queries) expect(q.kind).toBe(3); // CLIENT
    // Every query of the request hangs under the server span (directly or through a transaction span).
    const ids = new Set([server.spanId, ...queries.map((q) => q.spanId)]);
    for (const q of queries) expect(ids.has(q.parentSpanId!)).toBe(true);
    expect(queries.some((q) => q.parentSpanId === server.spanId)).toBe(true);
    expect(queries.some((q) => q.name === 'select' && String(attr(q, 'db.query.text')).includes('leads'))).toBe(true);
  });

  it('exports model calls and outbound HTTP calls as client spans', async () => {
    const receiver = await new Receiver().start();
    try {
      const base = `/api/v1/orgs/${t.orgA.orgId}`;
      const auth = { token: t.orgA.token };
      expect(
        (await t.call({ method: 'POST', url: `${base}/webhook-endpoints`, auth, payload: { url: receiver.url(), events: ['lead.created'] } })).statusCode,
      ).toBe(201);
      expect((await t.call({ method: 'POST', url: `${base}/leads`, auth, payload: { email: 'traced@example.com' } })).statusCode).toBe(201);
      await runAgent(t, t.orgA.orgId, auth, { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads' });
      await receiver.waitFor(1);
      const [model, outbound] = await eventually(async () => {
        await tracing.flush();
        const all = spans();
        const m = all.find((s) => s.name === 'chat offline');
        const o = all.find((s) => s.name === 'POST' && attr(s, 'server.address') === `http://127.0.0.1:${receiver.port}`);
        return m && o ? ([m, o] as const) : null;
      });
      expect(model.kind).toBe(3);
      expect(attr(model, 'gen_ai.request.model')).toBe('offline');
      expect(Number(attr(model, 'gen_ai.usage.input_tokens'))).toBeGreaterThanOrEqual(0);
      expect(outbound.kind).toBe(3);
      expect(attr(outbound, 'http.response.status_code')).toBe(200);
    } finally {
      await receiver.stop();
    }
  });
});
