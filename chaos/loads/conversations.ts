import type { Answer, Check, Load, StandIn, World } from '../world.ts';
import { BOT_MODEL, installModel } from './conversations-model.ts';
import { Outbox, apiReceiver, mime, signMeta, telegramApi, telegramUpdate, tokenIn, whatsappApi, whatsappDelivery } from './conversations-providers.ts';
import { pause, readStream } from './conversations-sse.ts';

/**
 * Inbound messages on every channel with the bot on, human replies, hand-offs and closes, and
 * organization stream readers that reconnect at random (docs/conversations.md, CONTRACT §8).
 *
 * Every inbound delivery carries its own provider id; one that was not acknowledged (no answer,
 * a 5xx) is sent again later with the same id, as the providers do, and now and then an
 * acknowledged one is sent again (a provider's retry after a lost answer). Only what the service
 * acknowledged (2xx) is kept and checked:
 *
 * 1. inbound stored once — each acknowledged provider id (the web widget's message id) is one row;
 * 2. outbound sent — each accepted human reply reached its provider stand-in (web: `sent`), the
 *    api channel's envelope id and e-mail's Message-ID the same on every attempt, `message.sent`
 *    at most once; deliveries repeated under faults are counted (at least once is the promise);
 * 3. the bot — each inbound message taken by at most one turn, one turn at a time per
 *    conversation, at most one bot reply per turn (the model stand-in replies once per turn), every
 *    turn final.
 * 4. the organization stream answers a reconnect on every instance and carries a new message.
 */

type Channel = 'whatsapp' | 'telegram' | 'email' | 'api' | 'web';
const CHANNELS: readonly Channel[] = ['whatsapp', 'telegram', 'email', 'api', 'web'];
const CONTACTS_PER_CHANNEL = 12;
const FINAL = ['succeeded', 'failed', 'budget_exceeded', 'max_steps', 'canceled'];

interface Inbox {
  id: string;
  channel: Channel;
  /** WhatsApp: the app secret; Telegram: the secret token; e-mail: the inbound token. */
  secret: string;
  phoneNumberId?: string;
  botId?: string;
  address?: string;
}

interface Contact {
  channel: Channel;
  /** WhatsApp digits, Telegram chat id, e-mail or api address, web: a label. */
  address: string;
  name: string;
  /** Web: the widget session. */
  session?: string;
}

/** An inbound delivery, kept (without its body) until the service acknowledged it. */
interface Delivery {
  channel: Channel;
  contact: Contact;
  /** The provider id the service stores as `externalId` (web: none until stored). */
  externalId: string;
  text: string;
  tries: number;
  /** Telegram: the update id and message id, so a retry is the same update. */
  updateId?: number;
}

interface Reply {
  messageId: string;
  conversationId: string;
  channel: Channel;
}

interface State {
  inboxes: Map<Channel, Inbox>;
  inboxIds: string[];
  contacts: Map<Channel, Contact[]>;
  outbox: Outbox;
  apiStandIn: StandIn;
  /** Acknowledged inbound: provider id → channel (web: message id → 'web'). */
  stored: Map<string, Channel>;
  /** Acknowledged deliveries kept for a provider-style retry now and then (a bounded sample). */
  resend: Delivery[];
  /** Deliveries not acknowledged yet, sent again by later ticks. */
  pending: Delivery[];
  replies: Map<string, Reply>;
  open: { id: string; channel: Channel }[];
  openAt: number;
  smtpSeen: number;
  serial: number;
  telegramUpdate: number;
  streamFrames: number;
  streamOpens: number;
  streamRefused: number;
}

let state: State | null = null;

const must = (): State => {
  if (!state) throw new Error('conversations: setup has not run');
  return state;
};

const ok = (a: Answer) => a.status >= 200 && a.status < 300;

function next(): number {
  return ++must().serial;
}

