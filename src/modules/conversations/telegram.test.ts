import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { buildTestApp, type OrgFixture, type TestApp } from '../../../test/harness.ts';
import { Receiver, type Received } from '../../../test/receiver.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';
import { inboxes, messages } from './tables.ts';
import { TelegramChannel } from './telegram.ts';

/**
 * The Telegram Bot API's stand-in: a real HTTP server on loopback answering `POST /bot<token>/<method>`
 * the way Telegram does (`{ ok, result }` or `{ ok: false, error_code, description, parameters? }`),
 * knowing only the tokens the tests issued.
 */
let t: TestApp;
let api: Receiver;
const tokens = new Set<string>();
let nextMessageId = 1000;
type Plan = { status: number; body: Record<string, unknown> };
let sendPlan: ((n: number) => Plan | undefined) | null = null;

function telegram(req: Received): { status: number; headers: Record<string, string>; body: string } {
  const answer = (status: number, body: Record<string, unknown>) => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const match = /^\/bot([^/]+)\/(\w+)$/.exec(req.url);
  if (!match || !tokens.has(decodeURIComponent(match[1]!))) return answer(401, { ok: false, error_code: 401, description: 'Unauthorized' });
  const method = match[2]!;
  const body = req.json as Record<string, unknown>;
  if (method === 'setWebhook') return answer(200, { ok: true, result: true, description: 'Webhook was set' });
  if (method === 'deleteWebhook') return answer(200, { ok: true, result: true, description: 'Webhook was deleted' });
  if (method === 'sendMessage') {
    const plan = sendPlan?.(calls('sendMessage').length);
    if (plan) return answer(plan.status, plan.body);
    return answer(200, {
      ok: true,
      result: { message_id: ++nextMessageId, chat: { id: body.chat_id, type: 'private' }, date: Math.floor(Date.now() / 1000), text: body.text },
    });
  }
  return answer(404, { ok: false, error_code: 404, description: 'Not Found: method not found' });
}

function calls(method: string): Received[] {
  return api.received.filter((r) => r.url.endsWith(`/${method}`));
}

beforeAll(async () => {
  api = await new Receiver().start();
  api.behaviour = telegram;
  t = await buildTestApp({ env: { TELEGRAM_API_BASE_URL: api.url(''), WEBHOOK_RETRY_DELAYS_S: '0,0,0,0', WEBHOOK_TIMEOUT_MS: '2000' } });
});
afterAll(async () => {
  await t.close();
  await api.stop();
});
afterEach(() => {
  sendPlan = null;
  api.received.length = 0;
});

const base = (org: OrgFixture = t.orgA) => `/api/v1/orgs/${org.orgId}`;
const owner = (org: OrgFixture = t.orgA) => ({ token: org.token });
let counter = 0;
const unique = (label: string) => `${label}-${++counter}-${Date.now()}`;

/** A token as BotFather issues it, known to the stand-in. */
function botToken(): string {
  const token = `${700000000 + ++counter}:AA${randomBytes(24).toString('base64url')}`;
  tokens.add(token);
  return token;
}

interface Inbox {
  id: string;
  channel: string;
  inboundUrl: string;
  config: Record<string, unknown>;
  secrets: { secretToken: string };
}

