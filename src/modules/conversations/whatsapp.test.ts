import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { buildTestApp, type OrgFixture, type TestApp } from '../../../test/harness.ts';
import { Receiver, type Behaviour } from '../../../test/receiver.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';
import { inboxes, messages } from './tables.ts';

/**
 * The WhatsApp Cloud API channel against a loopback stand-in of the Graph API (WHATSAPP_API_BASE_URL),
 * with webhook deliveries in Meta's wire format, signed as Meta signs them.
 */

let t: TestApp;
let graph: Receiver;
let wamids = 0;

/** The Graph API's answer to POST /{phone-number-id}/messages. */
const accepted: Behaviour = (req) => {
  const to = (req.json as { to?: string } | undefined)?.to ?? '';
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: `wamid.HBgL${++wamids}${Date.now()}` }] }),
  };
};
const graphError = (status: number, error: Record<string, unknown>): ReturnType<Behaviour> => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ error: { type: 'OAuthException', fbtrace_id: 'Ax1', ...error } }),
});

beforeAll(async () => {
  graph = await new Receiver().start();
  graph.behaviour = accepted;
  t = await buildTestApp({ env: { WHATSAPP_API_BASE_URL: graph.url('/v21.0'), WEBHOOK_RETRY_DELAYS_S: '0,0,0,0', WEBHOOK_TIMEOUT_MS: '2000' } });
});
afterAll(async () => {
  await t.close();
  await graph.stop();
});
afterEach(() => {
  graph.behaviour = accepted;
  graph.received.length = 0;
});

const base = (org: OrgFixture = t.orgA) => `/api/v1/orgs/${org.orgId}`;
const owner = (org: OrgFixture = t.orgA) => ({ token: org.token });
let counter = 0;
const unique = (label: string) => `${label}-${++counter}-${Date.now()}`;
/** A phone number as WhatsApp writes it (wa_id: digits, country code first). */
const waId = () => `1415${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

interface WaInbox {
  id: string;
  inboundUrl: string;
  config: { phoneNumberId: string };
  secrets: { verifyToken: string };
  appSecret: string;
  accessToken: string;
}

async function whatsappInbox(org: OrgFixture = t.orgA): Promise<WaInbox> {
  const appSecret = `app-secret-${unique('s')}`;
  const accessToken = `EAAG${unique('token')}`;
  const phoneNumberId = String(100000000000000 + ++counter);
  const res = await t.call({
    method: 'POST',
    url: `${base(org)}/inboxes`,
    auth: owner(org),
    payload: { name: unique('wa'), channel: 'whatsapp', config: { phoneNumberId }, credentials: { accessToken, appSecret } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { ...res.json(), appSecret, accessToken };
}

interface WaMessage {
  from: string;
  id?: string;
  type?: string;
  [key: string]: unknown;
}

/** One change of a webhook delivery, as Meta sends it. */
function change(inbox: WaInbox, value: { contacts?: { name: string; waId: string }[]; messages?: WaMessage[]; statuses?: Record<string, unknown>[] }) {
  return {
    field: 'messages',
    value: {
      messaging_product: 'whatsapp',
      metadata: { display_phone_number: '15550001111', phone_number_id: inbox.config.phoneNumberId },
      ...(value.contacts ? { contacts: value.contacts.map((c) => ({ profile: { name: c.name }, wa_id: c.waId })) } : {}),
      ...(value.messages
        ? { messages: value.messages.map((m) => ({ id: `wamid.${unique('in')}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', ...m })) }
        : {}),
      ...(value.statuses ? { statuses: value.statuses } : {}),
    },
  };
}

const delivery = (...entries: ReturnType<typeof change>[][]) => ({
  object: 'whatsapp_business_account',
  entry: entries.map((changes) => ({ id: 'WABA_ID', changes })),
});

const sign = (raw: string, secret: string) => 'sha256=' + createHmac('sha256', secret).update(raw).digest('hex');

async function post(inboxId: string, body: unknown, signature: string | null) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  return t.call({
    method: 'POST',
    url: `/api/v1/hooks/whatsapp/${inboxId}`,
    headers: { 'content-type': 'application/json', ...(signature ? { 'x-hub-signature-256': signature } : {}) },
    payload: raw,
  });
}

