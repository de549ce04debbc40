import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { buildTestApp, type OrgFixture, type TestApp } from '../../../test/harness.ts';
import { Receiver, type Behaviour, type Received } from '../../../test/receiver.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';
import { inboxes, messages } from './tables.ts';
import { ApiChannel } from './channels.ts';
import { retryAfterSeconds } from './channel-types.ts';

let t: TestApp;
let rx: Receiver;

beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_RETRY_DELAYS_S: '0,0,0,0', WEBHOOK_TIMEOUT_MS: '2000' } });
  rx = await new Receiver().start();
});
afterAll(async () => {
  await t.close();
  await rx.stop();
});
afterEach(() => {
  rx.behaviour = () => ({ status: 200, body: 'ok' });
  rx.received.length = 0;
});

const base = (org: OrgFixture = t.orgA) => `/api/v1/orgs/${org.orgId}`;
const owner = (org: OrgFixture = t.orgA) => ({ token: org.token });
let counter = 0;
const unique = (label: string) => `${label}-${++counter}-${Date.now()}`;

interface Inbox {
  id: string;
  channel: string;
  inboundUrl: string;
  config: Record<string, unknown>;
  secrets?: { signingSecret: string };
}

async function apiInbox(extra: Record<string, unknown> = {}, org: OrgFixture = t.orgA): Promise<Inbox> {
  const res = await t.call({
    method: 'POST',
    url: `${base(org)}/inboxes`,
    auth: owner(org),
    payload: { name: unique('api'), channel: 'api', config: { url: rx.url('/out') }, ...extra },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function inbound(inboxId: string, body: Record<string, unknown>, auth: { apiKey?: string; token?: string } = { apiKey: t.orgA.apiKey }) {
  return t.call({ method: 'POST', url: `${base()}/inboxes/${inboxId}/messages`, auth, payload: body });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function conversationOf(messageId: string): Promise<Record<string, any>> {
  const [row] = await t.database.db.select().from(messages).where(eq(messages.id, messageId));
  const res = await t.call({ method: 'GET', url: `${base()}/conversations/${row!.conversationId}`, auth: owner() });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

function verify(req: Received, secret: string): boolean {
  const ts = String(req.headers['x-service-timestamp']);
  return req.headers['x-service-signature'] === 'sha256=' + createHmac('sha256', secret).update(`${ts}.${req.raw}`).digest('hex');
}

describe('inboxes', () => {
  it('creates an api inbox with its signing secret shown once (sealed at rest), lists, gets, changes and deletes it', async () => {
    const created = await apiInbox({ config: { url: rx.url('/out'), faq: [{ question: 'Hours?', answer: '9 to 5' }] }, bot: { enabled: true } });
    expect(created.id).toMatch(/^inb_/);
    expect(created.secrets!.signingSecret).toMatch(/^whsec_/);
    expect(created.inboundUrl).toMatch(new RegExp(`/api/v1/orgs/${t.orgA.orgId}/inboxes/${created.id}/messages$`));
    const [row] = await t.database.db.select().from(inboxes).where(eq(inboxes.id, created.id));
    expect(row!.secretSealed).not.toContain(created.secrets!.signingSecret);
    const got = await t.call({ method: 'GET', url: `${base()}/inboxes/${created.id}`, auth: owner() });
    expect(got.json()).toMatchObject({
      id: created.id,
      channel: 'api',
      bot: { enabled: true },
      config: { url: rx.url('/out'), faq: [{ question: 'Hours?', answer: '9 to 5' }] },
    });
    expect(got.json().secrets).toBeUndefined();
    const list = await t.call({ method: 'GET', url: `${base()}/inboxes`, auth: owner() });
    expect(list.json().items.map((i: Inbox) => i.id)).toContain(created.id);
    const patched = await t.call({
      method: 'PATCH',
      url: `${base()}/inboxes/${created.id}`,
      auth: owner(),
      payload: { name: 'Renamed', bot: { enabled: false } },
    });
    expect(patched.json()).toMatchObject({ name: 'Renamed', bot: { enabled: false }, config: { url: rx.url('/out') } });
    const deleted = await t.call({ method: 'DELETE', url: `${base()}/inboxes/${created.id}`, auth: owner() });
    expect(deleted.statusCode).toBe(204);
    expect((await t.call({ method: 'GET', url: `${base()}/inboxes/${created.id}`, auth: owner() })).statusCode).toBe(404);
  });

  it('refuses a web inbox without allowed origins, an api inbox without a usable url, and bounds the FAQ', async () => {
    const web = await t.call({ method: 'POST', url: `${base()}/inboxes`, auth: owner(), payload: { name: 'site', channel: 'web', config: {} } });
    expect(web.statusCode).toBe(400);
    expect(web.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.config.allowedOrigins' }] });
    const noUrl = await t.call({ method: 'POST', url: `${base()}/inboxes`, auth: owner(), payload: { name: 'api', channel: 'api' } });
    expect(noUrl.statusCode).toBe(400);
    const badUrl = await t.call({
      method: 'POST',
      url: `${base()}/inboxes`,
      auth: owner(),
      payload: { name: 'api', channel: 'api', config: { url: 'ftp://example.com/x' } },
    });
    expect(badUrl.statusCode).toBe(400);
    const faq = Array.from({ length: 201 }, () => ({ question: 'q', answer: 'a' }));
    const tooMany = await t.call({
      method: 'POST',
      url: `${base()}/inboxes`,
      auth: owner(),
      payload: { name: 'api', channel: 'api', config: { url: rx.url(), faq } },
    });
    expect(tooMany.statusCode).toBe(400);
  });
});

describe('inbound on the api channel', () => {
  it('stores a retried message once: the retry answers the stored message with 200 and writes nothing', async () => {
    const inbox = await apiInbox();
    const body = { contact: { name: 'Ann', address: `${unique('ann')}@example.com` }, text: 'Hello there', externalId: unique('ext') };
    const receivedBefore = (await eventsOf(t, t.orgA.orgId, 'message.received')).length;
    const first = await inbound(inbox.id, body);
    expect(first.statusCode, first.body).toBe(201);
    const retry = await inbound(inbox.id, body);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual(first.json());
    const stored = await t.database.db.select().from(messages).where(eq(messages.inboxId, inbox.id));
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ direction: 'in', sender: 'contact', status: 'received', externalId: body.externalId });
    expect((await eventsOf(t, t.orgA.orgId, 'message.received')).length).toBe(receivedBefore + 1);
  });

  it("concurrent retries store one message, and a new contact's concurrent first messages open one thread", async () => {
    const inbox = await apiInbox();
    const address = `${unique('burst')}@example.com`;
    const externalId = unique('same');
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => inbound(inbox.id, { contact: { address }, text: i % 2 ? 'dup' : `m${i}`, ...(i % 2 ? { externalId } : {}) })),
    );
    for (const res of answers) expect([200, 201], res.body).toContain(res.statusCode);
    expect(new Set(answers.filter((_, i) => i % 2).map((r) => r.json().id)).size).toBe(1);
    const stored = await t.database.db.select().from(messages).where(eq(messages.inboxId, inbox.id));
    expect(stored).toHaveLength(4);
    expect(new Set(stored.map((m) => m.conversationId)).size).toBe(1);
    const opened = (await eventsOf(t, t.orgA.orgId, 'conversation.opened')).filter((e) => e.payload.conversation.inboxId === inbox.id);
    expect(opened).toHaveLength(1);
  });

  it('writes message.received (and conversation.opened for a new thread) exactly when it stores the message', async () => {
    const inbox = await apiInbox();
    const address = `${unique('bo')}@example.com`;
    const ids: string[] = [];
    for (const text of ['one', 'two', 'three']) {
      const res = await inbound(inbox.id, { contact: { address }, text, externalId: unique(text) });
      ids.push(res.json().id);
    }
    // Refused requests store nothing and write no events.
    expect((await inbound(inbox.id, { contact: { address }, text: '' })).statusCode).toBe(400);
    expect((await inbound(inbox.id, { contact: { address }, text: 'x' }, { apiKey: await t.key(t.orgA.orgId, ['conversations:read']) })).statusCode).toBe(403);
    const received = (await eventsOf(t, t.orgA.orgId, 'message.received')).filter((e) => e.payload.conversation.inboxId === inbox.id);
    expect(received.map((e) => e.payload.message.id)).toEqual(ids);
    const stored = await t.database.db.select({ id: messages.id }).from(messages).where(eq(messages.inboxId, inbox.id));
    expect(stored.map((m) => m.id).sort()).toEqual([...ids].sort());
    const opened = (await eventsOf(t, t.orgA.orgId, 'conversation.opened')).filter((e) => e.payload.conversation.inboxId === inbox.id);
    expect(opened).toHaveLength(1);
    const conversation = await conversationOf(ids[0]!);
    expect(conversation).toMatchObject({ status: 'OPEN', channel: 'api', unreadCount: 3, contact: { address } });
    // One thread: every message went to it.
    const list = await t.call({ method: 'GET', url: `${base()}/conversations/${conversation.id}/messages`, auth: owner() });
    expect(list.json().items.map((m: { text: string }) => m.text)).toEqual(['one', 'two', 'three']);
  });

  it('tells the organization stream conversation.message after the commit', async () => {
    const inbox = await apiInbox();
    const heard: { kind: string; data: any }[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any
    const off = t.app.services.bus.subscribe(`org:${t.orgA.orgId}`, (m) => heard.push(m as (typeof heard)[number]));
    try {
      const res = await inbound(inbox.id, { contact: { address: `${unique('s')}@example.com` }, text: 'live?' });
      const message = await eventually(() => heard.find((m) => m.kind === 'conversation.message' && m.data.message.id === res.json().id));
      expect(message.data.message.text).toBe('live?');
      // A colleague's reply and note, and a delivery the receiver refuses, are heard too.
      const conversationId = message.data.message.conversationId;
      rx.behaviour = () => ({ status: 400, body: 'no such contact' });
      const reply = await t.call({ method: 'POST', url: `${base()}/conversations/${conversationId}/messages`, auth: owner(), payload: { text: 'on it' } });
      const note = await t.call({
        method: 'POST',
        url: `${base()}/conversations/${conversationId}/messages`,
        auth: owner(),
        payload: { text: 'VIP', private: true },
      });
      await eventually(() => heard.find((m) => m.kind === 'conversation.message' && m.data.message.id === note.json().id));
      const failed = await eventually(() =>
        heard.find((m) => m.kind === 'conversation.message' && m.data.message.id === reply.json().id && m.data.message.status === 'failed'),
      );
      expect(failed.data.message.error).toContain('no such contact');
      expect(heard.some((m) => m.data?.message?.id === reply.json().id && m.data.message.status === 'queued')).toBe(true);
    } finally {
      off();
    }
  });

  it('links a contact to the lead its e-mail matches, and creates a lead with source api for a new phone number', async () => {
    const inbox = await apiInbox();
    const email = `${unique('known')}@example.com`;
    const lead = await t.call({
      method: 'POST',
      url: `${base()}/leads`,
      auth: owner(),
      payload: { email: email.toUpperCase(), name: 'Known', source: 'import' },
    });
    expect(lead.statusCode).toBe(201);
    const createdBefore = (await eventsOf(t, t.orgA.orgId, 'lead.created')).length;
    const known = await inbound(inbox.id, { contact: { name: 'Someone else', address: email }, text: 'hi' });
    expect((await conversationOf(known.json().id)).leadId).toBe(lead.json().id);
    // The existing lead is left as it was.
    const after = await t.call({ method: 'GET', url: `${base()}/leads/${lead.json().id}`, auth: owner() });
    expect(after.json()).toMatchObject({ name: 'Known', source: 'import' });
    expect((await eventsOf(t, t.orgA.orgId, 'lead.created')).length).toBe(createdBefore);

    const phone = `+1415555${String(1000 + (counter % 9000)).padStart(4, '0')}`;
    const fresh = await inbound(inbox.id, { contact: { name: 'Newcomer', address: phone }, text: 'hello' });
    const conversation = await conversationOf(fresh.json().id);
    expect(conversation.leadId).toMatch(/^lead_/);
    const created = (await eventsOf(t, t.orgA.orgId, 'lead.created')).find((e) => e.payload.lead.id === conversation.leadId);
    expect(created!.payload.lead).toMatchObject({ source: 'api', phone, name: 'Newcomer' });
    // The next message from the same contact reuses the lead.
    const again = await inbound(inbox.id, { contact: { address: phone }, text: 'again' });
    expect((await conversationOf(again.json().id)).leadId).toBe(conversation.leadId);
    // An address that is neither an e-mail address nor a phone number stays a contact.
    const anonymous = await inbound(inbox.id, { contact: { address: 'customer-42' }, text: 'who am I' });
    expect((await conversationOf(anonymous.json().id)).leadId).toBeUndefined();
  });
});

describe('people in conversations', () => {
  it('a human reply in a bot-handled conversation is a takeover; a private note is never sent', async () => {
    // The bot answers the first message from the FAQ and keeps the conversation.
    const inbox = await apiInbox({
      config: { url: rx.url('/out'), faq: [{ question: 'I need help', answer: 'Sure, what do you need?' }] },
      bot: { enabled: true },
    });
    const res = await inbound(inbox.id, { contact: { address: `${unique('t')}@example.com` }, text: 'I need help' });
    await rx.waitFor(1);
    const conversation = await conversationOf(res.json().id);
    expect(conversation.handledBy).toBe('bot');
    const note = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${conversation.id}/messages`,
      auth: owner(),
      payload: { text: 'internal: VIP', private: true },
    });
    expect(note.statusCode).toBe(201);
    expect(note.json()).toMatchObject({ private: true, direction: 'out', sender: 'human' });
    expect((await conversationOf(res.json().id)).handledBy).toBe('bot');
    const reply = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${conversation.id}/messages`,
      auth: owner(),
      payload: { text: 'A person here' },
    });
    expect(reply.statusCode).toBe(201);
    expect(reply.json()).toMatchObject({ sender: 'human', direction: 'out', private: false });
    const after = await conversationOf(res.json().id);
    expect(after).toMatchObject({ handledBy: 'human', assigneeId: t.orgA.ownerId });
    const handoff = (await eventsOf(t, t.orgA.orgId, 'conversation.handoff')).filter((e) => e.payload.conversationId === conversation.id);
    expect(handoff).toHaveLength(1);
    expect(handoff[0]!.payload).toMatchObject({ by: 'human', assignedToId: t.orgA.ownerId });
    // Only the bot's answer and the reply went out.
    await rx.waitFor(2);
    await new Promise((r) => setTimeout(r, 200));
    expect(rx.received.map((r) => (r.json as any).payload.message.text)).toEqual(['Sure, what do you need?', 'A person here']); // eslint-disable-line @typescript-eslint/no-explicit-any
    const [storedNote] = await t.database.db.select().from(messages).where(eq(messages.id, note.json().id));
    expect(storedNote!.attempts).toBe(0);
  });

  it('a handoff names the reason and assignee, and notifies the organization with a link to the conversation', async () => {
    const inbox = await apiInbox({ bot: { enabled: true } });
    const res = await inbound(inbox.id, { contact: { address: `${unique('h')}@example.com` }, text: 'Let me talk to a person' });
    const conversation = await conversationOf(res.json().id);
    const member = await t.member(t.orgA.orgId, 'member');
    const handed = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${conversation.id}/handoff`,
      auth: owner(),
      payload: { reason: 'pricing', assigneeId: member.userId },
    });
    expect(handed.statusCode, handed.body).toBe(200);
    expect(handed.json()).toMatchObject({ handledBy: 'human', handoffReason: 'pricing', assigneeId: member.userId });
    // (The bot may have handed the conversation off first: the contact asked for a person.)
    const [event] = (await eventsOf(t, t.orgA.orgId, 'conversation.handoff')).filter(
      (e) => e.payload.conversationId === conversation.id && e.payload.reason === 'pricing',
    );
    expect(event!.payload).toMatchObject({ reason: 'pricing', by: 'human', assignedToId: member.userId });
    const notes = await t.call({ method: 'GET', url: `${base()}/notifications`, auth: { token: member.token } });
    expect(notes.json().items).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'conversation.handoff', link: `/conversations/${conversation.id}` })]),
    );
    const stranger = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${conversation.id}/assign`,
      auth: owner(),
      payload: { assigneeId: t.orgB.ownerId },
    });
    expect(stranger.statusCode).toBe(400);
    const assigned = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${conversation.id}/assign`,
      auth: owner(),
      payload: { assigneeId: t.orgA.ownerId },
    });
    expect(assigned.json().assigneeId).toBe(t.orgA.ownerId);
  });

  it("read sets the caller's unread count to 0, for that caller only", async () => {
    const inbox = await apiInbox();
    const res = await inbound(inbox.id, { contact: { address: `${unique('r')}@example.com` }, text: 'unread' });
    const conversation = await conversationOf(res.json().id);
    const viewer = await t.member(t.orgA.orgId, 'viewer');
    const read = await t.call({ method: 'POST', url: `${base()}/conversations/${conversation.id}/read`, auth: { token: viewer.token } });
    expect(read.statusCode).toBe(200);
    expect(read.json().unreadCount).toBe(0);
    expect((await conversationOf(res.json().id)).unreadCount).toBe(1);
  });

  it('closes (conversation.closed with resolvedBy and durationSec), reopens, and counts it in the stats', async () => {
    const inbox = await apiInbox();
    const res = await inbound(inbox.id, { contact: { address: `${unique('c')}@example.com` }, text: 'question' });
    const conversation = await conversationOf(res.json().id);
    await t.call({ method: 'POST', url: `${base()}/conversations/${conversation.id}/handoff`, auth: owner(), payload: { reason: 'refund' } });
    await t.call({ method: 'POST', url: `${base()}/conversations/${conversation.id}/messages`, auth: owner(), payload: { text: 'answer' } });
    const closed = await t.call({ method: 'POST', url: `${base()}/conversations/${conversation.id}/close`, auth: owner() });
    expect(closed.json()).toMatchObject({ status: 'CLOSED', resolvedBy: 'human' });
    expect(closed.json().closedAt).toBeTruthy();
    const [event] = (await eventsOf(t, t.orgA.orgId, 'conversation.closed')).filter((e) => e.payload.conversationId === conversation.id);
    expect(event!.payload).toMatchObject({ resolvedBy: 'human', durationSec: expect.any(Number) });
    const refused = await t.call({ method: 'POST', url: `${base()}/conversations/${conversation.id}/messages`, auth: owner(), payload: { text: 'late' } });
    expect(refused.statusCode).toBe(409);
    // A new inbound message after the close opens a new thread.
    const next = await inbound(inbox.id, { contact: { address: conversation.contact.address }, text: 'me again' });
    expect((await conversationOf(next.json().id)).id).not.toBe(conversation.id);
    const blocked = await t.call({ method: 'POST', url: `${base()}/conversations/${conversation.id}/reopen`, auth: owner() });
    expect(blocked.statusCode).toBe(409);
    await t.call({ method: 'POST', url: `${base()}/conversations/${(await conversationOf(next.json().id)).id}/close`, auth: owner() });
    const reopened = await t.call({ method: 'POST', url: `${base()}/conversations/${conversation.id}/reopen`, auth: owner() });
    expect(reopened.json()).toMatchObject({ status: 'OPEN' });
    expect(reopened.json().closedAt).toBeUndefined();

    const stats = await t.call({ method: 'GET', url: `${base()}/conversations/stats`, auth: owner(), query: { inboxId: inbox.id } });
    expect(stats.statusCode, stats.body).toBe(200);
    expect(stats.json()).toMatchObject({ opened: 2, closed: 1, closedByBot: 0, handoffs: 1, handoffReasons: { refund: 1 } });
    expect(stats.json().medianFirstReplySec).toBeGreaterThanOrEqual(0);
    expect(stats.json().medianHandoffSec).toBeGreaterThanOrEqual(0);
    // CONTRACT §6: a date is the whole day (UTC), `to` included; a timestamp `to` is exclusive.
    const day = String(conversation.openedAt).slice(0, 10);
    const before = new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    const over = async (from: string, to: string) => {
      const res = await t.call({ method: 'GET', url: `${base()}/conversations/stats`, auth: owner(), query: { inboxId: inbox.id, from, to } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().opened as number;
    };
    expect(await over(day, day)).toBe(2);
    expect(await over(before, before)).toBe(0);
    expect(await over(before, `${day}T00:00:00Z`)).toBe(0);
    expect(await over(`${before}T12:00:00+02:00`, day)).toBe(2);
    const bad = await t.call({ method: 'GET', url: `${base()}/conversations/stats`, auth: owner(), query: { from: '2026-02-30', to: day } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'querystring.from' }] });
  });

  it("lists with every filter and q over the messages' text", async () => {
    // The bot answers 'the blue umbrella' from the FAQ, so the conversation stays the bot's.
    const inbox = await apiInbox({
      config: { url: rx.url('/out'), faq: [{ question: 'Is the blue umbrella in stock?', answer: 'Yes.' }] },
      bot: { enabled: true },
    });
    const other = await apiInbox();
    const a = await conversationOf((await inbound(inbox.id, { contact: { address: `${unique('fa')}@example.com` }, text: 'the blue umbrella' })).json().id);
    const b = await conversationOf((await inbound(other.id, { contact: { address: `${unique('fb')}@example.com` }, text: 'a red coat' })).json().id);
    await t.call({ method: 'POST', url: `${base()}/conversations/${b.id}/close`, auth: owner() });
    const list = async (query: Record<string, string>) => {
      const res = await t.call({ method: 'GET', url: `${base()}/conversations`, auth: owner(), query });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().items.map((c: { id: string }) => c.id) as string[];
    };
    expect(await list({ q: 'BLUE umb' })).toEqual([a.id]);
    expect(await list({ q: 'red coat' })).toEqual([b.id]);
    expect(await list({ inboxId: inbox.id })).toEqual([a.id]);
    expect(await list({ inboxId: other.id, status: 'CLOSED' })).toEqual([b.id]);
    expect(await list({ inboxId: other.id, status: 'OPEN' })).toEqual([]);
    expect(await list({ inboxId: inbox.id, handledBy: 'bot' })).toEqual([a.id]);
    expect(await list({ inboxId: inbox.id, handledBy: 'human' })).toEqual([]);
    expect(await list({ leadId: a.leadId })).toEqual([a.id]);
    expect(await list({ channel: 'api', q: 'umbrella' })).toEqual([a.id]);
    await t.call({ method: 'POST', url: `${base()}/conversations/${a.id}/assign`, auth: owner(), payload: { assigneeId: t.orgA.ownerId } });
    expect(await list({ assigneeId: t.orgA.ownerId, inboxId: inbox.id })).toEqual([a.id]);
    // `none`: nobody's yet (the queue a team picks from).
    expect(await list({ assigneeId: 'none', inboxId: inbox.id })).toEqual([]);
    expect(await list({ assigneeId: 'none', inboxId: other.id, status: 'CLOSED' })).toEqual([b.id]);
    expect((await t.call({ method: 'GET', url: `${base()}/conversations`, auth: owner(), query: { status: 'PENDING' } })).statusCode).toBe(400);
  });

  it("keeps organizations apart: another organization's inbox and conversation are not found", async () => {
    const inbox = await apiInbox();
    const res = await inbound(inbox.id, { contact: { address: `${unique('x')}@example.com` }, text: 'private' });
    const conversation = await conversationOf(res.json().id);
    const b = { token: t.orgB.token };
    const urls = [`/inboxes/${inbox.id}`, `/conversations/${conversation.id}`, `/conversations/${conversation.id}/messages`];
    for (const path of urls) expect((await t.call({ method: 'GET', url: `${base(t.orgB)}${path}`, auth: b })).statusCode).toBe(404);
    expect(
      (
        await t.call({
          method: 'POST',
          url: `${base(t.orgB)}/inboxes/${inbox.id}/messages`,
          auth: { apiKey: t.orgB.apiKey },
          payload: { contact: { address: 'a@b.co' }, text: 'x' },
        })
      ).statusCode,
    ).toBe(404);
    expect((await t.call({ method: 'POST', url: `${base(t.orgB)}/conversations/${conversation.id}/close`, auth: b })).statusCode).toBe(404);
    const listB = await t.call({ method: 'GET', url: `${base(t.orgB)}/conversations`, auth: b });
    expect(listB.json().items.map((c: { id: string }) => c.id)).not.toContain(conversation.id);
    // The organization path with org A's credentials does not reach B's rows either.
    const bInbox = await apiInbox({}, t.orgB);
    expect((await t.call({ method: 'GET', url: `${base()}/inboxes/${bInbox.id}`, auth: owner() })).statusCode).toBe(404);
  });
});

describe('outbound on the api channel', () => {
  it('guards the receiver URL against private addresses when they are not allowed, and reads Retry-After in both forms', async () => {
    const guarded = new ApiChannel({
      allowPrivate: false,
      timeoutMs: 1000,
      whatsappApiBaseUrl: '',
      telegramApiBaseUrl: '',
      smtpUrl: undefined,
      publicUrl: 'https://service.example',
    });
    for (const url of ['https://127.0.0.1/hook', 'https://10.0.0.7/hook', 'https://[::1]/hook', 'http://example.com/hook']) {
      await expect(guarded.prepare({ url }, null), url).rejects.toMatchObject({ statusCode: 400 });
    }
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds(new Date(Date.now() + 30_000).toUTCString())).toBeGreaterThanOrEqual(29);
    expect(retryAfterSeconds('999999')).toBe(3600);
    expect(retryAfterSeconds('soon')).toBeUndefined();
  });

  it('gives up after the configured retries, with the last answer on the message', async () => {
    const inbox = await apiInbox();
    rx.behaviour = () => ({ status: 502, body: 'bad gateway' });
    const res = await inbound(inbox.id, { contact: { address: `${unique('g')}@example.com` }, text: 'hi' });
    const conversation = await conversationOf(res.json().id);
    const reply = await t.call({ method: 'POST', url: `${base()}/conversations/${conversation.id}/messages`, auth: owner(), payload: { text: 'anyone?' } });
    const failed = await eventually(async () => {
      const [row] = await t.database.db
        .select()
        .from(messages)
        .where(and(eq(messages.id, reply.json().id), eq(messages.status, 'failed')));
      return row;
    });
    // WEBHOOK_RETRY_DELAYS_S has four delays: five attempts.
    expect(failed.attempts).toBe(5);
    expect(rx.received).toHaveLength(5);
    expect(failed.error).toContain('502');
  });

  it("retries a 503 after its Retry-After, then records sent with the receiver's id and message.sent", async () => {
    const inbox = await apiInbox();
    const lead = await t.call({ method: 'POST', url: `${base()}/leads`, auth: owner(), payload: { email: `${unique('out')}@example.com`, name: 'Out' } });
    rx.behaviour = (_req, n): ReturnType<Behaviour> =>
      n === 1
        ? { status: 503, headers: { 'retry-after': '1' }, body: 'busy' }
        : { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'rcv-42' }) };
    const started = await t.call({
      method: 'POST',
      url: `${base()}/conversations`,
      auth: owner(),
      payload: { inboxId: inbox.id, leadId: lead.json().id, text: 'Hi from us' },
    });
    expect(started.statusCode, started.body).toBe(201);
    expect(started.json()).toMatchObject({ inboxId: inbox.id, leadId: lead.json().id, handledBy: 'human', status: 'OPEN' });
    await rx.waitFor(2, 10_000);
    const [first, second] = rx.received;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(900);
    for (const req of [first!, second!]) expect(verify(req, inbox.secrets!.signingSecret)).toBe(true);
    const envelope = second!.json as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(envelope).toMatchObject({
      type: 'conversation.message',
      organizationId: t.orgA.orgId,
      payload: { message: { text: 'Hi from us', sender: 'human' }, conversation: { id: started.json().id } },
    });
    expect((first!.json as { id: string }).id).toBe(envelope.id);
    const message = await eventually(async () => {
      const list = await t.call({ method: 'GET', url: `${base()}/conversations/${started.json().id}/messages`, auth: owner() });
      const item = list.json().items[0];
      return item.status === 'sent' ? item : null;
    });
    expect(message).toMatchObject({ externalId: 'rcv-42', direction: 'out' });
    const sent = await eventually(async () => (await eventsOf(t, t.orgA.orgId, 'message.sent')).find((e) => e.payload.message.id === message.id));
    expect(sent.payload).toMatchObject({ sender: 'human', message: { externalId: 'rcv-42', status: 'sent' } });
  });

  it("fails a message for good on a 400 with the receiver's error, and sends no message.sent", async () => {
    const inbox = await apiInbox();
    rx.behaviour = () => ({ status: 400, body: '{"error":"unknown recipient"}' });
    const res = await inbound(inbox.id, { contact: { address: `${unique('f')}@example.com` }, text: 'hi' });
    const conversation = await conversationOf(res.json().id);
    const reply = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${conversation.id}/messages`,
      auth: owner(),
      payload: { text: 'nobody gets this' },
    });
    const failed = await eventually(async () => {
      const [row] = await t.database.db
        .select()
        .from(messages)
        .where(and(eq(messages.id, reply.json().id), eq(messages.status, 'failed')));
      return row;
    });
    expect(failed.error).toContain('unknown recipient');
    expect(failed.attempts).toBe(1);
    const list = await t.call({ method: 'GET', url: `${base()}/conversations/${conversation.id}/messages`, auth: owner() });
    expect(list.json().items[1]).toMatchObject({ status: 'failed', error: expect.stringContaining('400') });
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received).toHaveLength(1);
    expect((await eventsOf(t, t.orgA.orgId, 'message.sent')).find((e) => e.payload.message.id === reply.json().id)).toBeUndefined();
  });
});