async function createInbox(world: World, body: Record<string, unknown>): Promise<Answer> {
  const answer = await world.api.until('POST', `${world.api.org}/inboxes`, {
    body: { ...body, bot: { enabled: true, modelId: BOT_MODEL } },
    routeClass: 'inbox.create',
    withinMs: 60_000,
  });
  if (answer.status !== 201)
    throw new Error(`conversations: creating the ${String(body.channel)} inbox answered ${answer.status} ${answer.text.slice(0, 300)}`);
  return answer;
}

function newContact(world: World, channel: Channel): Contact {
  const n = next();
  const tag = world.rng.id(6).toLowerCase();
  const name = `Chaos ${tag} Contact${n}`;
  switch (channel) {
    case 'whatsapp':
      return { channel, address: `49151${String(10_000_000 + n * 7919).slice(-8)}`, name };
    case 'telegram':
      return { channel, address: String(5_100_000_000 + n), name };
    case 'email':
      return { channel, address: `mail-${tag}-${n}@chaos-mail.example`, name };
    case 'api':
      return { channel, address: `api-${tag}-${n}@chaos-api.example`, name };
    case 'web':
      return { channel, address: `visitor-${tag}-${n}`, name };
  }
}

function contactFor(world: World, channel: Channel): Contact {
  const pool = must().contacts.get(channel)!;
  // Now and then a new person replaces one of the pool: a new contact, lead and conversation.
  if (pool.length < CONTACTS_PER_CHANNEL || world.rng.next() < 0.1) {
    const contact = newContact(world, channel);
    if (pool.length < CONTACTS_PER_CHANNEL) pool.push(contact);
    else pool[world.rng.int(pool.length)] = contact;
    return contact;
  }
  return world.rng.pick(pool);
}