/** Posts a delivery signed with the inbox's app secret; expects the 200. */
async function deliver(inbox: WaInbox, body: unknown) {
  const raw = JSON.stringify(body);
  const res = await post(inbox.id, raw, sign(raw, inbox.appSecret));
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { messages: number; duplicates: number; statuses: number };
}

async function conversationsOf(inboxId: string, org: OrgFixture = t.orgA) {
  const res = await t.call({ method: 'GET', url: `${base(org)}/conversations?inboxId=${inboxId}&pageSize=100`, auth: owner(org) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items as { id: string; leadId?: string; contact: { name: string | null; address: string } }[];
}

async function messagesOf(conversationId: string) {
  const res = await t.call({ method: 'GET', url: `${base()}/conversations/${conversationId}/messages?pageSize=100`, auth: owner() });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items as { id: string; direction: string; text: string; status: string; externalId?: string; error?: string }[];
}

/** A conversation opened by one inbound text from a new contact. */
async function openedBy(inbox: WaInbox, text = 'Hi, is this open?') {
  const from = waId();
  await deliver(inbox, delivery([change(inbox, { contacts: [{ name: 'Carla', waId: from }], messages: [{ from, text: { body: text } }] })]));
  const [conversation] = (await conversationsOf(inbox.id)).filter((c) => c.contact.address === `+${from}`);
  return { conversation: conversation!, from };
}

async function reply(conversationId: string, payload: Record<string, unknown>, org: OrgFixture = t.orgA) {
  return t.call({ method: 'POST', url: `${base(org)}/conversations/${conversationId}/messages`, auth: owner(org), payload });
}

/** Waits for the sender loop to settle a message (sent or failed). */
async function settled(messageId: string) {
  return eventually(async () => {
    const [row] = await t.database.db.select().from(messages).where(eq(messages.id, messageId));
    return row && row.status !== 'queued' ? row : null;
  });
}

describe('whatsapp inboxes', () => {
  it('needs config.phoneNumberId and both credentials, shows the verify token once and never the credentials', async () => {
    const missing = async (payload: Record<string, unknown>) =>
      t.call({ method: 'POST', url: `${base()}/inboxes`, auth: owner(), payload: { name: 'wa', channel: 'whatsapp', ...payload } });
    const noSecret = await missing({ config: { phoneNumberId: '123' }, credentials: { accessToken: 'EAAG1' } });
    expect(noSecret.statusCode).toBe(400);
    expect(noSecret.json().details).toEqual([expect.objectContaining({ field: 'body.credentials.appSecret' })]);
    const noToken = await missing({ config: { phoneNumberId: '123' }, credentials: { appSecret: 's' } });
    expect(noToken.json().details).toEqual([expect.objectContaining({ field: 'body.credentials.accessToken' })]);
    const noNumber = await missing({ credentials: { accessToken: 'EAAG1', appSecret: 's' } });
    expect(noNumber.statusCode).toBe(400);
    expect(noNumber.json().details).toEqual([expect.objectContaining({ field: 'body.config.phoneNumberId' })]);
    const notDigits = await missing({ config: { phoneNumberId: '../../me' }, credentials: { accessToken: 'EAAG1', appSecret: 's' } });
    expect(notDigits.statusCode).toBe(400);

    const inbox = await whatsappInbox();
    expect(inbox.secrets.verifyToken.length).toBeGreaterThanOrEqual(24);
    expect(inbox.inboundUrl).toMatch(new RegExp(`/api/v1/hooks/whatsapp/${inbox.id}$`));
    const [row] = await t.database.db.select().from(inboxes).where(eq(inboxes.id, inbox.id));
    expect(row!.credentialsSealed).not.toContain(inbox.appSecret);
    expect(row!.secretHash).not.toBe(inbox.secrets.verifyToken);
    const got = await t.call({ method: 'GET', url: `${base()}/inboxes/${inbox.id}`, auth: owner() });
    expect(got.body).not.toContain(inbox.secrets.verifyToken);
    expect(got.body).not.toContain(inbox.appSecret);
    expect(got.body).not.toContain(inbox.accessToken);
    // A rename keeps the verify token Meta was given.
    const renamed = await t.call({
      method: 'PATCH',
      url: `${base()}/inboxes/${inbox.id}`,
      auth: owner(),
      payload: { name: 'Sales WhatsApp', config: { faq: [{ question: 'Hours?', answer: '9-5' }] } },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    const handshake = await t.call({
      method: 'GET',
      url: `/api/v1/hooks/whatsapp/${inbox.id}?hub.mode=subscribe&hub.verify_token=${inbox.secrets.verifyToken}&hub.challenge=1158201444`,
    });
    expect(handshake.statusCode).toBe(200);
  });
});

describe('whatsapp webhook', () => {
  it("answers the subscription handshake with hub.challenge only for the inbox's verify token", async () => {
    const inbox = await whatsappInbox();
    const other = await whatsappInbox();
    const hook = (id: string, token: string, mode = 'subscribe') =>
      t.call({ method: 'GET', url: `/api/v1/hooks/whatsapp/${id}?hub.mode=${mode}&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=1158201444` });
    const right = await hook(inbox.id, inbox.secrets.verifyToken);
    expect(right.statusCode).toBe(200);
    expect(right.headers['content-type']).toMatch(/^text\/plain/);
    expect(right.body).toBe('1158201444');
    expect((await hook(inbox.id, 'wrong-token')).statusCode).toBe(403);
    expect((await hook(inbox.id, other.secrets.verifyToken)).statusCode).toBe(403);
    expect((await hook(inbox.id, inbox.secrets.verifyToken, 'unsubscribe')).statusCode).toBe(403);
    expect((await hook('inb_unknown', inbox.secrets.verifyToken)).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `/api/v1/hooks/whatsapp/${inbox.id}?hub.mode=subscribe&hub.challenge=1` })).statusCode).toBe(403);
  });

  it("stores a signed batch (two entries, two contacts) as two conversations linked to leads, and Meta's retry of it stores nothing new", async () => {
    const inbox = await whatsappInbox();
    const ann = waId();
    const ben = waId();
    const body = delivery(
      [
        change(inbox, {
          contacts: [{ name: 'Ann Lee', waId: ann }],
          messages: [
            { from: ann, text: { body: 'Do you ship to Lisbon?' } },
            { from: ann, type: 'image', image: { id: 'media-1', mime_type: 'image/jpeg', caption: 'this one' } },
          ],
        }),
      ],
      [
        change(inbox, {
          contacts: [{ name: 'Ben Ode', waId: ben }],
          messages: [
            { from: ben, type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: 'yes-1', title: 'Yes, call me' } } },
            { from: ben, type: 'audio', audio: { id: 'media-2' } },
          ],
        }),
      ],
    );
    const receivedBefore = (await eventsOf(t, t.orgA.orgId, 'message.received')).length;
    expect(await deliver(inbox, body)).toEqual({ messages: 4, duplicates: 0, statuses: 0 });

    const threads = await conversationsOf(inbox.id);
    expect(threads).toHaveLength(2);
    const annThread = threads.find((c) => c.contact.address === `+${ann}`)!;
    const benThread = threads.find((c) => c.contact.address === `+${ben}`)!;
    expect(annThread.contact.name).toBe('Ann Lee');
    expect(benThread.contact.name).toBe('Ben Ode');
    expect((await messagesOf(annThread.id)).map((m) => m.text)).toEqual(['Do you ship to Lisbon?', '[image] this one']);
    expect((await messagesOf(benThread.id)).map((m) => m.text)).toEqual(['Yes, call me', '[audio]']);
    expect((await messagesOf(annThread.id))[0]!.externalId).toMatch(/^wamid\./);
    // The contact is a lead found by phone.
    const lead = await t.call({ method: 'GET', url: `${base()}/leads/${annThread.leadId}`, auth: owner() });
    expect(lead.json()).toMatchObject({ phone: `+${ann}`, source: 'whatsapp' });

    // Meta retries a delivery it did not see answered: the same bytes store nothing new.
    expect(await deliver(inbox, body)).toEqual({ messages: 0, duplicates: 4, statuses: 0 });
    expect(await conversationsOf(inbox.id)).toHaveLength(2);
    expect(await t.database.db.select().from(messages).where(eq(messages.inboxId, inbox.id))).toHaveLength(4);
    expect((await eventsOf(t, t.orgA.orgId, 'message.received')).length).toBe(receivedBefore + 4);
  });

  it('refuses a missing or wrong signature with 401 and stores nothing', async () => {
    const inbox = await whatsappInbox();
    const from = waId();
    const raw = JSON.stringify(delivery([change(inbox, { contacts: [{ name: 'Eve', waId: from }], messages: [{ from, text: { body: 'forged' } }] })]));
    const refused = [
      await post(inbox.id, raw, null),
      await post(inbox.id, raw, sign(raw, 'not-the-app-secret')),
      await post(inbox.id, raw, sign(raw + ' ', inbox.appSecret)),
      await post(inbox.id, raw, sign(raw, inbox.appSecret).replace('sha256=', 'sha1=')),
      await post('inb_unknown', raw, sign(raw, inbox.appSecret)),
    ];
    for (const res of refused) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 'UNAUTHORIZED' });
    }
    expect(await t.database.db.select().from(messages).where(eq(messages.inboxId, inbox.id))).toHaveLength(0);
    expect(await conversationsOf(inbox.id)).toHaveLength(0);
  });

  it('skips the changes of another phone number of the same Meta app', async () => {
    const inbox = await whatsappInbox();
    const from = waId();
    const foreign = change(inbox, { contacts: [{ name: 'Someone', waId: from }], messages: [{ from, text: { body: 'for the other number' } }] });
    foreign.value.metadata.phone_number_id = '999';
    expect(await deliver(inbox, delivery([foreign]))).toEqual({ messages: 0, duplicates: 0, statuses: 0 });
    expect(await conversationsOf(inbox.id)).toHaveLength(0);
  });
});