async function telegramInbox(org: OrgFixture = t.orgA, token = botToken()): Promise<Inbox & { token: string }> {
  const res = await t.call({
    method: 'POST',
    url: `${base(org)}/inboxes`,
    auth: owner(org),
    payload: { name: unique('tg'), channel: 'telegram', credentials: { botToken: token } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { ...res.json(), token };
}

let updateId = 400_000_000;
let chatCounter = 0;
const chatId = () => 900_000_000 + ++chatCounter * 7 + (Date.now() % 1000) * 10_000;

function textUpdate(chat: number, text: string, message: Record<string, unknown> = {}) {
  return {
    update_id: ++updateId,
    message: {
      message_id: ++nextMessageId,
      from: { id: chat, is_bot: false, first_name: 'Ann', last_name: 'Lee', username: 'annlee', language_code: 'en' },
      chat: { id: chat, first_name: 'Ann', last_name: 'Lee', username: 'annlee', type: 'private' },
      date: Math.floor(Date.now() / 1000),
      text,
      ...message,
    },
  };
}

function deliver(inboxId: string, update: Record<string, unknown>, secret?: string | null) {
  return t.call({
    method: 'POST',
    url: `/api/v1/hooks/telegram/${inboxId}`,
    headers: secret ? { 'x-telegram-bot-api-secret-token': secret } : {},
    payload: update,
  });
}

async function storedIn(inboxId: string) {
  return t.database.db.select().from(messages).where(eq(messages.inboxId, inboxId)).orderBy(messages.at, messages.id);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function conversationsOf(inboxId: string, org: OrgFixture = t.orgA): Promise<Record<string, any>[]> {
  const res = await t.call({ method: 'GET', url: `${base(org)}/conversations`, auth: owner(org), query: { inboxId } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().items;
}

/** An inbox with one inbound message in it, and that conversation. */
async function conversationWithContact() {
  const inbox = await telegramInbox();
  const chat = chatId();
  expect((await deliver(inbox.id, textUpdate(chat, 'Hello bot'), inbox.secrets.secretToken)).statusCode).toBe(200);
  const [conversation] = await conversationsOf(inbox.id);
  api.received.length = 0;
  return { inbox, chat, conversation: conversation! };
}

async function finalState(messageId: string) {
  return eventually(async () => {
    const [row] = await t.database.db.select().from(messages).where(eq(messages.id, messageId));
    return row && (row.status === 'sent' || row.status === 'failed') ? row : null;
  });
}

describe('telegram inboxes', () => {
  it('registers the webhook with the inbound URL and a secret token shown once; the bot token stays sealed', async () => {
    const token = botToken();
    const inbox = await telegramInbox(t.orgA, token);
    expect(inbox.inboundUrl).toMatch(new RegExp(`/api/v1/hooks/telegram/${inbox.id}$`));
    expect(inbox.secrets.secretToken).toMatch(/^[A-Za-z0-9_-]{32,256}$/);
    const [registered] = calls('setWebhook');
    expect(registered!.url).toBe(`/bot${token}/setWebhook`);
    expect(registered!.json).toEqual({ url: inbox.inboundUrl, secret_token: inbox.secrets.secretToken, allowed_updates: ['message'] });
    const [row] = await t.database.db.select().from(inboxes).where(eq(inboxes.id, inbox.id));
    expect(row!.credentialsSealed).not.toContain(token);
    expect(row!.secretHash).not.toContain(inbox.secrets.secretToken);
    const got = await t.call({ method: 'GET', url: `${base()}/inboxes/${inbox.id}`, auth: owner() });
    expect(got.json()).toMatchObject({ id: inbox.id, channel: 'telegram' });
    expect(got.body).not.toContain(token);
    expect(got.body).not.toContain(inbox.secrets.secretToken);
  });

  it('refuses a missing or malformed bot token with 400, and a token Telegram refuses with 422 CHANNEL_SETUP_FAILED, storing nothing', async () => {
    const before = (await t.database.db.select().from(inboxes).where(eq(inboxes.channel, 'telegram'))).length;
    const create = (payload: Record<string, unknown>) =>
      t.call({ method: 'POST', url: `${base()}/inboxes`, auth: owner(), payload: { name: 'tg', channel: 'telegram', ...payload } });
    const missing = await create({});
    expect(missing.statusCode).toBe(400);
    expect(missing.json().details).toEqual([expect.objectContaining({ field: 'body.credentials.botToken' })]);
    const malformed = await create({ credentials: { botToken: '123:abc/../../evil' } });
    expect(malformed.statusCode).toBe(400);
    expect((await create({ credentials: { botToken: botToken() }, config: { url: 'https://example.com' } })).statusCode).toBe(400);
    expect(calls('setWebhook')).toHaveLength(0);

    const unknown = `${700000000 + ++counter}:AA${randomBytes(24).toString('base64url')}`;
    const refused = await create({ credentials: { botToken: unknown } });
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.json()).toMatchObject({ code: 'CHANNEL_SETUP_FAILED' });
    expect(refused.json().message).toContain('Unauthorized');
    expect(refused.body).not.toContain(unknown);
    expect(calls('setWebhook')).toHaveLength(1);
    expect((await t.database.db.select().from(inboxes).where(eq(inboxes.channel, 'telegram'))).length).toBe(before);
  });

  it('a new bot token re-registers the webhook with a new secret; the old secret is refused from then on', async () => {
    const inbox = await telegramInbox();
    const chat = chatId();
    // A change without credentials leaves Telegram alone.
    const renamed = await t.call({
      method: 'PATCH',
      url: `${base()}/inboxes/${inbox.id}`,
      auth: owner(),
      payload: { name: 'Support bot', config: { faq: [{ question: 'Hours?', answer: '9 to 5' }] } },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(calls('setWebhook')).toHaveLength(1);
    expect((await deliver(inbox.id, textUpdate(chat, 'still here'), inbox.secrets.secretToken)).statusCode).toBe(200);

    // A token Telegram refuses changes nothing.
    const refused = await t.call({
      method: 'PATCH',
      url: `${base()}/inboxes/${inbox.id}`,
      auth: owner(),
      payload: { credentials: { botToken: `${700000000 + ++counter}:AAnope` } },
    });
    expect(refused.statusCode).toBe(422);
    expect((await deliver(inbox.id, textUpdate(chat, 'and now'), inbox.secrets.secretToken)).statusCode).toBe(200);

    const newToken = botToken();
    const changed = await t.call({ method: 'PATCH', url: `${base()}/inboxes/${inbox.id}`, auth: owner(), payload: { credentials: { botToken: newToken } } });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.body).not.toContain(newToken);
    const registered = calls('setWebhook').at(-1)!;
    expect(registered.url).toBe(`/bot${newToken}/setWebhook`);
    const { secret_token: newSecret, url } = registered.json as { secret_token: string; url: string };
    expect(url).toBe(inbox.inboundUrl);
    expect(newSecret).not.toBe(inbox.secrets.secretToken);
    // The old bot is told to stop sending here; a refused token or a rename told it nothing.
    expect(calls('deleteWebhook').map((r) => r.url)).toEqual([`/bot${inbox.token}/deleteWebhook`]);
    expect((await deliver(inbox.id, textUpdate(chat, 'old secret'), inbox.secrets.secretToken)).statusCode).toBe(401);
    expect((await deliver(inbox.id, textUpdate(chat, 'new bot'), newSecret)).statusCode).toBe(200);
    expect((await storedIn(inbox.id)).map((m) => m.text)).toEqual(['still here', 'and now', 'new bot']);

    // Replies now go out through the new bot.
    const [conversation] = await conversationsOf(inbox.id);
    const reply = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${conversation!.id}/messages`,
      auth: owner(),
      payload: { text: 'from the new bot' },
    });
    expect((await finalState(reply.json().id)).status).toBe('sent');
    expect(calls('sendMessage').map((r) => r.url)).toEqual([`/bot${newToken}/sendMessage`]);

    // Deleting the inbox deletes the bot's webhook: Telegram stops retrying into a 401.
    expect((await t.call({ method: 'DELETE', url: `${base()}/inboxes/${inbox.id}`, auth: owner() })).statusCode).toBe(204);
    expect(
      calls('deleteWebhook')
        .map((r) => r.url)
        .at(-1),
    ).toBe(`/bot${newToken}/deleteWebhook`);
  });

  it('keeps organizations apart: another organization cannot see, change or delete the inbox or its conversations', async () => {
    const { inbox, conversation } = await conversationWithContact();
    const b = { token: t.orgB.token };
    for (const path of [`/inboxes/${inbox.id}`, `/conversations/${conversation.id}`, `/conversations/${conversation.id}/messages`]) {
      expect((await t.call({ method: 'GET', url: `${base(t.orgB)}${path}`, auth: b })).statusCode, path).toBe(404);
    }
    expect(
      (await t.call({ method: 'PATCH', url: `${base(t.orgB)}/inboxes/${inbox.id}`, auth: b, payload: { credentials: { botToken: botToken() } } })).statusCode,
    ).toBe(404);
    expect((await t.call({ method: 'DELETE', url: `${base(t.orgB)}/inboxes/${inbox.id}`, auth: b })).statusCode).toBe(404);
    expect(
      (await t.call({ method: 'POST', url: `${base(t.orgB)}/conversations/${conversation.id}/messages`, auth: b, payload: { text: 'hijack' } })).statusCode,
    ).toBe(404);
    const listB = await t.call({ method: 'GET', url: `${base(t.orgB)}/inboxes`, auth: b });
    expect(listB.json().items.map((i: { id: string }) => i.id)).not.toContain(inbox.id);
    expect(calls('setWebhook')).toHaveLength(0);
    expect(calls('sendMessage')).toHaveLength(0);
    expect((await t.call({ method: 'GET', url: `${base()}/inboxes/${inbox.id}`, auth: owner() })).statusCode).toBe(200);
  });
});

describe('telegram inbound', () => {
  it('stores a message from a verified update with its conversation and events; a redelivered update is stored once', async () => {
    const inbox = await telegramInbox();
    // A chat id can look like a phone number; it is not one, so no lead is made of it.
    const chat = 4155550000 + (counter % 9000);
    const receivedBefore = (await eventsOf(t, t.orgA.orgId, 'message.received')).length;
    const leadsBefore = (await eventsOf(t, t.orgA.orgId, 'lead.created')).length;
    const update = textUpdate(chat, 'Hi, do you ship to Lisbon?');
    const first = await deliver(inbox.id, update, inbox.secrets.secretToken);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toEqual({ ok: true });
    const again = await deliver(inbox.id, update, inbox.secrets.secretToken);
    expect(again.statusCode).toBe(200);

    const stored = await storedIn(inbox.id);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ direction: 'in', sender: 'contact', status: 'received', text: 'Hi, do you ship to Lisbon?' });
    const [conversation] = await conversationsOf(inbox.id);
    expect(conversation).toMatchObject({ channel: 'telegram', status: 'OPEN', contact: { address: String(chat), name: 'Ann Lee' }, unreadCount: 1 });
    expect(conversation!.leadId).toBeUndefined();
    expect((await eventsOf(t, t.orgA.orgId, 'lead.created')).length).toBe(leadsBefore);

    const received = (await eventsOf(t, t.orgA.orgId, 'message.received')).filter((e) => e.payload.conversation.inboxId === inbox.id);
    expect(received).toHaveLength(1);
    expect(received[0]!.payload.message).toMatchObject({ id: stored[0]!.id, text: 'Hi, do you ship to Lisbon?' });
    expect((await eventsOf(t, t.orgA.orgId, 'message.received')).length).toBe(receivedBefore + 1);
    const opened = (await eventsOf(t, t.orgA.orgId, 'conversation.opened')).filter((e) => e.payload.conversation.inboxId === inbox.id);
    expect(opened).toHaveLength(1);

    // The next message of the same chat joins the thread.
    expect((await deliver(inbox.id, textUpdate(chat, 'Also Porto'), inbox.secrets.secretToken)).statusCode).toBe(200);
    const list = await t.call({ method: 'GET', url: `${base()}/conversations/${conversation!.id}/messages`, auth: owner() });
    expect(list.json().items.map((m: { text: string }) => m.text)).toEqual(['Hi, do you ship to Lisbon?', 'Also Porto']);
  });

  it("refuses a wrong or missing secret token, another inbox's token, an unknown inbox and an inbox of another channel with 401, storing nothing", async () => {
    const inbox = await telegramInbox();
    const other = await telegramInbox();
    const apiInbox = await t.call({
      method: 'POST',
      url: `${base()}/inboxes`,
      auth: owner(),
      payload: { name: 'api', channel: 'api', config: { url: 'https://example.com/out' } },
    });
    const receivedBefore = (await eventsOf(t, t.orgA.orgId, 'message.received')).length;
    const attempts: [string, string | null][] = [
      [inbox.id, 'wrong-secret'],
      [inbox.id, null],
      [inbox.id, inbox.secrets.secretToken.slice(0, -1)],
      [inbox.id, other.secrets.secretToken],
      ['inb_doesnotexist', inbox.secrets.secretToken],
      [apiInbox.json().id, inbox.secrets.secretToken],
    ];
    for (const [id, secret] of attempts) {
      const res = await deliver(id, textUpdate(chatId(), 'let me in'), secret);
      expect(res.statusCode, `${id} ${secret}`).toBe(401);
      expect(res.json()).toMatchObject({ code: 'UNAUTHORIZED' });
    }
    expect(await storedIn(inbox.id)).toHaveLength(0);
    expect(await storedIn(apiInbox.json().id)).toHaveLength(0);
    expect((await eventsOf(t, t.orgA.orgId, 'message.received')).length).toBe(receivedBefore);
  });

  it('stores media as a placeholder with its caption, names a group by its title, and stores nothing for updates that are not new messages', async () => {
    const inbox = await telegramInbox();
    const secret = inbox.secrets.secretToken;
    const chat = chatId();
    const photo = textUpdate(chat, '', {
      text: undefined,
      photo: [{ file_id: 'AgAD', file_unique_id: 'x', width: 90, height: 90 }],
      caption: 'Is this one in stock?',
    });
    const sticker = textUpdate(chat, '', { text: undefined, sticker: { file_id: 'CAAD', emoji: '👍' } });
    const edited = { update_id: ++updateId, edited_message: textUpdate(chat, 'edited').message };
    const joined = textUpdate(chat, '', { text: undefined, new_chat_members: [{ id: 1, is_bot: false, first_name: 'Bo' }] });
    for (const update of [photo, sticker, edited, joined]) expect((await deliver(inbox.id, update, secret)).statusCode).toBe(200);
    expect((await storedIn(inbox.id)).map((m) => m.text)).toEqual(['[photo] Is this one in stock?', '[sticker]']);

    const group = -1001234567890 - counter;
    const inGroup = textUpdate(group, 'hello team', { chat: { id: group, title: 'Acme buyers', type: 'supergroup' } });
    expect((await deliver(inbox.id, inGroup, secret)).statusCode).toBe(200);
    const threads = await conversationsOf(inbox.id);
    expect(threads.find((c) => c.contact.address === String(group))).toMatchObject({ contact: { name: 'Acme buyers' } });

    // A body that is not an update is refused; a large one is refused before it is read.
    expect((await deliver(inbox.id, { message: { text: 'no update id' } }, secret)).statusCode).toBe(400);
    const huge = textUpdate(chat, 'x'.repeat(300 * 1024));
    expect((await deliver(inbox.id, huge, secret)).statusCode).toBe(413);
    expect(await storedIn(inbox.id)).toHaveLength(3);
  });
});

describe('telegram outbound', () => {
  it('sends a human reply with sendMessage to the chat; the message is sent with <chat id>:<message id> and message.sent', async () => {
    const { inbox, chat, conversation } = await conversationWithContact();
    const reply = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${conversation.id}/messages`,
      auth: owner(),
      payload: { text: 'Yes, we ship to Lisbon.' },
    });
    expect(reply.statusCode, reply.body).toBe(201);
    const sent = await finalState(reply.json().id);
    expect(sent.status).toBe('sent');
    const [call] = calls('sendMessage');
    expect(call!.url).toBe(`/bot${inbox.token}/sendMessage`);
    expect(call!.json).toEqual({ chat_id: chat, text: 'Yes, we ship to Lisbon.' });
    expect(sent.externalId).toBe(`${chat}:${nextMessageId}`);
    const event = await eventually(async () => (await eventsOf(t, t.orgA.orgId, 'message.sent')).find((e) => e.payload.message.id === sent.id));
    expect(event.payload).toMatchObject({ sender: 'human', message: { status: 'sent', externalId: sent.externalId } });
  });

  it("retries after Telegram's 429 (retry_after) and a 5xx, then records sent", async () => {
    const { conversation } = await conversationWithContact();
    sendPlan = (n) => {
      if (n === 1)
        return { status: 429, body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 1', parameters: { retry_after: 1 } } };
      if (n === 2) return { status: 502, body: { ok: false, error_code: 502, description: 'Bad Gateway' } };
      return undefined;
    };
    const reply = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${conversation.id}/messages`,
      auth: owner(),
      payload: { text: 'third time lucky' },
    });
    const sent = await finalState(reply.json().id);
    expect(sent).toMatchObject({ status: 'sent', attempts: 3 });
    expect(calls('sendMessage')).toHaveLength(3);
  });

  it('asks for the wait Telegram names in retry_after, and retries network failures', async () => {
    const env = {
      allowPrivate: false,
      timeoutMs: 2000,
      whatsappApiBaseUrl: '',
      telegramApiBaseUrl: api.url(''),
      smtpUrl: undefined,
      publicUrl: 'https://service.example',
    };
    const out = {
      orgId: 'org_x',
      projectId: 'prj_x',
      inbox: { id: 'inb_x', config: {}, signingSecret: null, credentials: { botToken: botToken() } },
      message: { id: 'msg_x', text: 'hi', at: new Date() },
      conversation: { id: 'cnv_x', subject: null, contact: { id: 'cnt_x', name: null, address: '12345' } },
    };
    sendPlan = () => ({ status: 429, body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 7', parameters: { retry_after: 7 } } });
    // The operator's API base on loopback is reached even where users' URLs may not be private.
    expect(await new TelegramChannel(env).send(out)).toEqual({
      ok: false,
      retry: true,
      retryAfterS: 7,
      error: 'Telegram answered 429: Too Many Requests: retry after 7',
    });
    const closed = await new Receiver().start();
    const port = closed.port;
    await closed.stop();
    const unreachable = await new TelegramChannel({ ...env, telegramApiBaseUrl: `http://127.0.0.1:${port}` }).send(out);
    expect(unreachable).toMatchObject({ ok: false, retry: true });
    expect((unreachable as { error: string }).error).not.toContain(out.inbox.credentials.botToken);
  });

  it("fails a message Telegram refuses (403, the bot was blocked) with Telegram's description, once, without message.sent", async () => {
    const { conversation } = await conversationWithContact();
    sendPlan = () => ({ status: 403, body: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' } });
    const reply = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${conversation.id}/messages`,
      auth: owner(),
      payload: { text: 'are you there?' },
    });
    const failed = await finalState(reply.json().id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 1 });
    expect(failed.error).toContain('Forbidden: bot was blocked by the user');
    const list = await t.call({ method: 'GET', url: `${base()}/conversations/${conversation.id}/messages`, auth: owner() });
    expect(list.json().items.at(-1)).toMatchObject({ status: 'failed', error: expect.stringContaining('bot was blocked') });
    expect(calls('sendMessage')).toHaveLength(1);
    expect((await eventsOf(t, t.orgA.orgId, 'message.sent')).find((e) => e.payload.message.id === failed.id)).toBeUndefined();
  });

  it('a chat that shares its own phone number or writes an e-mail address is linked to that lead; a campaign reaches exactly the leads with a chat, in that chat (others NO_ADDRESS)', async () => {
    const inbox = await telegramInbox();
    const secret = inbox.secrets.secretToken;
    const [byEmail, byCard, byOthersCard] = [chatId(), chatId(), chatId()];
    const email = `${unique('tg-ann')}@example.com`;
    const phone = `+3519${String(Date.now()).slice(-8)}`;
    expect((await deliver(inbox.id, textUpdate(byEmail, `Hi! Write to me at ${email} please`), secret)).statusCode).toBe(200);
    expect(
      (
        await deliver(
          inbox.id,
          textUpdate(byCard, '', { text: undefined, contact: { phone_number: phone.slice(1), first_name: 'Ann', user_id: byCard } }),
          secret,
        )
      ).statusCode,
    ).toBe(200);
    // Someone else's card says nothing about who writes.
    expect(
      (
        await deliver(
          inbox.id,
          textUpdate(byOthersCard, '', { text: undefined, contact: { phone_number: '+351911111111', first_name: 'Bob', user_id: 42 } }),
          secret,
        )
      ).statusCode,
    ).toBe(200);
    const threads = new Map((await conversationsOf(inbox.id)).map((c) => [c.contact.address, c]));
    const leadOf = async (query: Record<string, string>) => {
      const res = await t.call({ method: 'GET', url: `${base()}/leads`, auth: owner(), query });
      return res.json().items[0] as { id: string; source: string; email?: string; phone?: string };
    };
    const ann = await leadOf({ q: email });
    const carded = await leadOf({ q: phone.slice(1) });
    expect(ann).toMatchObject({ email, source: 'telegram' });
    expect(carded).toMatchObject({ phone, source: 'telegram' });
    expect(threads.get(String(byEmail))!.leadId).toBe(ann.id);
    expect(threads.get(String(byCard))!.leadId).toBe(carded.id);
    expect(threads.get(String(byOthersCard))!.leadId).toBeUndefined();

    const cold = (
      await t.call({ method: 'POST', url: `${base()}/leads`, auth: owner(), payload: { email: `${unique('tg-cold')}@example.com`, name: 'Cold' } })
    ).json();
    const created = await t.call({
      method: 'POST',
      url: `${base()}/campaigns`,
      auth: owner(),
      payload: {
        name: 'Telegram news',
        inboxId: inbox.id,
        audience: { leadIds: [ann.id, carded.id, cold.id] },
        steps: [{ delaySeconds: 0, text: 'News for {{ lead.name }}' }],
        settings: { perMinute: 1000 },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    api.received.length = 0;
    const started = await t.call({ method: 'POST', url: `${base()}/campaigns/${created.json().id}/start`, auth: owner() });
    expect(started.statusCode, started.body).toBe(200);
    const finished = await eventually(async () => {
      const c = (await t.call({ method: 'GET', url: `${base()}/campaigns/${created.json().id}`, auth: owner() })).json();
      return c.status === 'FINISHED' ? c : undefined;
    });
    expect(finished.stats).toMatchObject({ total: 3, sent: 2, skipped: 1, failed: 0 });
    const recipients = (await t.call({ method: 'GET', url: `${base()}/campaigns/${created.json().id}/recipients`, auth: owner() })).json().items as {
      leadId: string;
      status: string;
      skipReason?: string;
    }[];
    expect(recipients.find((r) => r.leadId === cold.id)).toMatchObject({ status: 'SKIPPED', skipReason: 'NO_ADDRESS' });
    const sent = calls('sendMessage').map((r) => r.json as { chat_id: number | string; text: string });
    expect(sent.map((m) => String(m.chat_id)).sort()).toEqual([String(byEmail), String(byCard)].sort());
    expect(sent.find((m) => String(m.chat_id) === String(byEmail))!.text).toBe('News for Ann Lee');
    // In the chat's own conversation, not a new one.
    const out = await t.database.db
      .select()
      .from(messages)
      .where(and(eq(messages.conversationId, threads.get(String(byEmail))!.id), eq(messages.direction, 'out')));
    expect(out.map((m) => [m.sender, m.text, m.status])).toEqual([['campaign', 'News for Ann Lee', 'sent']]);
  });

  it('cannot start a conversation (422 CHANNEL_CANNOT_INITIATE) and takes no templates, storing nothing', async () => {
    const inbox = await telegramInbox();
    const lead = await t.call({
      method: 'POST',
      url: `${base()}/leads`,
      auth: owner(),
      payload: { email: `${unique('tg-lead')}@example.com`, name: 'Cold lead' },
    });
    const started = await t.call({
      method: 'POST',
      url: `${base()}/conversations`,
      auth: owner(),
      payload: { inboxId: inbox.id, leadId: lead.json().id, text: 'Hello from us' },
    });
    expect(started.statusCode, started.body).toBe(422);
    expect(started.json()).toMatchObject({ code: 'CHANNEL_CANNOT_INITIATE' });
    expect(await conversationsOf(inbox.id)).toHaveLength(0);
    expect(await storedIn(inbox.id)).toHaveLength(0);

    const { conversation } = await conversationWithContact();
    const template = await t.call({
      method: 'POST',
      url: `${base()}/conversations/${conversation.id}/messages`,
      auth: owner(),
      payload: { template: { name: 'welcome', language: 'en' } },
    });
    expect(template.statusCode).toBe(400);
    const rows = await t.database.db
      .select()
      .from(messages)
      .where(and(eq(messages.conversationId, conversation.id), eq(messages.direction, 'out')));
    expect(rows).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 200));
    expect(calls('sendMessage')).toHaveLength(0);
  });
});

describe('provider webhook routes under a flood', () => {
  it('count requests per client address (PROVIDER_WEBHOOK_RATE_LIMIT_MAX) and answer 429 with Retry-After past it', async () => {
    const limited = await buildTestApp({ env: { PROVIDER_WEBHOOK_RATE_LIMIT_MAX: '3' }, workers: false });
    try {
      const post = (path: string) => limited.call({ method: 'POST', url: `/api/v1/hooks/${path}/inbox_nope`, payload: { update_id: 1 } });
      for (let i = 0; i < 3; i++) expect((await post('telegram')).statusCode).toBe(401);
      const over = await post('telegram');
      expect(over.statusCode).toBe(429);
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      expect(over.json()).toMatchObject({ code: 'RATE_LIMIT' });
      // Each route counts apart.
      expect((await post('whatsapp')).statusCode).toBe(401);
    } finally {
      await limited.close();
    }
  });
});
