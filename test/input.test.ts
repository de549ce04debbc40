import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './harness.ts';

/**
 * Issue 10, item 7: bad input is a 400 naming the field, never a 500 — one rule for the strings of
 * every body, query and path (no NUL, no lone surrogate, finite numbers), a depth limit on bodies,
 * sort allow-lists without the prototype, and dates the store can hold. test/fuzz.test.ts sweeps
 * every route; these are the cases the probe found, one by one.
 */
describe('bad input never gives 500', () => {
  let t: TestApp;
  let base: string;
  const auth = () => ({ token: t.orgA.token });

  beforeAll(async () => {
    t = await buildTestApp({ workers: false });
    base = `/api/v1/orgs/${t.orgA.orgId}`;
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (url: string, payload: unknown) => t.call({ method: 'POST', url: `${base}${url}`, auth: auth(), payload: payload as Record<string, unknown> });
  const raw = (method: 'POST' | 'PUT', url: string, text: string) =>
    t.call({ method, url: `${base}${url}`, auth: auth(), headers: { 'content-type': 'application/json' }, payload: text });
  const expect400 = (res: { statusCode: number; json: () => unknown }, field: string) => {
    expect(res.statusCode, JSON.stringify(res.json())).toBe(400);
    expect(res.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR', details: [{ field }] });
  };

  it('a NUL character in a text field, a JSON field, a key, a query or a path is a 400 naming it', async () => {
    expect400(await post('/leads', { name: 'Ann\u0000' }), 'body.name');
    expect400(await post('/leads', { name: 'Ann', custom: { note: 'a\u0000b' } }), 'body.custom.note');
    expect400(await post('/leads', { name: 'Ann', custom: { 'k\u0000': 1 } }), 'body.custom.k\\u0000');
    expect400(
      await t.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'a\u0000@example.com', password: 'whatever at all' } }),
      'body.email',
    );
    expect400(await t.call({ method: 'GET', url: `${base}/leads?q=%00`, auth: auth() }), 'querystring.q');
    expect400(await t.call({ method: 'GET', url: `${base}/leads/lead%00x`, auth: auth() }), 'params.id');
    expect400(await t.call({ method: 'GET', url: `/api/v1/orgs/org%00/leads`, auth: auth() }), 'params.orgId');
    // Nothing was stored.
    expect((await t.call({ method: 'GET', url: `${base}/leads`, auth: auth() })).json()).toMatchObject({ total: 0 });
  });

  it('a lone surrogate in a JSON field is a 400', async () => {
    expect400(await raw('POST', '/leads', '{"name":"Ann","custom":{"x":"\\ud800"}}'), 'body.custom.x');
    const flow = await post('/workflows', { name: 'w', nodes: [{ id: 't', type: 'trigger.manual' }], edges: [] });
    expect(flow.statusCode).toBe(201);
    expect400(await raw('POST', `/workflows/${flow.json().id}/run`, '{"input":{"a":["ok","\\udc00"]}}'), 'body.input.a.1');
    // In a query, the bytes of a lone surrogate decode to U+FFFD: text, searched as such.
    expect((await t.call({ method: 'GET', url: `${base}/leads?q=%ED%A0%80`, auth: auth() })).statusCode).toBe(200);
  });

  it('JSON nested deeper than 64 levels is a 400; 60 levels are fine', async () => {
    const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    expect400(await raw('POST', '/leads', `{"name":"Ann","custom":${deep(10_000)}}`), 'body.custom' + '.a'.repeat(63));
    expect400(await raw('POST', '/leads', '['.repeat(10_000) + ']'.repeat(10_000)), 'body' + '.0'.repeat(64));
    const ok = await raw('POST', '/leads', `{"name":"Deep","custom":${deep(60)}}`);
    expect(ok.statusCode).toBe(201);
    expect((await t.call({ method: 'GET', url: `${base}/leads/${ok.json().id}`, auth: auth() })).statusCode).toBe(200);
  });

  it('sort=__proto__, constructor or toString is a 400 listing the allowed fields, on every list route', async () => {
    for (const list of ['leads', 'workflows', 'runs', 'approvals', 'agents', 'agent-runs', 'reports', 'content']) {
      for (const sort of ['__proto__', '-constructor', 'toString']) {
        const res = await t.call({ method: 'GET', url: `${base}/${list}?sort=${sort}`, auth: auth() });
        expect(res.statusCode, `${list} ${sort}: ${res.body}`).toBe(400);
        expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'querystring.sort' }] });
        expect(res.json().message).toContain('createdAt');
      }
    }
  });

  it('year 0000 and out-of-range dates are a 400 wherever a date is taken', async () => {
    expect400(await post('/content', { platform: 'LINKEDIN', body: 'Hello', scheduledAt: '0000-01-01T00:00:00Z' }), 'body.scheduledAt');
    expect400(await post('/content', { platform: 'LINKEDIN', body: 'Hello', scheduledAt: '0001-01-01T00:00:00+14:00' }), 'body.scheduledAt');
    expect((await t.call({ method: 'GET', url: `${base}/usage?from=0000-01-01`, auth: auth() })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: `${base}/usage?from=0000-01-01T00:00:00Z&to=2026-01-01`, auth: auth() })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: `${base}/content/calendar?from=0000-01-01&to=2026-01-01`, auth: auth() })).statusCode).toBe(400);
    expect((await post('/stats/query', { metrics: ['leads.created'], granularity: 'day', from: '0000-01-01', to: '2026-01-01' })).statusCode).toBe(400);
    expect((await post('/stats/query', { metrics: ['leads.created'], granularity: 'day', from: '0000-01-01T00:00:00Z', to: '2026-01-01' })).statusCode).toBe(
      400,
    );
    // Year 1 to 9999 stay fine.
    expect((await t.call({ method: 'GET', url: `${base}/usage?from=0001-01-01&to=2026-01-01`, auth: auth() })).statusCode).toBe(200);
  });

  it('numbers that parse to Infinity (page=1e309, 1e999 in JSON) are a 400', async () => {
    expect400(await t.call({ method: 'GET', url: `${base}/agents?page=1e309`, auth: auth() }), 'querystring.page');
    expect400(await t.call({ method: 'GET', url: `${base}/leads?pageSize=-1e309`, auth: auth() }), 'querystring.pageSize');
    expect400(await raw('PUT', '/budget', '{"monthlyLimitUsd":1e999}'), 'body.monthlyLimitUsd');
  });

  it('an empty project id is a project that does not exist (404), not a dangling reference', async () => {
    expect((await post('/api-keys', { name: 'k', scopes: ['leads:read'], projectId: '' })).statusCode).toBe(404);
    expect((await post('/leads', { name: 'Ann', projectId: '' })).statusCode).toBe(404);
  });
});