describe('whatsapp sending', () => {
  it('sends a reply inside the window as text with the bearer token; statuses only move forward; a failed status carries its error', async () => {
    const inbox = await whatsappInbox();
    const { conversation, from } = await openedBy(inbox);
    const res = await reply(conversation.id, { text: 'Yes, we ship there.' });
    expect(res.statusCode, res.body).toBe(201);
    const sent = await settled(res.json().id);
    expect(sent).toMatchObject({ status: 'sent', externalId: expect.stringMatching(/^wamid\./) });
    expect(graph.received).toHaveLength(1);
    const call = graph.received[0]!;
    expect(call.method).toBe('POST');
    expect(call.url).toBe(`/v21.0/${inbox.config.phoneNumberId}/messages`);
    expect(call.headers.authorization).toBe(`Bearer ${inbox.accessToken}`);
    expect(call.json).toEqual({ messaging_product: 'whatsapp', recipient_type: 'individual', to: from, type: 'text', text: { body: 'Yes, we ship there.' } });
    const sentEvent = await eventually(async () => (await eventsOf(t, t.orgA.orgId, 'message.sent')).find((e) => e.payload.message.id === sent.id));
    expect(sentEvent.payload.message.externalId).toBe(sent.externalId);

    const status = (id: string, kind: string, extra: Record<string, unknown> = {}) => ({
      id,
      status: kind,
      timestamp: String(Math.floor(Date.now() / 1000)),
      recipient_id: from,
      ...extra,
    });
    const statusOf = async (id: string) => (await messagesOf(conversation.id)).find((m) => m.id === id)!;
    expect(await deliver(inbox, delivery([change(inbox, { statuses: [status(sent.externalId!, 'delivered')] })]))).toMatchObject({ statuses: 1 });
    expect((await statusOf(sent.id)).status).toBe('delivered');
    // read, then a late delivered (batched in one delivery, in that order): it stays read.
    expect(
      await deliver(
        inbox,
        delivery([change(inbox, { statuses: [status(sent.externalId!, 'read')] })], [change(inbox, { statuses: [status(sent.externalId!, 'delivered')] })]),
      ),
    ).toMatchObject({ statuses: 1 });
    expect((await statusOf(sent.id)).status).toBe('read');

    const second = await reply(conversation.id, { text: 'Anything else?' });
    const secondSent = await settled(second.json().id);
    const failure = {
      errors: [
        {
          code: 131026,
          title: 'Message undeliverable',
          message: 'Message undeliverable',
          error_data: { details: 'Receiver is incapable of receiving this message' },
        },
      ],
    };
    await deliver(inbox, delivery([change(inbox, { statuses: [status(secondSent.externalId!, 'failed', failure)] })]));
    const failed = await statusOf(secondSent.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain('Message undeliverable');
    expect(failed.error).toContain('Receiver is incapable of receiving this message');
  });

  it('outside 24 hours refuses free text with 422 CHANNEL_WINDOW_CLOSED and sends a template', async () => {
    const inbox = await whatsappInbox();
    const { conversation, from } = await openedBy(inbox, 'Hello from yesterday');
    await t.database.db
      .update(messages)
      .set({ at: new Date(Date.now() - 25 * 3600_000) })
      .where(and(eq(messages.conversationId, conversation.id), eq(messages.direction, 'in')));
    const text = await reply(conversation.id, { text: 'Sorry for the delay' });
    expect(text.statusCode).toBe(422);
    expect(text.json()).toMatchObject({ code: 'CHANNEL_WINDOW_CLOSED' });
    expect(text.json().message).toMatch(/template/);
    expect((await messagesOf(conversation.id)).filter((m) => m.direction === 'out')).toHaveLength(0);

    const components = [{ type: 'body', parameters: [{ type: 'text', text: 'Carla' }] }];
    const template = await reply(conversation.id, { template: { name: 'follow_up', language: 'en_US', components } });
    expect(template.statusCode, template.body).toBe(201);
    expect(await settled(template.json().id)).toMatchObject({ status: 'sent' });
    expect(graph.received[0]!.json).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: from,
      type: 'template',
      template: { name: 'follow_up', language: { code: 'en_US' }, components },
    });

    // Inside the window free text goes again.
    await deliver(inbox, delivery([change(inbox, { messages: [{ from, text: { body: 'ok, still interested' } }] })]));
    const again = await reply(conversation.id, { text: 'Great!' });
    expect(again.statusCode).toBe(201);
    expect(await settled(again.json().id)).toMatchObject({ status: 'sent' });
  });

  it("an outbound start needs a template: text is 422, a template is queued and sent to the lead's phone", async () => {
    const inbox = await whatsappInbox();
    const phone = waId();
    const lead = await t.call({ method: 'POST', url: `${base()}/leads`, auth: owner(), payload: { name: 'Dana', phone: `+${phone}` } });
    expect(lead.statusCode, lead.body).toBe(201);
    const withText = await t.call({
      method: 'POST',
      url: `${base()}/conversations`,
      auth: owner(),
      payload: { inboxId: inbox.id, leadId: lead.json().id, text: 'Hi Dana' },
    });
    expect(withText.statusCode).toBe(422);
    expect(withText.json()).toMatchObject({ code: 'CHANNEL_WINDOW_CLOSED' });
    expect(await conversationsOf(inbox.id)).toHaveLength(0);

    const started = await t.call({
      method: 'POST',
      url: `${base()}/conversations`,
      auth: owner(),
      payload: { inboxId: inbox.id, leadId: lead.json().id, template: { name: 'hello_world', language: 'en_US' } },
    });
    expect(started.statusCode, started.body).toBe(201);
    const [first] = await messagesOf(started.json().id);
    expect(first).toMatchObject({ direction: 'out' });
    expect(await settled(first!.id)).toMatchObject({ status: 'sent' });
    expect(graph.received[0]!.json).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: phone,
      type: 'template',
      template: { name: 'hello_world', language: { code: 'en_US' } },
    });

    // The contact's answer lands in the same thread.
    await deliver(
      inbox,
      delivery([change(inbox, { contacts: [{ name: 'Dana', waId: phone }], messages: [{ from: phone, text: { body: 'Hi! Tell me more' } }] })]),
    );
    const threads = await conversationsOf(inbox.id);
    expect(threads.map((c) => c.id)).toEqual([started.json().id]);
  });

  it("the window is the contact's: after a closed thread with a recent message, a new start may be free text", async () => {
    const inbox = await whatsappInbox();
    const { conversation } = await openedBy(inbox, 'Can you call me back tomorrow?');
    expect((await t.call({ method: 'POST', url: `${base()}/conversations/${conversation.id}/close`, auth: owner() })).statusCode).toBe(200);
    const leadId = (await t.call({ method: 'GET', url: `${base()}/conversations/${conversation.id}`, auth: owner() })).json().leadId;
    const started = await t.call({
      method: 'POST',
      url: `${base()}/conversations`,
      auth: owner(),
      payload: { inboxId: inbox.id, leadId, text: 'As promised: here we are.' },
    });
    expect(started.statusCode, started.body).toBe(201);
    expect(started.json().id).not.toBe(conversation.id);
    const [first] = await messagesOf(started.json().id);
    expect(await settled(first!.id)).toMatchObject({ status: 'sent' });
  });

  it('a Graph API 400 fails the message with its error; a 429 and a throttling code are retried until accepted', async () => {
    const inbox = await whatsappInbox();
    const { conversation } = await openedBy(inbox);
    graph.behaviour = () =>
      graphError(400, {
        message: '(#131009) Parameter value is not valid',
        code: 131009,
        error_subcode: 2494010,
        error_data: { messaging_product: 'whatsapp', details: 'Recipient phone number not in allowed list' },
      });
    const bad = await reply(conversation.id, { text: 'will fail' });
    const failed = await settled(bad.json().id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain('(#131009) Parameter value is not valid');
    expect(failed.error).toContain('Recipient phone number not in allowed list');
    expect(graph.received).toHaveLength(1);

    graph.received.length = 0;
    graph.behaviour = (req, n) =>
      n === 1
        ? graphError(429, { message: 'Too many messages', code: 130429 })
        : n === 2
          ? graphError(400, { message: '(#80007) Rate limit issues', code: 80007 })
          : accepted(req, n);
    const busy = await reply(conversation.id, { text: 'will be retried' });
    const sent = await settled(busy.json().id);
    expect(sent).toMatchObject({ status: 'sent', externalId: expect.stringMatching(/^wamid\./) });
    expect(graph.received).toHaveLength(3);
    expect(graph.received.every((r) => (r.json as { text: { body: string } }).text.body === 'will be retried')).toBe(true);
  });
});

