import { createHmac, timingSafeEqual } from 'node:crypto';
import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { Receiver, type Received } from '../../../test/receiver.ts';
import { outboundRequest } from '../../platform/http-client.ts';
import { webhookEndpoints } from './tables.ts';
import { eventually } from '../../../test/helpers.ts';

let t: TestApp;
let rx: Receiver;
let base: string;

beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_RETRY_DELAYS_S: '0,0,0,0', WEBHOOK_TIMEOUT_MS: '400' } });
  rx = await new Receiver().start();
  base = `/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  await t.close();
  await rx.stop();
});
afterEach(async () => {
  // Each test starts with no endpoints and an answering receiver.
  await t.database.db.delete(webhookEndpoints);
  rx.behaviour = () => ({ status: 200, body: 'ok' });
  rx.received.length = 0;
});

const owner = () => ({ token: t.orgA.token });
async function endpoint(body: Record<string, unknown>) {
  const res = await t.call({ method: 'POST', url: `${base}/webhook-endpoints`, auth: owner(), payload: { url: rx.url(), events: ['*'], ...body } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; secret: string };
}
const createLead = (payload: Record<string, unknown>, org = t.orgA) =>
  t.call({ method: 'POST', url: `/api/v1/orgs/${org.orgId}/leads`, auth: { token: org.token }, payload });
const deliveries = async (id: string, query: Record<string, string> = {}) =>
  (await t.call({ method: 'GET', url: `${base}/webhook-endpoints/${id}/deliveries`, auth: owner(), query })).json();

function verify(req: Received, secret: string): boolean {
  const ts = String(req.headers['x-service-timestamp']);
  const expected = 'sha256=' + createHmac('sha256', secret).update(`${ts}.${req.raw}`).digest('hex');
  const got = String(req.headers['x-service-signature']);
  return got.length === expected.length && timingSafeEqual(Buffer.from(got), Buffer.from(expected));
}

describe('endpoint management', () => {
  it('creates with a generated secret shown once, stored encrypted; lists, gets, updates, rotates, deletes', async () => {
    const created = await endpoint({ description: 'CRM', events: ['lead.created'] });
    expect(created.id).toMatch(/^whe_/);
    expect(created.secret).toMatch(/^whsec_/);
    const [row] = await t.database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, created.id));
    expect(row!.secretSealed).not.toContain(created.secret);
    const got = await t.call({ method: 'GET', url: `${base}/webhook-endpoints/${created.id}`, auth: owner() });
    expect(got.json()).toMatchObject({ id: created.id, url: rx.url(), events: ['lead.created'], active: true, description: 'CRM' });
    expect(got.json().secret).toBeUndefined();
    const list = await t.call({ method: 'GET', url: `${base}/webhook-endpoints`, auth: owner() });
    expect(list.json()).toMatchObject({ total: 1, items: [expect.objectContaining({ id: created.id })] });
    expect(JSON.stringify(list.json())).not.toContain(created.secret);
    const patched = await t.call({
      method: 'PATCH',
      url: `${base}/webhook-endpoints/${created.id}`,
      auth: owner(),
      payload: { events: ['*'], description: null },
    });
    expect(patched.json()).toMatchObject({ events: ['*'], description: null });
    const rotated = await t.call({ method: 'POST', url: `${base}/webhook-endpoints/${created.id}/rotate-secret`, auth: owner() });
    expect(rotated.json().secret).toMatch(/^whsec_/);
    expect(rotated.json().secret).not.toBe(created.secret);
    await createLead({ name: 'After rotation' });
    await rx.waitFor(1);
    expect(verify(rx.received[0]!, rotated.json().secret)).toBe(true);
    expect(verify(rx.received[0]!, created.secret)).toBe(false);
    expect((await t.call({ method: 'DELETE', url: `${base}/webhook-endpoints/${created.id}`, auth: owner() })).statusCode).toBe(204);
    expect((await t.call({ method: 'GET', url: `${base}/webhook-endpoints/${created.id}`, auth: owner() })).statusCode).toBe(404);
  });

  it('keeps a given secret and validates input', async () => {
    const created = await endpoint({ secret: 'my-own-secret-value' });
    expect(created.secret).toBe('my-own-secret-value');
    for (const payload of [
      { url: 'not a url', events: ['*'] },
      { url: rx.url(), events: [] },
      { url: rx.url(), events: ['Bad Event'] },
      { url: 'ftp://x.example/', events: ['*'] },
    ]) {
      const res = await t.call({ method: 'POST', url: `${base}/webhook-endpoints`, auth: owner(), payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    const otherProject = await t.call({
      method: 'POST',
      url: `${base}/webhook-endpoints`,
      auth: owner(),
      payload: { url: rx.url(), events: ['*'], projectId: t.orgB.projectId },
    });
    expect(otherProject.statusCode).toBe(404);
  });

  it('accepts only the platform event names or *, naming the unknown one on create and update', async () => {
    const create = (events: string[]) => t.call({ method: 'POST', url: `${base}/webhook-endpoints`, auth: owner(), payload: { url: rx.url(), events } });
    const nope = await create(['lead.created', 'lead.nope']);
    expect(nope.statusCode).toBe(400);
    expect(nope.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.events[1]', message: "unknown event name 'lead.nope'" }] });
    expect(nope.json().message).toContain("'lead.nope'");
    // Names of other webhook paths (CRM sync, webhookOut) are not platform events either.
    expect((await create(['lead.synced'])).json().message).toContain("'lead.synced'");
    expect((await t.call({ method: 'GET', url: `${base}/webhook-endpoints`, auth: owner() })).json().total).toBe(0);

    const all = [
      'lead.created',
      'lead.updated',
      'lead.qualified',
      'lead.replied',
      'message.received',
      'message.sent',
      'conversation.opened',
      'conversation.handoff',
      'conversation.closed',
      'post.created',
      'post.approved',
      'post.published',
      'post.failed',
      'campaign.started',
      'campaign.finished',
      'workflow.run.started',
      'workflow.run.finished',
      'workflow.run.failed',
      'agent.run.finished',
      'agent.report.created',
      'analytics.synced',
      'analytics.threshold',
      'integration.connected',
      'integration.error',
      'approval.requested',
      'approval.resolved',
      'budget.warning',
      'budget.exceeded',
    ];
    const created = await create(all);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().events).toEqual(all);

    const patch = (events: string[]) => t.call({ method: 'PATCH', url: `${base}/webhook-endpoints/${created.json().id}`, auth: owner(), payload: { events } });
    const bad = await patch(['*', 'post.deleted', 'lead.nope']);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/'post\.deleted', 'lead\.nope'/);
    expect(bad.json().details.map((d: { field: string }) => d.field)).toEqual(['body.events[1]', 'body.events[2]']);
    expect((await t.call({ method: 'GET', url: `${base}/webhook-endpoints/${created.json().id}`, auth: owner() })).json().events).toEqual(all);
    const star = await patch(['*']);
    expect(star.statusCode).toBe(200);
    expect(star.json().events).toEqual(['*']);
  });

  it('guards every route: cross-organization 404, scope and role 403', async () => {
    const created = await endpoint({});
    const routes = [
      ['GET', `/webhook-endpoints/${created.id}`],
      ['PATCH', `/webhook-endpoints/${created.id}`],
      ['DELETE', `/webhook-endpoints/${created.id}`],
      ['POST', `/webhook-endpoints/${created.id}/rotate-secret`],
      ['POST', `/webhook-endpoints/${created.id}/test`],
      ['GET', `/webhook-endpoints/${created.id}/deliveries`],
      ['POST', `/webhook-endpoints/${created.id}/deliveries/dlv_x/resend`],
    ] as const;
    for (const [method, path] of routes) {
      const res = await t.call({ method, url: `${base}${path}`, auth: { token: t.orgB.token }, payload: method === 'PATCH' ? { active: false } : undefined });
      expect(res.statusCode, `${method} ${path}`).toBe(404);
      const viaOwnOrg = await t.call({
        method,
        url: `/api/v1/orgs/${t.orgB.orgId}${path}`,
        auth: { token: t.orgB.token },
        payload: method === 'PATCH' ? { active: false } : undefined,
      });
      expect(viaOwnOrg.statusCode, `B ${method} ${path}`).toBe(404);
    }
    const readKey = await t.key(t.orgA.orgId, ['webhooks:read']);
    expect((await t.call({ method: 'GET', url: `${base}/webhook-endpoints`, auth: { apiKey: readKey } })).statusCode).toBe(200);
    const denied = await t.call({ method: 'POST', url: `${base}/webhook-endpoints`, auth: { apiKey: readKey }, payload: { url: rx.url(), events: ['*'] } });
    expect(denied.json().code).toBe('INSUFFICIENT_SCOPE');
    const leadsKey = await t.key(t.orgA.orgId, ['leads:read']);
    expect((await t.call({ method: 'GET', url: `${base}/webhook-endpoints`, auth: { apiKey: leadsKey } })).statusCode).toBe(403);
    const writeKey = await t.key(t.orgA.orgId, ['webhooks:write']);
    expect((await t.call({ method: 'POST', url: `${base}/webhook-endpoints/${created.id}/rotate-secret`, auth: { apiKey: writeKey } })).statusCode).toBe(200);
    const member = await t.member(t.orgA.orgId, 'member');
    const byMember = await t.call({
      method: 'POST',
      url: `${base}/webhook-endpoints`,
      auth: { token: member.token },
      payload: { url: rx.url(), events: ['*'] },
    });
    expect(byMember.statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${base}/webhook-endpoints`, auth: { token: member.token } })).statusCode).toBe(200);
  });
});

