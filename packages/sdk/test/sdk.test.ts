import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { eventually } from '../../../test/helpers.ts';
import { Receiver } from '../../../test/receiver.ts';
import { api } from '../../../test/workflows.ts';
import {
  ApiError,
  createClient,
  signWebhook,
  streamAgentRunEvents,
  streamOrgEvents,
  streamRunEvents,
  verifyWebhook,
  WebhookVerificationError,
  type AgentStreamEvent,
  type AutomationClient,
  type RunStreamEvent,
} from '../src/index.ts';
import { CuttingProxy, listeningApp } from './server.ts';

let t: TestApp;
let url: string;
let client: AutomationClient;

beforeAll(async () => {
  ({ t, url } = await listeningApp());
  client = createClient({ baseUrl: url, apiKey: t.orgA.apiKey, orgId: t.orgA.orgId });
});
afterAll(async () => {
  await t.close();
});

describe('the typed client', () => {
  it('creates and lists with pagination, per operation and by path', async () => {
    const tag = `sdk-${Date.now()}`;
    const created = [];
    for (const n of [1, 2, 3]) created.push(await client.ops.createLead({ body: { name: `Lead ${n}`, email: `sdk-${n}-${tag}@example.com`, tags: [tag] } }));
    expect(created.map((l) => l.tags)).toEqual([[tag], [tag], [tag]]);

    const page1 = await client.ops.listLeads({ query: { tags: tag, pageSize: 2, page: 1, sort: 'createdAt' } });
    const page2 = await client.ops.listLeads({ query: { tags: tag, pageSize: 2, page: 2, sort: 'createdAt' } });
    expect(page1.total).toBe(3);
    expect([...page1.items, ...page2.items].map((l) => l.email)).toEqual(created.map((l) => l.email));

    // The same through openapi-fetch's path-typed call.
    const { data, response } = await client.GET('/api/v1/orgs/{orgId}/leads/{id}', { params: { path: { orgId: t.orgA.orgId, id: created[0]!.id } } });
    expect(response.status).toBe(200);
    expect(data?.name).toBe('Lead 1');

    // A duplicate merges (200 with deduplicated), as the API says.
    const again = await client.ops.createLead({ body: { email: created[0]!.email!.toUpperCase(), company: 'Acme' } });
    expect(again.id).toBe(created[0]!.id);
  });

  it("surfaces the spec's error body as an ApiError", async () => {
    const missing = await client.ops.getLead({ path: { id: 'lead_00000000000000000000000000' } }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect((missing as ApiError).status).toBe(404);
    expect((missing as ApiError).code).toBe('NOT_FOUND');
    expect((missing as ApiError).body.statusCode).toBe(404);

    const invalid = (await client.ops.createLead({ body: { name: 'x', email: 'not an email' } }).catch((e: unknown) => e)) as ApiError;
    expect(invalid.status).toBe(400);
    expect(invalid.code).toBe('VALIDATION_ERROR');

    // Another organization's lead is not found; a wrong key is 401.
    const other = await createClient({ baseUrl: url, apiKey: t.orgB.apiKey, orgId: t.orgB.orgId }).ops.createLead({ body: { name: 'B only' } });
    expect(((await client.ops.getLead({ path: { id: other.id } }).catch((e: unknown) => e)) as ApiError).status).toBe(404);
    const anonymous = createClient({ baseUrl: url, apiKey: 'sk_wrong', orgId: t.orgA.orgId });
    expect(((await anonymous.ops.listLeads().catch((e: unknown) => e)) as ApiError).code).toBe('UNAUTHORIZED');
  });

  it('renews a session from its refresh token and hands back the rotated one', async () => {
    const login = await createClient({ baseUrl: url }).ops.login({ body: { email: t.orgA.ownerEmail, password: t.orgA.password } });
    const seen: string[] = [];
    const session = createClient({ baseUrl: url, refreshToken: login.tokens.refreshToken, onTokens: (tokens) => void seen.push(tokens.refreshToken!) });
    const me = await session.ops.getCurrentUser();
    expect(me.user.email).toBe(t.orgA.ownerEmail);
    expect(seen).toHaveLength(1);
    expect(seen[0]).not.toBe(login.tokens.refreshToken);
    // The access token is reused while it is valid: no second renewal.
    await session.ops.listOrgs();
    expect(seen).toHaveLength(1);
  });
});

describe('the stream helpers', () => {
  it('follows a run stream across a cut connection: every event once, in order, to run.finished', async () => {
    const w = api(t);
    const wf = await w.create(
      [
        { id: 'start', type: 'trigger.manual' },
        { id: 'a', type: 'data.set', params: { fields: { a: 1 } } },
        { id: 'wait', type: 'flow.delay', params: { seconds: 1 } },
        { id: 'b', type: 'data.set', params: { fields: { b: 2 } } },
      ],
      [
        { from: 'start', to: 'a' },
        { from: 'a', to: 'wait' },
        { from: 'wait', to: 'b' },
      ],
    );
    const proxy = new CuttingProxy(url, 3);
    const proxied = createClient({ baseUrl: await proxy.start(), apiKey: t.orgA.apiKey, orgId: t.orgA.orgId });
    try {
      const run = await proxied.ops.runWorkflow({ path: { id: wf.id }, body: {} });
      const received: RunStreamEvent[] = [];
      const reconnects: (number | undefined)[] = [];
      for await (const event of streamRunEvents(proxied, run.id, { minDelayMs: 50, onReconnect: ({ since }) => reconnects.push(since) })) received.push(event);

      expect(proxy.cuts).toBe(1);
      expect(reconnects.length).toBeGreaterThanOrEqual(1);
      const stored = await w.events(run.id);
      expect(received.map((e) => e.id)).toEqual(stored.map((e) => e.seq));
      expect(received.map((e) => e.event)).toEqual(stored.map((e) => e.type));
      const last = received.at(-1)!;
      expect(last.event).toBe('run.finished');
      if (last.event === 'run.finished') expect(last.data.status).toBe('SUCCEEDED');
      // Part of it came live, after the cut (the delay was still running).
      expect(received.findIndex((e) => e.event === 'node.finished' && 'nodeId' in e.data && e.data.nodeId === 'b')).toBeGreaterThan(2);

      // Resuming after the end gives nothing more and ends (the server closes; the run is final).
      const after: RunStreamEvent[] = [];
      for await (const event of streamRunEvents(client, run.id, { since: last.id })) after.push(event);
      expect(after).toEqual([]);
    } finally {
      await proxy.stop();
    }
  });

  it('follows an agent run stream across a cut connection: each step once, then done', async () => {
    await client.ops.createLead({ body: { name: 'Grace Hopper', email: `grace-${Date.now()}@navy.example`, company: 'Navy', website: 'navy.example' } });
    const proxy = new CuttingProxy(url, 2);
    const proxied = createClient({ baseUrl: await proxy.start(), apiKey: t.orgA.apiKey, orgId: t.orgA.orgId });
    try {
      const run = await proxied.ops.runAdHocAgent({ body: { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads' } });
      const received: AgentStreamEvent[] = [];
      for await (const event of streamAgentRunEvents(proxied, run.id, { minDelayMs: 50 })) received.push(event);
      expect(proxy.cuts).toBe(1);
      const done = received.at(-1)!;
      expect(done.event).toBe('done');
      if (done.event === 'done') expect(done.data.run).toMatchObject({ id: run.id, status: 'succeeded' });
      const stored = await client.ops.getAgentRun({ path: { id: run.id } });
      const indexes = received.filter((e) => e.event === 'step').map((e) => e.id);
      expect(indexes).toEqual((stored.steps as { index: number }[]).map((s) => s.index));
      expect(indexes.length).toBeGreaterThan(2);
    } finally {
      await proxy.stop();
    }
  });

  it("answers an unknown run's stream with the API's 404", async () => {
    const error = await (async () => {
      for await (const _ of streamRunEvents(client, 'run_00000000000000000000000000')) void _;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(404);
  });

  it('keeps the organization stream open across a drop and stops on abort', async () => {
    const proxy = new CuttingProxy(url, 1);
    const proxied = createClient({ baseUrl: await proxy.start(), apiKey: t.orgA.apiKey, orgId: t.orgA.orgId });
    const controller = new AbortController();
    const leads: string[] = [];
    const consumer = (async () => {
      for await (const event of streamOrgEvents(proxied, { signal: controller.signal, minDelayMs: 50 })) {
        if (event.event === 'lead.created') leads.push((event.data as unknown as { payload: { lead: { id: string } } }).payload.lead.id);
      }
    })();
    try {
      // The stream is live only: keep creating leads until two arrive, the second after the cut.
      await eventually(
        async () => {
          await client.ops.createLead({ body: { name: `Stream ${Date.now()}-${Math.random()}` } });
          return leads.length >= 2 && proxy.cuts === 1;
        },
        15_000,
        300,
      );
      expect(new Set(leads).size).toBe(leads.length);
    } finally {
      controller.abort();
      await consumer;
      await proxy.stop();
    }
  });
});

describe('the webhook verifier', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await receiver.stop();
  });

  it('accepts a real delivery and refuses a tampered body, a wrong secret and an old timestamp', async () => {
    const endpoint = await client.ops.createWebhookEndpoint({ body: { url: receiver.url('/sdk'), events: ['lead.created'] } });
    const secret = (endpoint as { secret: string }).secret;
    const lead = await client.ops.createLead({ body: { name: 'Webhook lead', email: `hook-${Date.now()}@example.com` } });
    await eventually(() =>
      receiver.received.find((r) => r.url === '/sdk' && (r.json as { payload?: { lead?: { id: string } } })?.payload?.lead?.id === lead.id),
    );
    const delivery = receiver.received.find((r) => r.url === '/sdk' && (r.json as { payload?: { lead?: { id: string } } })?.payload?.lead?.id === lead.id)!;

    const verified = verifyWebhook<{ lead: { id: string } }>({ body: delivery.raw, headers: delivery.headers, secret });
    expect(verified.event.type).toBe('lead.created');
    expect(verified.event.payload.lead.id).toBe(lead.id);
    expect(verified.deliveryId).toMatch(/^dlv_/);
    // Bytes work as well as text; a Fetch Headers object as well as Node's headers; a rotated-out secret beside the right one.
    expect(
      verifyWebhook({ body: Buffer.from(delivery.raw), headers: new Headers(delivery.headers as Record<string, string>), secret: ['whsec_old', secret] }).event
        .id,
    ).toBe(verified.event.id);

    const refuse = (options: Parameters<typeof verifyWebhook>[0]) => {
      try {
        verifyWebhook(options);
      } catch (error) {
        expect(error).toBeInstanceOf(WebhookVerificationError);
        return (error as WebhookVerificationError).code;
      }
      throw new Error('accepted');
    };
    expect(refuse({ body: delivery.raw.replace(lead.id, `${lead.id.slice(0, -1)}X`), headers: delivery.headers, secret })).toBe('INVALID_SIGNATURE');
    expect(refuse({ body: JSON.stringify(JSON.parse(delivery.raw), null, 1), headers: delivery.headers, secret })).toBe('INVALID_SIGNATURE');
    expect(refuse({ body: delivery.raw, headers: delivery.headers, secret: 'whsec_wrong' })).toBe('INVALID_SIGNATURE');
    const sentAt = Number(delivery.headers['x-service-timestamp']);
    expect(refuse({ body: delivery.raw, headers: delivery.headers, secret, now: (sentAt + 301) * 1000 })).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    // An old timestamp with a signature that matches it is still refused.
    const old = sentAt - 400;
    expect(
      refuse({ body: delivery.raw, headers: { 'x-service-timestamp': String(old), 'x-service-signature': signWebhook(secret, old, delivery.raw) }, secret }),
    ).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
    expect(refuse({ body: delivery.raw, headers: { 'x-service-timestamp': String(sentAt) }, secret })).toBe('MISSING_HEADER');
  });
});
