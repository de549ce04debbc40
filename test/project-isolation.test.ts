import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formData } from '../src/modules/integrations/connectors/http.ts';
import { buildTestApp, type Credentials, type TestApp } from './harness.ts';
import { Receiver } from './receiver.ts';
import { SseClient } from './sse-client.ts';
import { eventually } from './helpers.ts';

// Issue 10 item 2, CONTRACT §2: an API key bound to project 1 stays in project 1 on every route.
let t: TestApp;
let rx: Receiver;
let base: string;
let p1: string;
let p2: string;
let key: string;
let baseUrl: string;
const owner = (): Credentials => ({ token: t.orgA.token });
const bound = (): Credentials => ({ apiKey: key });
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_RETRY_DELAYS_S: '0,0,0,0', WORKFLOW_POLL_MS: '100' } });
  rx = await new Receiver().start();
  base = `/api/v1/orgs/${t.orgA.orgId}`;
  p1 = t.orgA.projectId;
  p2 = (await t.call({ method: 'POST', url: `${base}/projects`, auth: owner(), payload: { name: 'Project 2' } })).json().id;
  // Every scope, so that only the project binding can refuse.
  key = await t.key(t.orgA.orgId, ['*'], p1);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await t.close();
  await rx.stop();
});

const call = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, auth: Credentials, payload?: unknown, query?: Record<string, string>) =>
  t.call({
    method,
    url: `${base}${path}`,
    auth,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    ...(query ? { query } : {}),
  });

describe('webhook endpoints', () => {
  it("another project's endpoint is not found for every verb, and never listed", async () => {
    const hook = (path: string) => rx.url(path);
    const other = (await call('POST', '/webhook-endpoints', owner(), { url: hook('/p2'), events: ['lead.created'], projectId: p2 })).json();
    // A delivery of project 2's endpoint, to try resending it.
    await call('POST', '/leads', owner(), { name: 'P2 lead', projectId: p2 });
    const delivery = await eventually(
      async () => (await call('GET', `/webhook-endpoints/${other.id}/deliveries`, owner())).json().items[0] as { id: string } | undefined,
    );

    const list = (await call('GET', '/webhook-endpoints', bound())).json();
    expect(list.items.map((e: { id: string }) => e.id)).not.toContain(other.id);
    const ep = `/webhook-endpoints/${other.id}`;
    for (const [method, path, payload] of [
      ['GET', ep],
      ['PATCH', ep, { description: 'taken over' }],
      ['POST', `${ep}/rotate-secret`],
      ['POST', `${ep}/test`],
      ['GET', `${ep}/deliveries`],
      ['POST', `${ep}/deliveries/${delivery.id}/resend`],
      ['DELETE', ep],
    ] as const) {
      const res = await call(method, path, bound(), payload);
      expect(res.statusCode, `${method} ${path}`).toBe(404);
      expect(res.json().code).toBe('NOT_FOUND');
    }
    // Still there, unchanged, with its one delivery.
    expect((await call('GET', ep, owner())).json()).toMatchObject({ id: other.id, description: null, projectId: p2 });
    expect((await call('GET', `${ep}/deliveries`, owner())).json().total).toBe(1);
  });

  it('creates only in its project: omitted projectId is its project; null (organization-wide) or another project is 403', async () => {
    const mine = await call('POST', '/webhook-endpoints', bound(), { url: rx.url('/mine'), events: ['lead.created'] });
    expect(mine.statusCode).toBe(201);
    expect(mine.json().projectId).toBe(p1);
    for (const projectId of [null, p2]) {
      const res = await call('POST', '/webhook-endpoints', bound(), { url: rx.url('/wide'), events: ['*'], projectId });
      expect(res.statusCode, String(projectId)).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
    }
    // Nor can it move its own endpoint out of its project.
    for (const projectId of [null, p2]) {
      expect((await call('PATCH', `/webhook-endpoints/${mine.json().id}`, bound(), { projectId })).statusCode, String(projectId)).toBe(403);
    }
    expect((await call('GET', `/webhook-endpoints/${mine.json().id}`, owner())).json().projectId).toBe(p1);
  });

  it("the endpoint it creates receives its project's events, never another project's lead payloads", async () => {
    const mine = (await call('POST', '/webhook-endpoints', bound(), { url: rx.url('/leads-mine'), events: ['lead.created'] })).json();
    await call('POST', '/leads', owner(), { name: 'Secret of project 2', projectId: p2 });
    await call('POST', '/leads', owner(), { name: 'Lead of project 1', projectId: p1 });
    await eventually(async () =>
      (await call('GET', `/webhook-endpoints/${mine.id}/deliveries`, bound())).json().items.some((d: { status: string }) => d.status === 'succeeded'),
    );
    await eventually(() => rx.received.some((r) => r.url === '/leads-mine'));
    const names = rx.received.filter((r) => r.url === '/leads-mine').map((r) => (r.json as { payload: { lead: { name: string } } }).payload.lead.name);
    expect(names).toEqual(['Lead of project 1']);
    expect((await call('GET', `/webhook-endpoints/${mine.id}/deliveries`, bound())).json().total).toBe(1);
  });

  it('an organization-wide endpoint is read-only for it, and its deliveries are not found', async () => {
    const wide = (await call('POST', '/webhook-endpoints', owner(), { url: rx.url('/wide-owner'), events: ['lead.created'] })).json();
    expect(wide.projectId).toBeNull();
    await call('POST', '/leads', owner(), { name: 'For the wide endpoint', projectId: p2 });
    const delivery = await eventually(
      async () => (await call('GET', `/webhook-endpoints/${wide.id}/deliveries`, owner())).json().items[0] as { id: string } | undefined,
    );
    const ep = `/webhook-endpoints/${wide.id}`;
    expect((await call('GET', ep, bound())).json()).toMatchObject({ id: wide.id, projectId: null });
    expect((await call('GET', '/webhook-endpoints', bound())).json().items.map((e: { id: string }) => e.id)).toContain(wide.id);
    for (const [method, path, payload] of [
      ['PATCH', ep, { active: false }],
      ['POST', `${ep}/rotate-secret`],
      ['POST', `${ep}/test`],
      ['POST', `${ep}/deliveries/${delivery.id}/resend`],
      ['DELETE', ep],
    ] as const) {
      const res = await call(method, path, bound(), payload);
      expect(res.statusCode, `${method} ${path}`).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
    }
    expect((await call('GET', `${ep}/deliveries`, bound())).statusCode).toBe(404);
    expect((await call('GET', ep, owner())).json()).toMatchObject({ active: true });
  });
});