describe('delivery', () => {
  it('POSTs the envelope with the five headers and a signature over the exact bytes', async () => {
    const { secret } = await endpoint({});
    const lead = (await createLead({ name: 'Signed', email: 'signed@example.com' })).json();
    await rx.waitFor(1);
    const req = rx.received[0]!;
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('Service-Webhooks/1.0');
    expect(req.headers['x-service-event']).toBe('lead.created');
    expect(Math.abs(Number(req.headers['x-service-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(String(req.headers['x-service-delivery'])).toMatch(/^dlv_/);
    expect(verify(req, secret)).toBe(true);
    expect(req.json).toMatchObject({
      type: 'lead.created',
      organizationId: t.orgA.orgId,
      projectId: t.orgA.projectId,
      payload: { lead: { id: lead.id, email: 'signed@example.com' } },
    });
    expect((req.json as { id: string }).id).toMatch(/^evt_/);
    expect((req.json as { at: string }).at).toMatch(/Z$/);
    const history = await eventually(async () => {
      const d = await deliveries((await t.call({ method: 'GET', url: `${base}/webhook-endpoints`, auth: owner() })).json().items[0].id);
      return d.items[0]?.status === 'succeeded' ? d : null;
    });
    expect(history.items[0]).toMatchObject({
      eventType: 'lead.created',
      attempt: 1,
      status: 'succeeded',
      statusCode: 200,
      responseBodyPreview: 'ok',
      id: req.headers['x-service-delivery'],
    });
  });

  it('filters by event name and project; * gets everything; inactive endpoints accumulate nothing', async () => {
    const project = (await t.call({ method: 'POST', url: `${base}/projects`, auth: owner(), payload: { name: 'Filtered' } })).json();
    const qualifiedOnly = await endpoint({ events: ['lead.qualified'], description: 'q' });
    const projectOnly = await endpoint({ events: ['*'], projectId: project.id, description: 'p' });
    const all = await endpoint({ events: ['*'], description: 'all' });
    const inactive = await endpoint({ events: ['*'], active: false, description: 'off' });
    const lead = (await createLead({ name: 'Filter me' })).json();
    await t.call({ method: 'PATCH', url: `${base}/leads/${lead.id}`, auth: owner(), payload: { status: 'QUALIFIED' } });
    await createLead({ name: 'In project', projectId: project.id });
    await createLead({ name: 'Other org' }, t.orgB);
    // all: created + updated + qualified + created(project) = 4; qualifiedOnly: 1; projectOnly: 1
    await rx.waitFor(6);
    await new Promise((r) => setTimeout(r, 300));
    const counts = async (id: string) => (await deliveries(id)).total;
    expect(await counts(all.id)).toBe(4);
    expect(await counts(qualifiedOnly.id)).toBe(1);
    expect(await counts(projectOnly.id)).toBe(1);
    expect(await counts(inactive.id)).toBe(0);
    expect(rx.received).toHaveLength(6);
    expect(rx.received.map((r) => r.headers['x-service-event']).sort()).toEqual([
      'lead.created',
      'lead.created',
      'lead.created',
      'lead.qualified',
      'lead.qualified',
      'lead.updated',
    ]);
    // An event sent to two endpoints carries the same whole envelope to both (its payload is read
    // once per claimed batch and shared by its deliveries).
    const bodies = new Map<string, string[]>();
    for (const r of rx.received) bodies.set((r.json as { id: string }).id, [...(bodies.get((r.json as { id: string }).id) ?? []), r.raw]);
    const shared = [...bodies.values()].filter((list) => list.length === 2);
    expect(shared).toHaveLength(2);
    for (const [a, b] of shared) {
      expect(a).toBe(b);
      expect(JSON.parse(a!)).toMatchObject({ payload: { lead: { id: expect.any(String) } } });
    }
  });

  it('retries a 500 with the same envelope id and a new delivery id each attempt', async () => {
    const ep = await endpoint({});
    rx.behaviour = (_req, n) => (n <= 2 ? { status: 500, body: 'boom' } : { status: 204 });
    await createLead({ name: 'Retry me' });
    await rx.waitFor(3);
    const ids = rx.received.map((r) => (r.json as { id: string }).id);
    expect(new Set(ids).size).toBe(1);
    expect(new Set(rx.received.map((r) => r.headers['x-service-delivery'])).size).toBe(3);
    const history = await eventually(async () => {
      const d = await deliveries(ep.id);
      return d.items.some((i: { status: string }) => i.status === 'succeeded') ? d : null;
    });
    expect(history.items.map((i: { attempt: number; status: string; statusCode: number }) => [i.attempt, i.status, i.statusCode])).toEqual([
      [3, 'succeeded', 204],
      [2, 'failed', 500],
      [1, 'failed', 500],
    ]);
    expect(history.items[2].responseBodyPreview).toBe('boom');
    const failedOnly = await deliveries(ep.id, { status: 'failed' });
    expect(failedOnly.total).toBe(2);
  });

  it('retries after a time-out, and gives up after 5 attempts', async () => {
    const ep = await endpoint({});
    rx.behaviour = () => ({ status: 200, delayMs: 1000 });
    await createLead({ name: 'Slow receiver' });
    await rx.waitFor(5, 15_000);
    const history = await eventually(async () => {
      const d = await deliveries(ep.id);
      return d.total === 5 && d.items.every((i: { status: string }) => i.status === 'failed') ? d : null;
    }, 15_000);
    expect(history.items[0].error).toMatch(/no answer within 400 ms/);
    await new Promise((r) => setTimeout(r, 300));
    expect((await deliveries(ep.id)).total).toBe(5);
  });

  it('counts a 302 as a failure and does not follow it', async () => {
    const ep = await endpoint({});
    rx.behaviour = (req) => (req.url === '/hook' ? { status: 302, headers: { location: rx.url('/elsewhere') } } : { status: 200 });
    await createLead({ name: 'Redirected' });
    const history = await eventually(async () => {
      const d = await deliveries(ep.id);
      return d.total >= 5 && d.items.every((i: { status: string }) => i.status === 'failed') ? d : null;
    });
    expect(history.items[0]).toMatchObject({ statusCode: 302, status: 'failed' });
    expect(rx.received.some((r) => r.url === '/elsewhere')).toBe(false);
  });

  it('410 disables the endpoint at once, stops retries and notifies the owner', async () => {
    const ep = await endpoint({});
    rx.behaviour = () => ({ status: 410 });
    await createLead({ name: 'Gone' });
    const disabled = await eventually(async () => {
      const got = (await t.call({ method: 'GET', url: `${base}/webhook-endpoints/${ep.id}`, auth: owner() })).json();
      return got.active === false ? got : null;
    });
    expect(disabled.disabledReason).toMatch(/410/);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received).toHaveLength(1);
    await createLead({ name: 'After disable' });
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received).toHaveLength(1);
    const notes = (await t.call({ method: 'GET', url: `${base}/notifications`, auth: owner(), query: { unread: 'true' } })).json();
    expect(notes.items.find((n: { kind: string; link: string }) => n.kind === 'webhook.disabled' && n.link.endsWith(ep.id))).toBeDefined();
    // Re-enabling resets the count and delivers again.
    rx.behaviour = () => ({ status: 200 });
    const enabled = await t.call({ method: 'PATCH', url: `${base}/webhook-endpoints/${ep.id}`, auth: owner(), payload: { active: true } });
    expect(enabled.json()).toMatchObject({ active: true, consecutiveFailures: 0, disabledReason: null });
    await createLead({ name: 'Back again' });
    await rx.waitFor(2);
  });

  it('100 consecutive failed deliveries deactivate the endpoint; a success resets the count', async () => {
    const ep = await endpoint({});
    rx.behaviour = (_req, n) => (n === 3 ? { status: 200 } : { status: 503 });
    await createLead({ name: 'warm-up' });
    await eventually(
      async () =>
        (await t.call({ method: 'GET', url: `${base}/webhook-endpoints/${ep.id}`, auth: owner() })).json().consecutiveFailures === 0 && rx.received.length >= 3,
    );
    rx.behaviour = () => ({ status: 503 });
    for (let i = 0; i < 20; i++) await createLead({ name: `failing ${i}` });
    const disabled = await eventually(async () => {
      const got = (await t.call({ method: 'GET', url: `${base}/webhook-endpoints/${ep.id}`, auth: owner() })).json();
      return got.active === false ? got : null;
    }, 30_000);
    expect(disabled.consecutiveFailures).toBe(100);
    expect(disabled.disabledReason).toBe('100 consecutive failed deliveries');
    expect((await deliveries(ep.id, { status: 'pending' })).total).toBe(0);
    const notes = (await t.call({ method: 'GET', url: `${base}/notifications`, auth: owner() })).json();
    expect(notes.items.some((n: { kind: string; body: string }) => n.kind === 'webhook.disabled' && n.body.includes('100 consecutive'))).toBe(true);
  }, 60_000);

  it('resends a delivery: 202, new delivery id, same envelope id', async () => {
    const ep = await endpoint({});
    await createLead({ name: 'Resend me' });
    await rx.waitFor(1);
    const first = await eventually(async () => (await deliveries(ep.id)).items.find((d: { status: string }) => d.status === 'succeeded'));
    const res = await t.call({ method: 'POST', url: `${base}/webhook-endpoints/${ep.id}/deliveries/${first.id}/resend`, auth: owner() });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ eventId: first.eventId, attempt: 1, status: 'pending' });
    expect(res.json().id).not.toBe(first.id);
    await rx.waitFor(2);
    expect((rx.received[1]!.json as { id: string }).id).toBe((rx.received[0]!.json as { id: string }).id);
    expect(rx.received[1]!.headers['x-service-delivery']).toBe(res.json().id);
    expect((await t.call({ method: 'POST', url: `${base}/webhook-endpoints/${ep.id}/deliveries/dlv_missing/resend`, auth: owner() })).statusCode).toBe(404);
  });

  it('test sends a signed ping and shows status, duration and body preview', async () => {
    const ep = await endpoint({});
    rx.behaviour = () => ({ status: 202, body: 'pong from receiver' });
    const res = await t.call({ method: 'POST', url: `${base}/webhook-endpoints/${ep.id}/test`, auth: owner() });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, statusCode: 202, responseBodyPreview: 'pong from receiver' });
    expect(typeof res.json().durationMs).toBe('number');
    expect(rx.received[0]!.headers['x-service-event']).toBe('ping');
    expect(verify(rx.received[0]!, ep.secret)).toBe(true);
    expect(rx.received[0]!.json).toMatchObject({ type: 'ping', organizationId: t.orgA.orgId });
    rx.behaviour = () => ({ status: 500, body: 'down' });
    const failed = await t.call({ method: 'POST', url: `${base}/webhook-endpoints/${ep.id}/test`, auth: owner() });
    expect(failed.json()).toMatchObject({ ok: false, statusCode: 500, responseBodyPreview: 'down' });
  });

  it('shortens envelopes over 256 KB to valid JSON keeping every id', async () => {
    const { secret } = await endpoint({});
    const big = 'x'.repeat(120_000);
    const lead = (await createLead({ name: 'Big', custom: { a: big, b: big, c: big, nested: { d: big, leadId: 'lead_keep_me' } } })).json();
    await rx.waitFor(1);
    const req = rx.received[0]!;
    expect(Buffer.byteLength(req.raw)).toBeLessThanOrEqual(256 * 1024);
    expect(verify(req, secret)).toBe(true);
    const body = req.json as { id: string; truncated: boolean; payload: { lead: { id: string; custom: { nested: { leadId: string } } } } };
    expect(body.truncated).toBe(true);
    expect(body.payload.lead.id).toBe(lead.id);
    expect(body.payload.lead.custom.nested.leadId).toBe('lead_keep_me');
    expect(body.id).toMatch(/^evt_/);
  });
});

