import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { buildTestApp, type OrgFixture, type TestApp } from '../../../test/harness.ts';
import { SseClient } from '../../../test/sse-client.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';
import { messages, widgetSessions } from './tables.ts';

/**
 * The web widget's public routes, over real HTTP (the stream is read by a real SSE client), as a
 * browser on the allowed site would call them.
 */
let t: TestApp;
let baseUrl: string;
const SITE = 'https://shop.example';

beforeAll(async () => {
  t = await buildTestApp({ env: { SSE_PING_MS: '200' } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address() as { port: number };
  baseUrl = `http://127.0.0.1:${address.port}`;
});
afterAll(() => t.close());

const base = (org: OrgFixture = t.orgA) => `/api/v1/orgs/${org.orgId}`;
const owner = (org: OrgFixture = t.orgA) => ({ token: org.token });
let counter = 0;

interface Inbox {
  id: string;
  channel: string;
  inboundUrl: string;
  config: { allowedOrigins: string[] };
  widgetSnippet: string;
}

async function webInbox(org: OrgFixture = t.orgA, allowedOrigins = [SITE]): Promise<Inbox> {
  const res = await t.call({
    method: 'POST',
    url: `${base(org)}/inboxes`,
    auth: owner(org),
    payload: { name: `site ${++counter}`, channel: 'web', config: { allowedOrigins } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const widget = (inboxId: string, path: string) => `/api/v1/widget/${inboxId}/${path}`;

async function session(inboxId: string, options: { token?: string; body?: Record<string, unknown>; origin?: string } = {}) {
  const headers: Record<string, string> = { origin: options.origin ?? SITE };
  if (options.token) headers['x-widget-session'] = options.token;
  return t.call({ method: 'POST', url: widget(inboxId, 'sessions'), headers, payload: options.body ?? {} });
}

async function newSession(inboxId: string, body?: Record<string, unknown>): Promise<string> {
  const res = await session(inboxId, { body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().sessionToken;
}

function say(inboxId: string, token: string | undefined, text: string, origin: string | null = SITE) {
  const headers: Record<string, string> = {};
  if (origin) headers.origin = origin;
  if (token) headers['x-widget-session'] = token;
  return t.call({ method: 'POST', url: widget(inboxId, 'messages'), headers, payload: { text } });
}

async function conversationsOf(inboxId: string, org: OrgFixture = t.orgA) {
  const res = await t.call({ method: 'GET', url: `${base(org)}/conversations?inboxId=${inboxId}`, auth: owner(org) });
  return res.json().items as { id: string; channel: string; leadId?: string; contact: { address: string; name: string | null } }[];
}

function stream(inboxId: string, token: string, headers: Record<string, string> = {}) {
  return SseClient.open(`${baseUrl}${widget(inboxId, `events?session=${encodeURIComponent(token)}`)}`, { origin: SITE, ...headers });
}

const texts = (client: SseClient) => client.events('message').map((m) => (m.data as { text: string }).text);

describe('web inboxes', () => {
  it('creates a web inbox whose record carries the snippet a site adds', async () => {
    const inbox = await webInbox(t.orgA, ['https://shop.example', 'https://www.shop.example:8443']);
    expect(inbox.channel).toBe('web');
    expect(inbox.config.allowedOrigins).toEqual(['https://shop.example', 'https://www.shop.example:8443']);
    expect(inbox.widgetSnippet).toBe(`<script src="${t.config.publicUrl}/api/v1/widget/${inbox.id}/widget.js" async></script>`);
    expect(inbox.inboundUrl).toBe(`${t.config.publicUrl}/api/v1/widget/${inbox.id}/messages`);
    const again = await t.call({ method: 'GET', url: `${base()}/inboxes/${inbox.id}`, auth: owner() });
    expect(again.json().widgetSnippet).toBe(inbox.widgetSnippet);
  });

  it('takes only exact https origins (http for localhost alone) and at least one', async () => {
    for (const origins of [[], ['https://shop.example/'], ['https://shop.example/path'], ['http://shop.example'], ['shop.example'], ['https://Shop.example']]) {
      const res = await t.call({
        method: 'POST',
        url: `${base()}/inboxes`,
        auth: owner(),
        payload: { name: 'bad', channel: 'web', config: { allowedOrigins: origins } },
      });
      expect(res.statusCode, JSON.stringify(origins)).toBe(400);
      expect(res.json().details[0].field).toMatch(/^body\.config\.allowedOrigins/);
    }
    const other = await t.call({
      method: 'POST',
      url: `${base()}/inboxes`,
      auth: owner(),
      payload: { name: 'bad', channel: 'web', config: { allowedOrigins: [SITE], url: 'https://x.example' } },
    });
    expect(other.statusCode).toBe(400);
    await webInbox(t.orgA, ['http://localhost:3000', 'http://127.0.0.1:8080']);
  });

  it('serves the widget script with a validator, and nothing for an inbox that is not a web inbox', async () => {
    const inbox = await webInbox();
    const res = await t.call({ method: 'GET', url: widget(inbox.id, 'widget.js') });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/javascript/);
    expect(res.body).toContain('attachShadow');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    const etag = String(res.headers.etag);
    expect((await t.call({ method: 'GET', url: widget(inbox.id, 'widget.js'), headers: { 'if-none-match': etag } })).statusCode).toBe(304);
    const api = await t.call({
      method: 'POST',
      url: `${base()}/inboxes`,
      auth: owner(),
      payload: { name: 'api', channel: 'api', config: { url: 'https://receiver.example/in' } },
    });
    expect((await t.call({ method: 'GET', url: widget(api.json().id, 'widget.js') })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: widget('inb_nothing', 'widget.js') })).statusCode).toBe(404);
    expect((await session(api.json().id)).statusCode).toBe(404);
  });

  it('a web conversation cannot be started from the API: a visitor writes first', async () => {
    const inbox = await webInbox();
    const lead = await t.call({ method: 'POST', url: `${base()}/leads`, auth: owner(), payload: { email: `web-start-${Date.now()}@example.com` } });
    const res = await t.call({
      method: 'POST',
      url: `${base()}/conversations`,
      auth: owner(),
      payload: { inboxId: inbox.id, leadId: lead.json().id, text: 'Hello' },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('CHANNEL_CANNOT_INITIATE');
  });
});

describe('visitor sessions', () => {
  it('opens an anonymous visitor, stores only the hash of its token, and resumes it', async () => {
    const inbox = await webInbox();
    const first = await session(inbox.id);
    expect(first.statusCode).toBe(201);
    const token = first.json().sessionToken as string;
    expect(token).toMatch(/^wst_/);
    expect(first.json().conversationId).toBeUndefined();

    const rows = await t.database.db.select().from(widgetSessions).where(eq(widgetSessions.inboxId, inbox.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));
    const dump = JSON.stringify(await t.database.db.execute(sql`select * from widget_sessions`));
    expect(dump).not.toContain(token);

    expect((await say(inbox.id, token, 'Hi there')).statusCode).toBe(201);
    const resumed = await session(inbox.id, { token });
    expect(resumed.statusCode).toBe(200);
    const [conversation] = await conversationsOf(inbox.id);
    expect(resumed.json()).toEqual({ sessionToken: token, conversationId: conversation!.id });
    // A token that is not one of this inbox's opens a new visitor.
    const stranger = await session(inbox.id, { token: 'wst_made-up' });
    expect(stranger.statusCode).toBe(201);
    expect(stranger.json().sessionToken).not.toBe(token);
  });

  it('an anonymous visitor stays a contact; an e-mail address (in the session call or in a message) makes it a lead', async () => {
    const inbox = await webInbox();
    const anonymous = await newSession(inbox.id);
    await say(inbox.id, anonymous, 'Do you ship to Norway?');
    const email = `visitor-${Date.now()}@example.com`;
    await say(inbox.id, anonymous, `Please write to me at ${email} thanks`);
    const named = await newSession(inbox.id, { name: 'Ola Nordmann', email: `ola-${Date.now()}@example.com` });
    await say(inbox.id, named, 'Hello');
    const quiet = await newSession(inbox.id);
    await say(inbox.id, quiet, 'Just looking');

    const list = await conversationsOf(inbox.id);
    expect(list).toHaveLength(3);
    for (const c of list) expect(c.contact.address).toMatch(/^visitor:/);
    const withLead = list.filter((c) => c.leadId);
    expect(withLead).toHaveLength(2);
    const byEmail = await t.call({ method: 'GET', url: `${base()}/leads/${withLead.find((c) => c.contact.name === null)!.leadId}`, auth: owner() });
    expect(byEmail.json()).toMatchObject({ email, source: 'web' });
    expect(list.find((c) => c.contact.name === 'Ola Nordmann')?.leadId).toBeDefined();

    const bad = await session(inbox.id, { body: { email: 'not-an-address' } });
    expect(bad.statusCode).toBe(400);
  });
});

describe('visitor messages', () => {
  it("stores the message in the visitor's conversation, and refuses a bad session with 401 storing nothing", async () => {
    const inbox = await webInbox();
    const token = await newSession(inbox.id);
    const res = await say(inbox.id, token, 'Is the blue one in stock?');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().message).toMatchObject({ direction: 'in', sender: 'contact', text: 'Is the blue one in stock?', status: 'received' });
    const [conversation] = await conversationsOf(inbox.id);
    expect(conversation).toMatchObject({ id: res.json().conversationId, channel: 'web' });
    expect((await eventsOf(t, t.orgA.orgId, 'message.received')).some((e) => e.payload.message.id === res.json().message.id)).toBe(true);

    const before = (await t.database.db.select().from(messages).where(eq(messages.inboxId, inbox.id))).length;
    expect((await say(inbox.id, undefined, 'no session')).statusCode).toBe(401);
    const forged = await say(inbox.id, 'wst_forged', 'forged');
    expect(forged.statusCode).toBe(401);
    // The widget on the allowed site can read the refusal (and open a new session).
    expect(forged.headers['access-control-allow-origin']).toBe(SITE);
    expect((await say(inbox.id, token, 'x'.repeat(4097))).statusCode).toBe(400);
    expect((await say(inbox.id, token, '   ')).statusCode).toBe(400);
    expect((await t.database.db.select().from(messages).where(eq(messages.inboxId, inbox.id))).length).toBe(before);
  });

  it("keeps each inbox's and organization's visitors apart", async () => {
    const a = await webInbox(t.orgA);
    const otherInbox = await webInbox(t.orgA);
    const b = await webInbox(t.orgB);
    const token = await newSession(a.id);
    expect((await say(otherInbox.id, token, 'wrong inbox')).statusCode).toBe(401);
    expect((await say(b.id, token, 'wrong org')).statusCode).toBe(401);
    const resumed = await session(b.id, { token });
    expect(resumed.json().sessionToken).not.toBe(token);
    expect(await conversationsOf(otherInbox.id)).toHaveLength(0);
    expect(await conversationsOf(b.id, t.orgB)).toHaveLength(0);
    const client = await stream(b.id, token);
    expect(client.status).toBe(401);
  });

  it('limits one visitor to 20 messages a minute', async () => {
    const inbox = await webInbox();
    const token = await newSession(inbox.id);
    for (let i = 0; i < 20; i++) expect((await say(inbox.id, token, `message ${i}`)).statusCode).toBe(201);
    const over = await say(inbox.id, token, 'one too many');
    expect(over.statusCode).toBe(429);
    expect(over.json().code).toBe('RATE_LIMIT');
    // Another visitor is not held back by the first.
    expect((await say(inbox.id, await newSession(inbox.id), 'hello')).statusCode).toBe(201);
  });
});

describe('CORS', () => {
  it('answers the allowed origins (preflight included) and refuses the others without CORS headers', async () => {
    const inbox = await webInbox(t.orgA, [SITE, 'https://blog.example']);
    const preflight = await t.call({
      method: 'OPTIONS',
      url: widget(inbox.id, 'messages'),
      headers: { origin: 'https://blog.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-widget-session' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://blog.example');
    expect(String(preflight.headers['access-control-allow-methods'])).toContain('POST');
    expect(String(preflight.headers['access-control-allow-headers'])).toContain('x-widget-session');

    const evilPreflight = await t.call({
      method: 'OPTIONS',
      url: widget(inbox.id, 'sessions'),
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(evilPreflight.statusCode).toBe(403);
    expect(evilPreflight.headers['access-control-allow-origin']).toBeUndefined();

    const allowed = await session(inbox.id);
    expect(allowed.headers['access-control-allow-origin']).toBe(SITE);
    expect(String(allowed.headers.vary)).toMatch(/origin/i);
    const token = allowed.json().sessionToken as string;

    const evilSession = await session(inbox.id, { origin: 'https://evil.example' });
    expect(evilSession.statusCode).toBe(403);
    expect(evilSession.headers['access-control-allow-origin']).toBeUndefined();
    const evilMessage = await say(inbox.id, token, 'from elsewhere', 'https://evil.example');
    expect(evilMessage.statusCode).toBe(403);
    expect(evilMessage.headers['access-control-allow-origin']).toBeUndefined();
    expect(await conversationsOf(inbox.id)).toHaveLength(0);
    const evilStream = await stream(inbox.id, token, { origin: 'https://evil.example' });
    expect(evilStream.status).toBe(403);
  });
});

describe("the visitor's stream", () => {
  it('replays the conversation, then shows replies live — never private notes', async () => {
    const inbox = await webInbox();
    const token = await newSession(inbox.id);
    const first = (await say(inbox.id, token, 'Hello?')).json();
    const client = await stream(inbox.id, token);
    try {
      expect(client.status).toBe(200);
      expect(client.contentType).toMatch(/^text\/event-stream/);
      await client.until(() => texts(client).includes('Hello?'));
      expect(client.events('message')[0]!.data).toMatchObject({ id: first.message.id });

      const note = await t.call({
        method: 'POST',
        url: `${base()}/conversations/${first.conversationId}/messages`,
        auth: owner(),
        payload: { text: 'internal: VIP customer', private: true },
      });
      expect(note.statusCode).toBe(201);
      const reply = await t.call({
        method: 'POST',
        url: `${base()}/conversations/${first.conversationId}/messages`,
        auth: owner(),
        payload: { text: 'Hi! How can we help?' },
      });
      expect(reply.statusCode).toBe(201);
      await client.until(() => texts(client).includes('Hi! How can we help?'));
      const shown = client.events('message').find((m) => (m.data as { id: string }).id === reply.json().id)!;
      expect(shown.data).toMatchObject({ direction: 'out', sender: 'human' });
      // Delivered by the stream: marked sent, its own id as the externalId, with message.sent.
      const sent = await eventually(async () => {
        const [row] = await t.database.db.select().from(messages).where(eq(messages.id, reply.json().id));
        return row?.status === 'sent' ? row : null;
      });
      expect(sent.externalId).toBe(reply.json().id);
      expect((await eventsOf(t, t.orgA.orgId, 'message.sent')).some((e) => e.payload.message.id === reply.json().id)).toBe(true);

      await say(inbox.id, token, 'Thanks');
      await client.until(() => texts(client).includes('Thanks'));
      await client.until(() => client.messages.some((m) => m.comment === 'ping'));
      expect(texts(client)).not.toContain('internal: VIP customer');
      // SPEC's stream rules: `id:` is an increasing sequence number; the reply is sent again once sent.
      const ids = client.events('message').map((m) => Number(m.id));
      expect(ids.every((id, i) => Number.isInteger(id) && (i === 0 || id > ids[i - 1]!))).toBe(true);
      expect(
        client
          .events('message')
          .filter((m) => (m.data as { id: string }).id === reply.json().id)
          .map((m) => (m.data as { status: string }).status),
      ).toEqual(['queued', 'sent']);
    } finally {
      client.close();
    }

    // A reload replays what was said, each message once as it is now, still without the note.
    const again = await stream(inbox.id, token);
    let afterFirst: string;
    try {
      await again.until(() => texts(again).includes('Thanks'));
      expect(texts(again)).toEqual(['Hello?', 'Hi! How can we help?', 'Thanks']);
      afterFirst = again.events('message')[0]!.id!;
    } finally {
      again.close();
    }
    // since=<id> replays only what changed after that event; Last-Event-ID is not used (SPEC).
    const resumed = await SseClient.open(`${baseUrl}${widget(inbox.id, `events?session=${encodeURIComponent(token)}&since=${afterFirst}`)}`, {
      origin: SITE,
      'last-event-id': '0',
    });
    try {
      await resumed.until(() => texts(resumed).includes('Thanks'));
      expect(texts(resumed)).toEqual(['Hi! How can we help?', 'Thanks']);
    } finally {
      resumed.close();
    }
    const bad = await t.call({ method: 'GET', url: widget(inbox.id, `events?session=${encodeURIComponent(token)}&since=msg_1`), headers: { origin: SITE } });
    expect(bad.statusCode).toBe(400);
  });

  it('sends every change once and in order while messages and statuses change side by side (no gap between replay and live)', async () => {
    const inbox = await webInbox();
    const token = await newSession(inbox.id);
    const first = (await say(inbox.id, token, 'm0')).json();
    const client = await stream(inbox.id, token);
    try {
      // Visitor messages and team replies (each queued, then sent by the sender loop) at once.
      await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          i % 2
            ? say(inbox.id, token, `m${i}`)
            : t.call({ method: 'POST', url: `${base()}/conversations/${first.conversationId}/messages`, auth: owner(), payload: { text: `r${i}` } }),
        ),
      );
      const want = ['m0', 'm1', 'm3', 'm5', 'r0', 'r2', 'r4'];
      await client.until(
        () =>
          want.every((w) => texts(client).includes(w)) &&
          client.events('message').filter((m) => (m.data as { status: string }).status === 'sent' && (m.data as { direction: string }).direction === 'out')
            .length === 3,
      );
      const ids = client.events('message').map((m) => Number(m.id));
      expect(new Set(ids).size).toBe(ids.length);
      expect([...ids].sort((a, b) => a - b)).toEqual(ids);
      // A stream opened at any event's id gets exactly the events after it.
      const cut = ids[3]!;
      const resumed = await SseClient.open(`${baseUrl}${widget(inbox.id, `events?session=${encodeURIComponent(token)}&since=${cut}`)}`, { origin: SITE });
      try {
        const after = client.events('message').filter((m) => Number(m.id) > cut);
        // Each message once, as it is now: the latest event of each after the cut. (Waiting for as many
        // events as the live stream had after the cut never ended when a reply's queued and sent
        // events both came after it: the resumed stream sends that reply once.)
        const latest = new Map(after.map((m) => [(m.data as { id: string }).id, m.id]));
        await resumed.until(() => resumed.events('message').length >= latest.size);
        expect(resumed.events('message').map((m) => m.id)).toEqual([...latest.values()].sort((a, b) => Number(a) - Number(b)));
      } finally {
        resumed.close();
      }
    } finally {
      client.close();
    }
  });

  it("reads the store again at every ping: a message whose live notice never came (another instance's, while this one's LISTEN was down) still arrives", async () => {
    const inbox = await webInbox();
    const token = await newSession(inbox.id);
    const first = (await say(inbox.id, token, 'Anyone there?')).json();
    const client = await stream(inbox.id, token);
    try {
      await client.until(() => texts(client).includes('Anyone there?'));
      // Committed with its stream position and no bus message: as the chaos run's PostgreSQL restart
      // left an instance that had not yet listened again.
      const [row] = await t.database.db.select().from(messages).where(eq(messages.id, first.message.id));
      await t.database.db.insert(messages).values({ ...row!, id: `${row!.id}x`, text: 'Sent while you were not listening', streamSeq: row!.streamSeq! + 1 });
      await client.until(() => texts(client).includes('Sent while you were not listening'));
    } finally {
      client.close();
    }
  });

  it('a visitor hears only its own conversation; a bad session gets 401 before any stream', async () => {
    const inbox = await webInbox();
    const mine = await newSession(inbox.id);
    const theirs = await newSession(inbox.id);
    const client = await stream(inbox.id, mine);
    try {
      const other = (await say(inbox.id, theirs, 'someone else here')).json();
      await t.call({
        method: 'POST',
        url: `${base()}/conversations/${other.conversationId}/messages`,
        auth: owner(),
        payload: { text: 'reply to someone else' },
      });
      // My first message opens my conversation while the stream is already open: it is heard live.
      await say(inbox.id, mine, 'my own question');
      await client.until(() => texts(client).includes('my own question'));
      await eventually(async () => {
        const [row] = await t.database.db.select().from(messages).where(eq(messages.text, 'reply to someone else'));
        return row?.status === 'sent';
      });
      await say(inbox.id, mine, 'last');
      await client.until(() => texts(client).includes('last'));
      expect(texts(client)).toEqual(['my own question', 'last']);
    } finally {
      client.close();
    }
    const bad = await stream(inbox.id, 'wst_nope');
    expect(bad.status).toBe(401);
    expect(bad.errorBody).toMatchObject({ code: 'UNAUTHORIZED' });
  });
});

describe('shutdown', () => {
  it("ends the visitors' streams so the server can stop", async () => {
    const own = await buildTestApp();
    try {
      await own.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (own.app.server.address() as { port: number }).port;
      const created = await own.call({
        method: 'POST',
        url: `/api/v1/orgs/${own.orgA.orgId}/inboxes`,
        auth: { token: own.orgA.token },
        payload: { name: 'site', channel: 'web', config: { allowedOrigins: [SITE] } },
      });
      const opened = await own.call({ method: 'POST', url: widget(created.json().id, 'sessions'), headers: { origin: SITE }, payload: {} });
      const client = await SseClient.open(`http://127.0.0.1:${port}${widget(created.json().id, `events?session=${opened.json().sessionToken}`)}`, {
        origin: SITE,
      });
      expect(client.status).toBe(200);
      await own.app.close();
      await client.waitForEnd();
    } finally {
      await own.database.close();
    }
  });
});