describe('media', () => {
  const upload = (auth: Credentials, fields: Record<string, string> = {}) => {
    const form = formData(fields, { name: 'file', filename: 'pixel.png', contentType: 'image/png', bytes: PNG });
    return t.call({ method: 'POST', url: `${base}/media/upload`, auth, headers: { 'content-type': form.contentType }, payload: form.body });
  };

  it("another project's upload cannot be read or deleted; an organization-wide one is read-only", async () => {
    const other = (await upload(owner(), { projectId: p2 })).json();
    expect(other.projectId).toBe(p2);
    expect((await call('GET', `/media/${other.id}`, bound())).statusCode).toBe(404);
    expect((await call('DELETE', `/media/${other.id}`, bound())).statusCode).toBe(404);
    expect((await call('GET', `/media/${other.id}`, owner())).statusCode).toBe(200);
    const wide = (await upload(owner())).json();
    expect(wide.projectId).toBeNull();
    expect((await call('GET', `/media/${wide.id}`, bound())).statusCode).toBe(200);
    expect((await call('DELETE', `/media/${wide.id}`, bound())).statusCode).toBe(403);
    expect((await call('GET', `/media/${wide.id}`, owner())).statusCode).toBe(200);
  });

  it('uploads go to its project; naming another project is 403', async () => {
    const mine = await upload(bound());
    expect(mine.statusCode).toBe(201);
    expect(mine.json().projectId).toBe(p1);
    const elsewhere = await upload(bound(), { projectId: p2 });
    expect(elsewhere.statusCode).toBe(403);
    expect(elsewhere.json().code).toBe('FORBIDDEN');
    expect((await call('DELETE', `/media/${mine.json().id}`, bound())).statusCode).toBe(204);
  });
});

describe('notifications', () => {
  const approvalIn = async (projectId: string, title: string) => {
    const wf = await call('POST', '/workflows', owner(), {
      name: title,
      projectId,
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'ask', type: 'flow.approval', params: { title } },
      ],
      edges: [{ from: 'start', to: 'ask' }],
    });
    expect(wf.statusCode, wf.body).toBe(201);
    expect((await call('POST', `/workflows/${wf.json().id}/run`, owner(), {})).statusCode).toBe(201);
  };
  const list = async (auth: Credentials, query: Record<string, string> = {}) =>
    (await call('GET', '/notifications', auth, undefined, { pageSize: '100', ...query })).json().items as {
      id: string;
      title: string;
      projectId: string | null;
      read: boolean;
    }[];
  const find = async (auth: Credentials, title: string) => eventually(async () => (await list(auth)).find((n) => n.title === `Approval needed: ${title}`));

  it("carry their project; a bound key sees only its project's", async () => {
    await approvalIn(p2, 'Project 2 launch');
    await approvalIn(p1, 'Project 1 launch');
    expect(await find(owner(), 'Project 2 launch')).toMatchObject({ projectId: p2 });
    expect(await find(bound(), 'Project 1 launch')).toMatchObject({ projectId: p1 });
    const seen = await list(bound());
    expect(seen.map((n) => n.title)).not.toContain('Approval needed: Project 2 launch');
    expect(seen.every((n) => n.projectId === p1)).toBe(true);
    const other = await find(owner(), 'Project 2 launch');
    expect((await call('POST', `/notifications/${other.id}/read`, bound())).statusCode).toBe(404);
  });

  it("the organization stream carries a bound key only its project's notifications", async () => {
    const url = `${baseUrl}${base}/events`;
    const ownerStream = await SseClient.open(url, { authorization: `Bearer ${t.orgA.token}` });
    const keyStream = await SseClient.open(url, { 'x-api-key': key });
    const titles = (stream: SseClient) => stream.events('notification').map((m) => (m.data as { title: string }).title);
    try {
      await approvalIn(p2, 'Streamed in 2');
      await approvalIn(p1, 'Streamed in 1');
      await ownerStream.until(
        () => titles(ownerStream).includes('Approval needed: Streamed in 2') && titles(ownerStream).includes('Approval needed: Streamed in 1'),
      );
      await keyStream.until(() => titles(keyStream).includes('Approval needed: Streamed in 1'));
      expect(titles(keyStream)).not.toContain('Approval needed: Streamed in 2');
    } finally {
      ownerStream.close();
      keyStream.close();
    }
  });

  it('read state is per reader: one member marking it read leaves it unread for the others', async () => {
    await approvalIn(p1, 'Per reader');
    const member = await t.member(t.orgA.orgId, 'member');
    const byOwner = await find(owner(), 'Per reader');
    expect(byOwner.read).toBe(false);
    expect((await call('POST', `/notifications/${byOwner.id}/read`, { token: member.token })).statusCode).toBe(204);
    expect(await find({ token: member.token }, 'Per reader')).toMatchObject({ read: true });
    expect(await find(owner(), 'Per reader')).toMatchObject({ read: false });
    expect((await list(owner(), { unread: 'true' })).map((n) => n.id)).toContain(byOwner.id);
    expect((await list({ token: member.token }, { unread: 'true' })).map((n) => n.id)).not.toContain(byOwner.id);
    // An API key has its own read state too.
    expect(await find(bound(), 'Per reader')).toMatchObject({ read: false });
    expect((await call('POST', `/notifications/${byOwner.id}/read`, bound())).statusCode).toBe(204);
    expect(await find(bound(), 'Per reader')).toMatchObject({ read: true });
    expect(await find(owner(), 'Per reader')).toMatchObject({ read: false });
  });
});