/** Sends one delivery as its provider would; true when the service acknowledged it (2xx). */
async function deliver(world: World, d: Delivery): Promise<boolean> {
  const s = must();
  const inbox = s.inboxes.get(d.channel)!;
  d.tries++;
  let answer: Answer;
  switch (d.channel) {
    case 'whatsapp': {
      const raw = whatsappDelivery(inbox.phoneNumberId!, d.contact.address, d.contact.name, d.externalId, d.text);
      answer = await world.api.request('POST', `/api/v1/hooks/whatsapp/${inbox.id}`, {
        raw,
        contentType: 'application/json',
        headers: { 'x-hub-signature-256': signMeta(inbox.secret, raw) },
        auth: 'none',
        routeClass: 'inbound.whatsapp',
      });
      break;
    }
    case 'telegram': {
      const raw = telegramUpdate(Number(d.contact.address), d.updateId!, d.updateId! % 1_000_000, d.contact.name, d.text);
      answer = await world.api.request('POST', `/api/v1/hooks/telegram/${inbox.id}`, {
        raw,
        contentType: 'application/json',
        headers: { 'x-telegram-bot-api-secret-token': inbox.secret },
        auth: 'none',
        routeClass: 'inbound.telegram',
      });
      break;
    }
    case 'email': {
      const raw = mime(d.contact.address, d.contact.name, inbox.address!, d.externalId, `Question from ${d.contact.name}`, d.text);
      answer = await world.api.request('POST', `/api/v1/hooks/email/${inbox.id}?token=${encodeURIComponent(inbox.secret)}`, {
        raw,
        contentType: 'message/rfc822',
        auth: 'none',
        routeClass: 'inbound.email',
      });
      break;
    }
    case 'api':
      answer = await world.api.request('POST', `${world.api.org}/inboxes/${inbox.id}/messages`, {
        body: { contact: { name: d.contact.name, address: d.contact.address }, text: d.text, externalId: d.externalId },
        auth: 'key',
        routeClass: 'inbound.api',
      });
      break;
    case 'web': {
      // The widget: a session (once per visitor, again after a 401), then the message. It has no
      // provider id: a message is known by the id the service answers with.
      if (!d.contact.session) {
        const session = await world.api.request('POST', `/api/v1/widget/${inbox.id}/sessions`, {
          body: { name: d.contact.name },
          auth: 'none',
          routeClass: 'inbound.web.session',
        });
        if (!ok(session)) return false;
        d.contact.session = String(session.json?.sessionToken ?? '');
      }
      answer = await world.api.request('POST', `/api/v1/widget/${inbox.id}/messages`, {
        body: { text: d.text },
        headers: { 'x-widget-session': d.contact.session },
        auth: 'none',
        routeClass: 'inbound.web',
      });
      if (answer.status === 401) d.contact.session = undefined;
      if (ok(answer)) {
        const id = String(answer.json?.message?.id ?? '');
        if (id) s.stored.set(id, 'web');
        world.count('conversations: inbound acknowledged');
      }
      // A widget message that got no answer is not sent again: the visitor would type it anew.
      return ok(answer);
    }
  }
  if (!ok(answer)) {
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 408 && answer.status !== 429) {
      world.count(`conversations: inbound refused ${answer.status}`);
      world.log(`conversations: ${d.channel} delivery ${d.externalId} refused ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    return false;
  }
  if (!s.stored.has(d.externalId)) world.count('conversations: inbound acknowledged');
  else world.count('conversations: inbound retries acknowledged');
  s.stored.set(d.externalId, d.channel);
  return true;
}

async function inbound(world: World): Promise<void> {
  const s = must();
  const roll = world.rng.next();
  // A delivery that was not acknowledged goes again, as the provider retries it.
  if (s.pending.length > 0 && roll < 0.3) {
    const d = s.pending.shift()!;
    if (await deliver(world, d)) remember(world, d);
    else if (d.tries < 20) s.pending.push(d);
    else world.count('conversations: inbound given up after 20 tries');
    return;
  }
  // A provider's retry of an acknowledged delivery (its answer lost): stores nothing new.
  if (s.resend.length > 0 && roll < 0.36) {
    await deliver(world, world.rng.pick(s.resend));
    return;
  }
  const channel = world.rng.pick(CHANNELS);
  const contact = contactFor(world, channel);
  const n = next();
  const id = world.rng.id(10);
  const text = `Hello, question ${n}: when do you open?`;
  const d: Delivery = { channel, contact, externalId: '', text, tries: 0 };
  const inbox = s.inboxes.get(channel)!;
  if (channel === 'whatsapp') d.externalId = `wamid.CHAOSIN${id}${n}`;
  else if (channel === 'telegram') {
    d.updateId = ++s.telegramUpdate;
    d.externalId = `${inbox.botId}:${d.updateId}`;
  } else if (channel === 'email') d.externalId = `<chaos-${id}-${n}@chaos-mail.example>`;
  else if (channel === 'api') d.externalId = `api-${id}-${n}`;
  if (await deliver(world, d)) remember(world, d);
  else if (channel !== 'web') s.pending.push(d);
}

function remember(world: World, d: Delivery): void {
  const s = must();
  if (d.channel === 'web') return;
  if (s.resend.length < 200) s.resend.push(d);
  else s.resend[world.rng.int(s.resend.length)] = d;
}

/** The open conversations of the load's inboxes, read through the API at most every 3 s. */
async function openConversations(world: World): Promise<{ id: string; channel: Channel }[]> {
  const s = must();
  if (Date.now() - s.openAt < 3000) return s.open;
  s.openAt = Date.now();
  const answer = await world.api.request('GET', `${world.api.org}/conversations?status=OPEN&pageSize=100&sort=-lastMessageAt`, {
    routeClass: 'conversation.list',
  });
  if (answer.status === 200 && Array.isArray(answer.json?.items)) {
    const mine = new Set(s.inboxIds);
    s.open = (answer.json.items as { id: string; inboxId: string; channel: Channel }[])
      .filter((c) => mine.has(c.inboxId))
      .map((c) => ({ id: c.id, channel: c.channel }));
  }
  return s.open;
}

async function humanReply(world: World): Promise<void> {
  const s = must();
  const open = await openConversations(world);
  if (open.length === 0) return;
  const conversation = world.rng.pick(open);
  const token = world.rng.id(12);
  const answer = await world.api.request('POST', `${world.api.org}/conversations/${conversation.id}/messages`, {
    body: { text: `A person answers [t:${token}]` },
    routeClass: 'conversation.reply',
  });
  if (answer.status === 201) {
    s.replies.set(token, { messageId: String(answer.json.id), conversationId: conversation.id, channel: conversation.channel });
    world.count('conversations: human replies accepted');
  } else if (answer.status === 409) {
    world.count('conversations: reply to a closed conversation (409)');
  }
}

async function handoffOrClose(world: World, close: boolean): Promise<void> {
  const open = await openConversations(world);
  if (open.length === 0) return;
  const conversation = world.rng.pick(open);
  const answer = await world.api.request('POST', `${world.api.org}/conversations/${conversation.id}/${close ? 'close' : 'handoff'}`, {
    body: close ? undefined : { reason: 'chaos: a person is needed' },
    routeClass: close ? 'conversation.close' : 'conversation.handoff',
  });
  if (ok(answer)) world.count(close ? 'conversations: closed' : 'conversations: handoffs');
  if (close && ok(answer)) must().open = must().open.filter((c) => c.id !== conversation.id);
}

/** Reads the e-mail the SMTP stand-in received since the last look: reply tokens and Message-IDs. */
function scanSmtp(world: World): void {
  const s = must();
  const received = world.smtp.received;
  for (; s.smtpSeen < received.length; s.smtpSeen++) {
    const mail = received[s.smtpSeen]!;
    if (!tokenIn(mail.text)) {
      if (mail.text.includes('Thanks, we got your message.')) s.outbox.record('email', '', '');
      continue;
    }
    const messageId = /^Message-ID:\s*(\S+)/im.exec(mail.raw)?.[1] ?? '?';
    s.outbox.record('email', mail.text, messageId);
  }
}

/** One organization stream reader: connects, counts frames, cuts the connection at random, reconnects. */
async function orgReader(world: World, n: number): Promise<void> {
  const s = must();
  while (!world.signal.aborted) {
    const cutAfter = 2000 + world.rng.int(20_000);
    s.streamOpens++;
    const stream = readStream(`${world.api.base()}${world.api.org}/events`, { 'x-api-key': world.api.apiKey }, () => s.streamFrames++, {
      signal: world.signal,
    });
    const timer = setTimeout(stream.cut, cutAfter);
    const outcome = await stream.done;
    clearTimeout(timer);
    world.count('conversations: org stream connections');
    if (outcome.status !== 200) {
      s.streamRefused++;
      world.count(`conversations: org stream open failed (${outcome.status || 'no answer'})`);
      await pause(500 + world.rng.int(1500), world.signal);
    } else if (outcome.end !== 'cut') {
      world.count('conversations: org stream ended by the server');
    }
    void n;
  }
}

async function refreshLoop(world: World): Promise<void> {
  while (!world.signal.aborted) {
    scanSmtp(world);
    installModel(world.model);
    await pause(2000, world.signal);
  }
}

async function setup(world: World): Promise<void> {
  installModel(world.model);
  const outbox = new Outbox();
  let provider = 0;
  world.whatsapp.handle = whatsappApi(outbox, () => ++provider);
  world.telegram.handle = telegramApi(outbox, () => 1_000_000 + ++provider);
  const apiStandIn = await world.standIn('conversations-api');
  apiStandIn.handle = apiReceiver(outbox, () => ++provider);
  state = {
    inboxes: new Map(),
    inboxIds: [],
    contacts: new Map(CHANNELS.map((c) => [c, []])),
    outbox,
    apiStandIn,
    stored: new Map(),
    resend: [],
    pending: [],
    replies: new Map(),
    open: [],
    openAt: 0,
    smtpSeen: world.smtp.received.length,
    serial: 0,
    telegramUpdate: 100_000_000 + world.rng.int(1_000_000) * 1000,
    streamFrames: 0,
    streamOpens: 0,
    streamRefused: 0,
  };
  const s = state;
  const tag = world.rng.id(6).toLowerCase();

  const phoneNumberId = String(100_000_000_000 + world.rng.int(1_000_000_000));
  const appSecret = `chaos-app-secret-${world.rng.id(16)}`;
  const wa = await createInbox(world, {
    name: `Chaos WhatsApp ${tag}`,
    channel: 'whatsapp',
    config: { phoneNumberId },
    credentials: { accessToken: `EAAG${world.rng.id(24)}`, appSecret },
  });
  s.inboxes.set('whatsapp', { id: wa.json.id, channel: 'whatsapp', secret: appSecret, phoneNumberId });

  const botId = String(7_000_000_000 + world.rng.int(1_000_000));
  const tg = await createInbox(world, { name: `Chaos Telegram ${tag}`, channel: 'telegram', credentials: { botToken: `${botId}:AAH${world.rng.id(32)}` } });
  s.inboxes.set('telegram', { id: tg.json.id, channel: 'telegram', secret: String(tg.json.secrets?.secretToken ?? ''), botId });

  const address = `support-${tag}@chaos-shop.example`;
  const em = await createInbox(world, { name: `Chaos E-mail ${tag}`, channel: 'email', config: { address, fromName: 'Chaos Shop' } });
  s.inboxes.set('email', { id: em.json.id, channel: 'email', secret: String(em.json.secrets?.token ?? ''), address });

  const api = await createInbox(world, { name: `Chaos API ${tag}`, channel: 'api', config: { url: apiStandIn.url('/conversations') } });
  s.inboxes.set('api', { id: api.json.id, channel: 'api', secret: String(api.json.secrets?.signingSecret ?? '') });

  const web = await createInbox(world, { name: `Chaos Web ${tag}`, channel: 'web', config: { allowedOrigins: ['http://localhost:5173'] } });
  s.inboxes.set('web', { id: web.json.id, channel: 'web', secret: '' });

  s.inboxIds = [...s.inboxes.values()].map((i) => i.id);
  world.log(`conversations: inboxes ${[...s.inboxes.values()].map((i) => `${i.channel}=${i.id}`).join(' ')}`);
}

async function tick(world: World): Promise<void> {
  const roll = world.rng.next();
  if (roll < 0.75) return inbound(world);
  if (roll < 0.9) return humanReply(world);
  if (roll < 0.95) return handoffOrClose(world, false);
  return handoffOrClose(world, true);
}

async function background(world: World): Promise<void> {
  await Promise.all([orgReader(world, 0), orgReader(world, 1), refreshLoop(world)]);
}

// ------------------------------------------------------------------------------------ checks

type Row = Record<string, unknown>;

async function sqlUntil<T = Row>(world: World, deadline: number, text: string, params?: unknown[]): Promise<T[]> {
  for (;;) {
    try {
      return await world.sql<T>(text, params);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await pause(1000);
    }
  }
}

/** Waits until the load's outbound messages have left the queue and its bot turns have ended (or the deadline). */
async function settle(world: World, deadline: number): Promise<void> {
  const s = must();
  const orgId = world.api.orgId;
  while (Date.now() < deadline) {
    scanSmtp(world);
    const [row] = await sqlUntil<{ queued: number; turns: number }>(
      world,
      deadline,
      `select (select count(*)::int from messages where inbox_id = any($1) and direction = 'out' and status = 'queued') as queued,
              (select count(*)::int from agent_runs where org_id = $2 and type = 'CHATBOT' and status in ('QUEUED', 'RUNNING')) as turns`,
      [s.inboxIds, orgId],
    );
    if (row!.queued === 0 && row!.turns === 0) return;
    await pause(2000);
  }
  world.log('conversations: the deadline came before the outbound queue and the bot turns settled');
}

async function checkInbound(world: World, deadline: number): Promise<Check> {
  const s = must();
  const provider = [...s.stored].filter(([, c]) => c !== 'web').map(([id]) => id);
  const web = [...s.stored].filter(([, c]) => c === 'web').map(([id]) => id);
  const byExternal = await sqlUntil<{ id: string; n: number }>(
    world,
    deadline,
    `select external_id as id, count(*)::int as n from messages where inbox_id = any($1) and direction = 'in' and external_id = any($2) group by external_id`,
    [s.inboxIds, provider],
  );
  const byId = await sqlUntil<{ id: string; n: number }>(world, deadline, `select id, count(*)::int as n from messages where id = any($1) group by id`, [web]);
  const found = new Map([...byExternal, ...byId].map((r) => [r.id, r.n]));
  const violations: string[] = [];
  for (const [id, channel] of s.stored) {
    const n = found.get(id) ?? 0;
    if (n !== 1) violations.push(`${channel} ${id} stored ${n}×`);
  }
  return { promise: 'every acknowledged inbound message stored exactly once', count: s.stored.size, violations };
}

async function checkOutbound(world: World, deadline: number): Promise<Check[]> {
  const s = must();
  scanSmtp(world);
  const ids = [...s.replies.values()].map((r) => r.messageId);
  const rows = await sqlUntil<{ id: string; status: string; error: string | null; external_id: string | null }>(
    world,
    deadline,
    `select id, status, error, external_id from messages where id = any($1)`,
    [ids],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const sentEvents = await sqlUntil<{ id: string; n: number }>(
    world,
    deadline,
    `select payload->>'messageId' as id, count(*)::int as n from events where org_id = $1 and type = 'message.sent' and payload->>'messageId' = any($2) group by 1`,
    [world.api.orgId, ids],
  );
  const sentCount = new Map(sentEvents.map((r) => [r.id, r.n]));
  const violations: string[] = [];
  const failed: string[] = [];
  let duplicates = 0;
  for (const [token, reply] of s.replies) {
    const row = byId.get(reply.messageId);
    const status = row?.status ?? 'missing';
    const delivered = reply.channel === 'web' ? (['sent', 'delivered', 'read'].includes(status) ? 1 : 0) : (s.outbox.byToken.get(token)?.deliveries ?? 0);
    const givenIds = s.outbox.byToken.get(token)?.ids ?? new Set<string>();
    if (status === 'failed') {
      failed.push(`${reply.channel} ${reply.messageId} (${(row?.error ?? '').slice(0, 80)})`);
      continue;
    }
    if (delivered === 0) violations.push(`${reply.channel} ${reply.messageId} not delivered (status ${status})`);
    else if (!['sent', 'delivered', 'read'].includes(status)) violations.push(`${reply.channel} ${reply.messageId} delivered but ${status}`);
    if (delivered > 1) duplicates += delivered - 1;
    // The api channel's envelope id is the message id on every attempt; e-mail's Message-ID is the same on every attempt.
    if (reply.channel === 'api' && [...givenIds].some((id) => id !== reply.messageId))
      violations.push(`api ${reply.messageId} envelope ids ${[...givenIds].join(',')}`);
    if (reply.channel === 'email' && givenIds.size > 1) violations.push(`email ${reply.messageId} Message-IDs ${[...givenIds].join(',')}`);
    if ((sentCount.get(reply.messageId) ?? 0) > 1) violations.push(`${reply.channel} ${reply.messageId} message.sent ${sentCount.get(reply.messageId)}×`);
  }
  if (duplicates > 0) {
    world.count('conversations: human replies delivered again (at least once)', duplicates);
    world.log(`conversations: ${duplicates} repeated deliveries of human replies (CONTRACT: at least once to the provider)`);
  }
  const queuedBot = await sqlUntil<{ id: string }>(
    world,
    deadline,
    `select id from messages where inbox_id = any($1) and direction = 'out' and sender = 'bot' and status = 'queued'`,
    [s.inboxIds],
  );
  for (const r of queuedBot) violations.push(`bot reply ${r.id} still queued`);
  return [
    { promise: 'every accepted human reply delivered to its provider (stable envelope id / Message-ID, message.sent once)', count: s.replies.size, violations },
    { promise: 'no accepted reply failed (retries given up after the stand-in faults)', count: s.replies.size, violations: failed },
  ];
}

async function checkBot(world: World, deadline: number): Promise<Check[]> {
  const s = must();
  const orgId = world.api.orgId;
  const inboundOnBot = await sqlUntil<{ n: number }>(
    world,
    deadline,
    `select count(*)::int as n from messages where inbox_id = any($1) and direction = 'in' and attempts > 0`,
    [s.inboxIds],
  );
  const twice = await sqlUntil<{ id: string; n: number }>(
    world,
    deadline,
    `select m->>'id' as id, count(distinct r.id)::int as n from agent_runs r, jsonb_array_elements(coalesce(r.input->'messages', '[]'::jsonb)) m
      where r.org_id = $1 and r.type = 'CHATBOT' group by 1 having count(distinct r.id) > 1`,
    [orgId],
  );
  const attempts = await sqlUntil<{ id: string; attempts: number }>(
    world,
    deadline,
    `select id, attempts from messages where inbox_id = any($1) and direction = 'in' and attempts > 1`,
    [s.inboxIds],
  );
  const overlapping = await sqlUntil<{ a: string; b: string }>(
    world,
    deadline,
    `select a.id as a, b.id as b from agent_runs a join agent_runs b
        on a.org_id = b.org_id and a.input->>'conversationId' = b.input->>'conversationId' and a.id < b.id
      where a.org_id = $1 and a.type = 'CHATBOT' and b.type = 'CHATBOT' and a.started_at is not null and b.started_at is not null
        and a.started_at < coalesce(b.finished_at, now()) and b.started_at < coalesce(a.finished_at, now())`,
    [orgId],
  );
  // With the load's model, a turn replies once: more bot messages in a conversation than turns
  // that reached the model is a reply sent twice.
  const extra = await sqlUntil<{ id: string; replies: number; turns: number }>(
    world,
    deadline,
    `select c.id, (select count(*)::int from messages m where m.conversation_id = c.id and m.sender = 'bot') as replies,
            (select count(*)::int from agent_runs r where r.org_id = c.org_id and r.type = 'CHATBOT' and r.input->>'conversationId' = c.id and r.model_calls > 0) as turns
       from conversations c where c.inbox_id = any($1)`,
    [s.inboxIds],
  );
  // Never over a person: no bot message after the conversation was handed off or taken over (each
  // transaction reads its time before it takes the conversation's lock: a second of slack).
  const overPerson = await sqlUntil<{ id: string; conversation_id: string }>(
    world,
    deadline,
    `select m.id, m.conversation_id from messages m join conversations c on c.id = m.conversation_id
      where c.inbox_id = any($1) and c.handled_by = 'human' and c.handoff_at is not null
        and m.sender = 'bot' and m.at > c.handoff_at + interval '1 second'`,
    [s.inboxIds],
  );
  const notFinal = await sqlUntil<{ id: string; status: string }>(
    world,
    deadline,
    `select id, status from agent_runs where org_id = $1 and type = 'CHATBOT' and status <> all($2)`,
    [orgId, FINAL],
  );
  const turns = await sqlUntil<{ status: string; n: number }>(
    world,
    deadline,
    `select status, count(*)::int as n from agent_runs where org_id = $1 and type = 'CHATBOT' group by status`,
    [orgId],
  );
  world.log(
    `conversations: bot turns ${turns.map((t) => `${t.status} ${t.n}`).join(', ') || 'none'}; bot replies without a token: ${[...s.outbox.untokened].map(([c, n]) => `${c} ${n}`).join(', ') || 'none'}`,
  );
  const violations = [
    ...twice.map((r) => `message ${r.id} taken by ${r.n} turns`),
    ...attempts.map((r) => `message ${r.id} attempts ${r.attempts}`),
    ...overlapping.map((r) => `turns ${r.a} and ${r.b} overlap`),
    ...extra.filter((r) => r.replies > r.turns).map((r) => `conversation ${r.id}: ${r.replies} bot replies for ${r.turns} turns`),
    ...overPerson.map((r) => `bot message ${r.id} after the hand-off of ${r.conversation_id}`),
  ];
  const turnCount = turns.reduce((sum, t) => sum + t.n, 0);
  return [
    {
      promise: 'each inbound message answered by at most one bot turn, one turn at a time, one reply per turn, none after a hand-off',
      count: inboundOnBot[0]!.n,
      violations,
    },
    { promise: 'every bot turn final', count: turnCount, violations: notFinal.map((r) => `${r.id} ${r.status}`) },
  ];
}

/** The run's instances (world.api.base(i) for each index that exists). */
function instanceCount(world: World): number {
  let n = 0;
  for (; n < 32; n++) {
    try {
      if (!world.api.base(n)) break;
    } catch {
      break;
    }
  }
  return Math.max(n, 1);
}

/**
 * A reconnect to the organization stream works on each instance, and a message another instance
 * stores reaches it (the streams of every instance hear every instance's commits).
 */
async function checkStream(world: World): Promise<Check> {
  const s = must();
  const violations: string[] = [];
  const instances = instanceCount(world);
  for (let i = 0; i < instances; i++) {
    const other = (i + 1) % instances;
    const seen: string[] = [];
    const stream = readStream(`${world.api.base(i)}${world.api.org}/events`, { 'x-api-key': world.api.apiKey }, (f) => {
      if (f.event === 'conversation.message') seen.push(f.data);
    });
    await pause(500);
    const marker = `stream check ${world.rng.id(10)}`;
    const inbox = s.inboxes.get('api')!;
    const sent = await world.api.until('POST', `${world.api.org}/inboxes/${inbox.id}/messages`, {
      body: { contact: { name: 'Stream Check', address: 'stream-check@chaos-api.example' }, text: marker, externalId: marker },
      auth: 'key',
      routeClass: 'inbound.api',
      instance: other,
      withinMs: 20_000,
    });
    if (ok(sent)) s.stored.set(marker, 'api');
    const until = Date.now() + 10_000;
    while (Date.now() < until && !seen.some((d) => d.includes(marker))) await pause(200);
    stream.cut();
    const outcome = await stream.done;
    if (outcome.status !== 200) violations.push(`instance ${i}: the stream answered ${outcome.status}`);
    else if (!seen.some((d) => d.includes(marker)))
      violations.push(`instance ${i}: no conversation.message in 10 s for a message stored by instance ${other} (${marker}, answered ${sent.status})`);
  }
  world.log(`conversations: org stream readers: ${s.streamOpens} connections, ${s.streamRefused} refused, ${s.streamFrames} frames`);
  return { promise: "the organization stream reconnects on each instance and carries another instance's new message", count: instances, violations };
}

export const load: Load = {
  name: 'conversations',
  ratePerSecond: 4,
  setup,
  tick,
  background,
  async check(world, deadline) {
    const s = must();
    // Deliveries still unacknowledged are sent again now that the system is whole, as providers would.
    for (const d of s.pending.splice(0)) {
      if (Date.now() > deadline) break;
      for (let i = 0; i < 5 && !(await deliver(world, d)); i++) await pause(500);
    }
    await settle(world, deadline - 5000);
    const checks = [await checkInbound(world, deadline), ...(await checkOutbound(world, deadline)), ...(await checkBot(world, deadline))];
    checks.push(await checkStream(world));
    return checks;
  },
};