describe('SSRF guard when private targets are not allowed', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'false' } });
  });
  afterAll(async () => {
    await strict.close();
  });

  it('refuses loopback, 10/8, metadata, IPv6 loopback, a name resolving to loopback and plain http', async () => {
    const urls = [
      'https://127.0.0.1/hook',
      'https://10.1.2.3/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/hook',
      `https://${hostname()}/hook`,
      'https://localhost/hook',
      'https://192.168.1.1/',
      'https://[::ffff:127.0.0.1]/',
      'http://example.com/hook',
    ];
    for (const url of urls) {
      const res = await strict.call({
        method: 'POST',
        url: `/api/v1/orgs/${strict.orgA.orgId}/webhook-endpoints`,
        auth: { token: strict.orgA.token },
        payload: { url, events: ['*'] },
      });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
  });

  it('checks the resolved address again when connecting (DNS rebinding) and never follows redirects', async () => {
    await expect(outboundRequest({ url: `https://${hostname()}:${rx.port}/`, allowPrivate: false })).rejects.toMatchObject({ code: 'BLOCKED' });
    await expect(outboundRequest({ url: `http://127.0.0.1:${rx.port}/`, allowPrivate: false })).rejects.toMatchObject({ code: 'BLOCKED' });
    rx.behaviour = () => ({ status: 301, headers: { location: 'http://127.0.0.1:1/' } });
    const res = await outboundRequest({ url: `http://${hostname()}:${rx.port}/`, allowPrivate: true });
    expect(res.status).toBe(301);
  });
});