describe('integrations', () => {
  it('an organization-wide integration is read-only; it cannot connect one', async () => {
    const wide = (await call('POST', '/integrations', owner(), { provider: 'x', name: 'Org X', credentials: { accessToken: 'ok' } })).json();
    expect(wide.projectId).toBeNull();
    expect((await call('GET', `/integrations/${wide.id}`, bound())).statusCode).toBe(200);
    const removed = await call('DELETE', `/integrations/${wide.id}`, bound());
    expect(removed.statusCode).toBe(403);
    expect(removed.json().code).toBe('FORBIDDEN');
    expect((await call('GET', `/integrations/${wide.id}`, owner())).statusCode).toBe(200);
    expect(
      (await call('POST', '/integrations', bound(), { provider: 'x', name: 'Wide', projectId: null, credentials: { accessToken: 'ok' } })).statusCode,
    ).toBe(403);
    expect((await call('POST', '/integrations', bound(), { provider: 'x', name: 'P2', projectId: p2, credentials: { accessToken: 'ok' } })).statusCode).toBe(
      403,
    );
    const mine = await call('POST', '/integrations', bound(), { provider: 'x', name: 'Mine', credentials: { accessToken: 'ok' } });
    expect(mine.json()).toMatchObject({ projectId: p1 });
    expect((await call('DELETE', `/integrations/${mine.json().id}`, bound())).statusCode).toBe(204);
  });
});

describe('organization-level resources and naming another project', () => {
  it('the budget, members and API keys are refused (403)', async () => {
    for (const [method, path, payload] of [
      ['GET', '/budget'],
      ['PUT', '/budget', { monthlyLimitUsd: 1 }],
      ['GET', '/members'],
      ['POST', '/members', { email: t.orgB.ownerEmail, role: 'member' }],
      ['GET', '/api-keys'],
      ['POST', '/api-keys', { name: 'escalate', scopes: ['*'] }],
    ] as const) {
      const res = await call(method, path, bound(), payload);
      expect(res.statusCode, `${method} ${path}`).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
    }
    // An unbound key with every scope still manages the budget.
    expect((await call('GET', '/budget', { apiKey: t.orgA.apiKey })).statusCode).toBe(200);
    expect((await call('GET', '/budget', owner())).json().monthlyLimitUsd).toBeNull();
  });

  it('naming another project in a query or a body is 403 on every route', async () => {
    for (const [method, path, payload, query] of [
      ['GET', '/leads', undefined, { projectId: p2 }],
      ['GET', '/leads/stats', undefined, { projectId: p2 }],
      ['GET', '/workflows', undefined, { projectId: p2 }],
      ['GET', '/content', undefined, { projectId: p2 }],
      ['POST', '/leads', { name: 'Elsewhere', projectId: p2 }],
      ['POST', '/workflows', { name: 'Elsewhere', projectId: p2, nodes: [{ id: 'start', type: 'trigger.manual' }], edges: [] }],
    ] as const) {
      const res = await call(method, path, bound(), payload, query);
      expect(res.statusCode, `${method} ${path}`).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
    }
    // Its own project named explicitly is fine.
    expect((await call('GET', '/leads', bound(), undefined, { projectId: p1 })).statusCode).toBe(200);
  });
});