describe('whatsapp across organizations', () => {
  it('keeps another organization out of the inbox, its conversations and its webhook', async () => {
    const inbox = await whatsappInbox(t.orgA);
    const theirs = await whatsappInbox(t.orgB);
    const { conversation } = await openedBy(inbox);
    expect((await t.call({ method: 'GET', url: `${base(t.orgB)}/inboxes/${inbox.id}`, auth: owner(t.orgB) })).statusCode).toBe(404);
    expect(
      (
        await t.call({
          method: 'PATCH',
          url: `${base(t.orgB)}/inboxes/${inbox.id}`,
          auth: owner(t.orgB),
          payload: { credentials: { accessToken: 'x', appSecret: 'y' } },
        })
      ).statusCode,
    ).toBe(404);
    expect((await t.call({ method: 'GET', url: `${base(t.orgB)}/conversations/${conversation.id}`, auth: owner(t.orgB) })).statusCode).toBe(404);
    expect((await reply(conversation.id, { text: 'not mine' }, t.orgB)).statusCode).toBe(404);
    expect(await conversationsOf(inbox.id, t.orgB)).toHaveLength(0);
    expect(
      (
        await t.call({
          method: 'POST',
          url: `${base(t.orgB)}/conversations`,
          auth: owner(t.orgB),
          payload: { inboxId: inbox.id, leadId: 'lead_x', template: { name: 'hello_world', language: 'en_US' } },
        })
      ).statusCode,
    ).toBe(404);

    // Organization B's app secret does not sign for organization A's inbox, nor its verify token open the handshake.
    const from = waId();
    const raw = JSON.stringify(delivery([change(inbox, { messages: [{ from, text: { body: 'cross' } }] })]));
    expect((await post(inbox.id, raw, sign(raw, theirs.appSecret))).statusCode).toBe(401);
    expect(
      (
        await t.call({
          method: 'GET',
          url: `/api/v1/hooks/whatsapp/${inbox.id}?hub.mode=subscribe&hub.verify_token=${theirs.secrets.verifyToken}&hub.challenge=42`,
        })
      ).statusCode,
    ).toBe(403);
    expect((await messagesOf(conversation.id)).map((m) => m.text)).not.toContain('cross');
  });
});
