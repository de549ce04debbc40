import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { rows } from '../../platform/db.ts';
import { simpleParser } from 'mailparser';
import { buildTestApp, type OrgFixture, type TestApp } from '../../../test/harness.ts';
import { createHmac } from 'node:crypto';
import { SmtpStandIn } from '../../../test/smtp.ts';
import { Receiver } from '../../../test/receiver.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';
import { campaignSends } from './tables.ts';

/**
 * Campaigns over e-mail against a real SMTP server on loopback, with an injected clock so that
 * delays, sending windows and per-minute limits are crossed without waiting.
 */
let t: TestApp;
let smtp: SmtpStandIn;
/** The WhatsApp Cloud API (Graph) stand-in: accepts every message with a new wamid. */
let graph: Receiver;
let wamids = 0;
const clock = {
  at: Date.parse('2026-11-23T10:00:00Z'),
  now() {
    return new Date(this.at);
  },
};
const advance = (seconds: number) => {
  clock.at += seconds * 1000;
};

beforeAll(async () => {
  smtp = await new SmtpStandIn({ rejectRecipient: (address) => (address.startsWith('bounce') ? '5.1.1 No such user here' : null) }).start();
  graph = await new Receiver().start();
  graph.behaviour = (req) => {
    const to = (req.json as { to?: string } | undefined)?.to ?? '';
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: `wamid.C${++wamids}` }] }),
    };
  };
  t = await buildTestApp({
    clock,
    env: { SMTP_URL: smtp.url, WHATSAPP_API_BASE_URL: graph.url('/v21.0'), WEBHOOK_RETRY_DELAYS_S: '0,0', PUBLIC_URL: 'https://svc.example.com' },
  });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
  await graph?.stop();
});

const base = (org: OrgFixture = t.orgA) => `/api/v1/orgs/${org.orgId}`;
// API keys: the injected clock moves days ahead, past any access token's life.
const owner = (org: OrgFixture = t.orgA) => ({ apiKey: org.apiKey });
let counter = 0;
const unique = (label: string) => `${label}-${++counter}-${Date.now()}`;

async function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, org: OrgFixture = t.orgA) {
  const body = payload ?? (method === 'POST' ? {} : undefined);
  return t.call({ method, url: `${base(org)}${url}`, auth: owner(org), ...(body !== undefined ? { payload: body as object } : {}) });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function ok<T = Record<string, any>>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, status = 200): Promise<T> {
  const res = await call(method, url, payload);
  expect(res.statusCode, res.body).toBe(status);
  return res.json() as T;
}

async function emailInbox(): Promise<{ id: string; secrets: { token: string }; config: { address: string } }> {
  return ok('POST', '/inboxes', { name: 'Outreach', channel: 'email', config: { address: `${unique('sales')}@shop.example.com`, fromName: 'Shop' } }, 201);
}

async function lead(fields: Record<string, unknown>): Promise<string> {
  return (await ok<{ id: string }>('POST', '/leads', fields, 201)).id;
}

/** The URL of a mail's List-Unsubscribe header (folded or not). */
const unsubscribeLink = (raw: string) => raw.match(/^List-Unsubscribe:\s*<([^>]+)>/m)![1]!;

const mailsTo = (address: string) => smtp.received.filter((m) => m.rcptTo.includes(address));

/** A second project of organization A (projects are created by a person: a fresh login, as the clock has moved past earlier tokens). */
async function secondProject(): Promise<{ id: string }> {
  const login = await t.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: t.orgA.ownerEmail, password: t.orgA.password } });
  const res = await t.call({
    method: 'POST',
    url: `${base()}/projects`,
    auth: { token: login.json().tokens.accessToken },
    payload: { name: unique('second') },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function campaign(body: Record<string, unknown>) {
  return ok<{ id: string; status: string }>('POST', '/campaigns', body, 201);
}

/** Waits for the campaign to reach a state (the runner and the outbound loop work in the background). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function campaignWhen(id: string, test: (c: Record<string, any>) => boolean) {
  return eventually(async () => {
    const c = await ok('GET', `/campaigns/${id}`);
    return test(c) ? c : undefined;
  }, 15_000);
}

async function recipients(id: string, status?: string) {
  return (await ok<{ items: Record<string, any>[] }>('GET', `/campaigns/${id}/recipients?pageSize=100${status ? `&status=${status}` : ''}`)).items; // eslint-disable-line @typescript-eslint/no-explicit-any
}

describe('campaigns', () => {
  it('sends two personalised steps through an e-mail inbox: the follow-up answers in the thread, every mail carries RFC 8058 headers and a body link, stats count recipients, started and finished once', async () => {
    const inbox = await emailInbox();
    const tag = unique('tag');
    const a = `${unique('ada')}@example.org`;
    const b = `${unique('bob')}@example.org`;
    await lead({ name: 'Ada', email: a, tags: [tag] });
    await lead({ name: 'Bob', email: b, tags: [tag] });
    const c = await campaign({
      name: 'Welcome',
      inboxId: inbox.id,
      audience: { tags: [tag] },
      steps: [
        { delaySeconds: 0, subject: 'Hello {{ lead.name }}', text: 'Hi {{ lead.name }}, welcome!' },
        { delaySeconds: 3600, text: 'Any questions, {{ lead.name }}?' },
      ],
      settings: { perMinute: 100 },
    });
    expect(c.status).toBe('DRAFT');
    const started = await ok('POST', `/campaigns/${c.id}/start`);
    expect(started).toMatchObject({ status: 'RUNNING', total: 2 });
    await eventually(() => mailsTo(a).length === 1 && mailsTo(b).length === 1);
    const first = await simpleParser(mailsTo(a)[0]!.raw);
    expect(first.subject).toBe('Hello Ada');
    expect(first.text).toContain('Hi Ada, welcome!');
    expect(mailsTo(a)[0]!.raw).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r?$/m);
    const listUrl = unsubscribeLink(mailsTo(a)[0]!.raw);
    expect(listUrl).toMatch(/^https:\/\/svc\.example\.com\/api\/v1\/unsubscribe\/[\w.-]+$/);
    expect(first.text).toContain(listUrl);
    await campaignWhen(c.id, (x) => x.stats.sent === 2);
    // Nothing more before the delay; the follow-up after it, in the same thread.
    await new Promise((r) => setTimeout(r, 300));
    expect(mailsTo(a)).toHaveLength(1);
    advance(3601);
    await eventually(() => mailsTo(a).length === 2 && mailsTo(b).length === 2);
    const second = await simpleParser(mailsTo(a)[1]!.raw);
    expect(second.inReplyTo).toBe(first.messageId);
    expect(second.subject).toBe('Re: Hello Ada');
    expect(second.text).toContain('Any questions, Ada?');
    const done = await campaignWhen(c.id, (x) => x.status === 'FINISHED');
    expect(done.stats).toMatchObject({ total: 2, sent: 2, failed: 0, skipped: 0, pending: 0, replied: 0 });
    expect((await recipients(c.id)).map((r) => r.status)).toEqual(['COMPLETED', 'COMPLETED']);
    const startedEvents = (await eventsOf(t, t.orgA.orgId, 'campaign.started')).filter((e) => e.payload.campaign.id === c.id);
    expect(startedEvents).toHaveLength(1);
    expect(startedEvents[0]!.payload.campaign).toMatchObject({ name: 'Welcome', channel: 'email', total: 2 });
    const finished = await eventually(async () => (await eventsOf(t, t.orgA.orgId, 'campaign.finished')).filter((e) => e.payload.campaign.id === c.id));
    expect(finished).toHaveLength(1);
    expect(finished[0]!.payload).toMatchObject({ status: 'FINISHED', stats: { sent: 2, failed: 0, skipped: 0 } });
    const sent = (await eventsOf(t, t.orgA.orgId, 'message.sent')).filter(
      (e) => [a, b].some((x) => JSON.stringify(e.payload).includes(x)) || e.payload.sender === 'campaign',
    );
    expect(sent.length).toBeGreaterThanOrEqual(4);
  });

  it('skips with the reasons of CONTRACT §9: no address, the same address twice, suppressed, opted out, already in another running campaign', async () => {
    const inbox = await emailInbox();
    const tag = unique('skip');
    const dup = `${unique('dup')}@example.org`;
    const ok1 = await lead({ name: 'Fine', email: `${unique('fine')}@example.org`, tags: [tag] });
    await lead({ name: 'No mail', phone: '+14155550100', tags: [tag] });
    await lead({ name: 'Dup one', email: dup, tags: [tag] });
    await lead({ name: 'Dup two', email: dup.toUpperCase(), company: 'Other', tags: [tag] }).catch(() => null);
    const suppressedAddress = `${unique('sup')}@example.org`;
    await lead({ name: 'Suppressed', email: suppressedAddress, tags: [tag] });
    await ok('POST', '/suppressions', { channel: 'email', address: suppressedAddress.toUpperCase(), reason: 'complaint' }, 201);
    const optedOut = await lead({ name: 'Opted out', email: `${unique('out')}@example.org`, tags: [tag] });
    await ok('POST', `/leads/${optedOut}/consents`, { channel: 'email', status: 'opted_out', source: 'preference centre' }, 201);
    // Busy in another running campaign (its only step a day away).
    const busy = await lead({ name: 'Busy', email: `${unique('busy')}@example.org` });
    const other = await campaign({
      name: 'Other',
      inboxId: inbox.id,
      audience: { leadIds: [busy] },
      steps: [{ delaySeconds: 86400, subject: 'Later', text: 'Later' }],
    });
    await ok('POST', `/campaigns/${other.id}/start`);
    await call('PATCH', `/leads/${busy}`, { tags: [tag] });

    const c = await campaign({ name: 'Skips', inboxId: inbox.id, audience: { tags: [tag] }, steps: [{ delaySeconds: 0, subject: 'Hi', text: 'Hi' }] });
    const started = await ok('POST', `/campaigns/${c.id}/start`);
    const all = await recipients(c.id);
    expect(started.total).toBe(all.length);
    const reasons = Object.fromEntries(all.filter((r) => r.status === 'SKIPPED').map((r) => [r.leadId, r.skipReason]));
    expect(Object.values(reasons).sort()).toEqual(expect.arrayContaining(['IN_OTHER_CAMPAIGN', 'NO_ADDRESS', 'SUPPRESSED', 'SUPPRESSED']));
    expect(reasons[optedOut]).toBe('SUPPRESSED');
    expect(reasons[busy]).toBe('IN_OTHER_CAMPAIGN');
    expect(reasons[ok1]).toBeUndefined();
    const done = await campaignWhen(c.id, (x) => x.status === 'FINISHED');
    // Skipped and sent never both; each recipient counted once.
    expect(done.stats.skipped + done.stats.sent).toBe(done.stats.total);
    expect(done.stats.skipped).toBe(Object.keys(reasons).length);
    expect(mailsTo(suppressedAddress)).toHaveLength(0);
  });

  it("one-click unsubscribe without login suppresses the address; the next step is not sent (STOPPED); the link's page has a confirm button", async () => {
    const inbox = await emailInbox();
    const address = `${unique('leaver')}@example.org`;
    const id = await lead({ name: 'Leaver', email: address });
    const c = await campaign({
      name: 'Two steps',
      inboxId: inbox.id,
      audience: { leadIds: [id] },
      steps: [
        { delaySeconds: 0, subject: 'One', text: 'One' },
        { delaySeconds: 60, text: 'Two' },
      ],
    });
    await ok('POST', `/campaigns/${c.id}/start`);
    await eventually(() => mailsTo(address).length === 1);
    const url = new URL(unsubscribeLink(mailsTo(address)[0]!.raw));
    const pageRes = await t.app.inject({ method: 'GET', url: url.pathname });
    expect(pageRes.statusCode).toBe(200);
    expect(pageRes.headers['content-type']).toContain('text/html');
    expect(pageRes.body).toContain(address);
    expect(pageRes.body).toMatch(/<form method="post">[\s\S]*<button/);
    expect(pageRes.body).not.toContain('<script');
    const bad = await t.app.inject({
      method: 'POST',
      url: `${url.pathname}x`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(bad.statusCode).toBe(401);
    const res = await t.app.inject({
      method: 'POST',
      url: url.pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ unsubscribed: true, channel: 'email', address });
    const listed = await ok<{ items: { address: string; reason: string }[] }>('GET', `/suppressions?channel=email&q=${encodeURIComponent(address)}`);
    expect(listed.items).toEqual([expect.objectContaining({ address, reason: 'unsubscribed' })]);
    await campaignWhen(c.id, (x) => x.stats.sent === 1);
    advance(61);
    const done = await campaignWhen(c.id, (x) => x.status === 'FINISHED');
    expect(mailsTo(address)).toHaveLength(1);
    expect((await recipients(c.id))[0]).toMatchObject({ status: 'STOPPED', currentStep: 1 });
    expect(done.stats).toMatchObject({ sent: 1, skipped: 0 });
  });

  it('a reply stops the sequence (REPLIED, lead.replied) with stopOnReply; an out-of-office answer does not', async () => {
    const inbox = await emailInbox();
    const replier = `${unique('replier')}@example.org`;
    const away = `${unique('away')}@example.org`;
    const r1 = await lead({ name: 'Replier', email: replier });
    const r2 = await lead({ name: 'Away', email: away });
    const c = await campaign({
      name: 'Stop on reply',
      inboxId: inbox.id,
      audience: { leadIds: [r1, r2] },
      steps: [
        { delaySeconds: 0, subject: 'Question', text: 'Interested?' },
        { delaySeconds: 600, text: 'Following up' },
      ],
    });
    await ok('POST', `/campaigns/${c.id}/start`);
    await eventually(() => mailsTo(replier).length === 1 && mailsTo(away).length === 1);
    await campaignWhen(c.id, (x) => x.stats.sent === 2);
    const sentId = (await simpleParser(mailsTo(replier)[0]!.raw)).messageId!;
    const mime = (from: string, subject: string, extra = '') =>
      [
        `From: ${from}`,
        `To: ${inbox.config.address}`,
        `Subject: ${subject}`,
        `Message-ID: <${unique('in')}@example.org>`,
        `In-Reply-To: ${sentId}`,
        ...(extra ? [extra] : []),
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'Yes please',
      ].join('\r\n');
    const hook = (raw: string) =>
      t.call({
        method: 'POST',
        url: `/api/v1/hooks/email/${inbox.id}?token=${encodeURIComponent(inbox.secrets.token)}`,
        headers: { 'content-type': 'message/rfc822' },
        payload: raw,
      });
    advance(60);
    expect((await hook(mime(replier, 'Re: Question'))).statusCode).toBeLessThan(300);
    expect((await hook(mime(away, 'Out of office', 'Auto-Submitted: auto-replied'))).statusCode).toBeLessThan(300);
    await eventually(async () => (await recipients(c.id, 'REPLIED')).length === 1);
    advance(601);
    await eventually(() => mailsTo(away).length === 2);
    const done = await campaignWhen(c.id, (x) => x.status === 'FINISHED');
    expect(mailsTo(replier)).toHaveLength(1);
    expect(done.stats).toMatchObject({ sent: 2, replied: 1 });
    const byLead = Object.fromEntries((await recipients(c.id)).map((r) => [r.leadId, r.status]));
    expect(byLead).toEqual({ [r1]: 'REPLIED', [r2]: 'COMPLETED' });
    const replied = (await eventsOf(t, t.orgA.orgId, 'lead.replied')).filter((e) => e.payload.leadId === r1);
    expect(replied).toHaveLength(1);
  });

  it('holds the per-minute limit and waits for the sending window (never dropping a send); pause and resume send each step once', async () => {
    const inbox = await emailInbox();
    const tag = unique('limit');
    const addresses = Array.from({ length: 5 }, () => `${unique('lim')}@example.org`);
    for (const email of addresses) await lead({ email, tags: [tag] });
    const c = await campaign({
      name: 'Limited',
      inboxId: inbox.id,
      audience: { tags: [tag] },
      steps: [{ delaySeconds: 0, subject: 'Hi', text: 'Hi' }],
      settings: { perMinute: 2, window: { days: [1, 2, 3, 4, 5, 6, 7], from: '12:00', to: '18:00', timezone: 'UTC' } },
    });
    // 10:00 UTC of the next day: two hours before the window opens.
    const day = new Date(clock.at);
    clock.at = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1, 10, 0, 0);
    await ok('POST', `/campaigns/${c.id}/start`);
    await new Promise((r) => setTimeout(r, 1200));
    expect(addresses.flatMap(mailsTo)).toHaveLength(0);
    expect((await recipients(c.id, 'PENDING')).length).toBe(5);
    // Into the window: two a minute.
    advance(2 * 3600 + 5);
    await eventually(() => addresses.flatMap(mailsTo).length === 2);
    await ok('POST', `/campaigns/${c.id}/pause`);
    advance(61);
    await new Promise((r) => setTimeout(r, 1200));
    expect(addresses.flatMap(mailsTo)).toHaveLength(2);
    const paused = await ok('GET', `/campaigns/${c.id}`);
    expect(paused).toMatchObject({ status: 'PAUSED', stats: { pending: 3 } });
    expect((await call('PATCH', `/campaigns/${c.id}`, { name: 'Limited (edited)' })).statusCode).toBe(200);
    await ok('POST', `/campaigns/${c.id}/resume`);
    await eventually(() => addresses.flatMap(mailsTo).length === 4);
    await new Promise((r) => setTimeout(r, 500));
    expect(addresses.flatMap(mailsTo)).toHaveLength(4);
    advance(61);
    await campaignWhen(c.id, (x) => x.status === 'FINISHED');
    for (const address of addresses) expect(mailsTo(address)).toHaveLength(1);
  });

  it('stays at most 1,000 messages ahead of the sender, never queueing the whole audience; every one goes out once when it catches up', async () => {
    const inbox = await emailInbox();
    const tag = unique('ahead');
    const org = t.orgA.orgId;
    await t.database.db
      .execute(sql`insert into leads (id, org_id, project_id, name, email, email_key, source, status, score, tags, custom, created_at, updated_at)
      select 'lead_ahead' || i || '_' || ${tag}, ${org}, p.id, 'P' || i, 'ahead' || i || '-' || ${tag} || '@example.org', 'ahead' || i || '-' || ${tag} || '@example.org', 'test', 'NEW', 0, array[${tag}], '{}'::jsonb, now(), now()
      from generate_series(1, 1050) as i, (select id from projects where org_id = ${org} order by created_at limit 1) as p`);
    const c = await campaign({
      name: 'Ahead',
      inboxId: inbox.id,
      audience: { tags: [tag] },
      steps: [{ delaySeconds: 0, subject: 'Hi', text: 'Hi' }],
      settings: { perMinute: 100_000, dailyLimit: 100_000 },
    });
    const queued = async () =>
      (await rows<{ n: number }>(t.database.db, sql`select count(*)::int as n from messages where author_id = ${c.id} and status = 'queued'`))[0]!.n;
    const sender = t.app.workers!.loops.conversations!;
    await sender.stop();
    try {
      await ok('POST', `/campaigns/${c.id}/start`);
      await eventually(async () => (await queued()) === 1000, 40_000, 100);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await queued()).toBe(1000);
      expect(smtp.received.filter((m) => m.rcptTo.some((to) => to.includes(`-${tag}@`)))).toHaveLength(0);
    } finally {
      // The later tests need the outbound loop, whatever happened here.
      sender.start();
    }
    const done = await eventually(
      async () => {
        const x = await ok('GET', `/campaigns/${c.id}`);
        return x.status === 'FINISHED' ? x : undefined;
      },
      70_000,
      500,
    );
    expect(done.stats).toMatchObject({ sent: 1050, failed: 0 });
    const mails = smtp.received.filter((m) => m.rcptTo.some((to) => to.includes(`-${tag}@`)));
    expect(new Set(mails.map((m) => m.rcptTo[0])).size).toBe(1050);
    expect(mails).toHaveLength(1050);
  }, 120_000);

  it('maxErrors failures in a row pause the campaign and tell the members why', async () => {
    const inbox = await emailInbox();
    const tag = unique('bounce');
    for (let i = 0; i < 3; i++) await lead({ email: `bounce-${unique('x')}@example.org`, tags: [tag] });
    const c = await campaign({
      name: 'Bouncing',
      inboxId: inbox.id,
      audience: { tags: [tag] },
      steps: [{ delaySeconds: 0, subject: 'Hi', text: 'Hi' }],
      settings: { maxErrors: 2, perMinute: 1000 },
    });
    await ok('POST', `/campaigns/${c.id}/start`);
    const paused = await campaignWhen(c.id, (x) => x.status === 'PAUSED');
    expect(paused.pausedReason).toMatch(/2 sends failed in a row/);
    expect(paused.stats.failed).toBeGreaterThanOrEqual(2);
    const failed = await recipients(c.id, 'FAILED');
    expect(failed[0]!.error).toMatch(/No such user/);
    const notes = await ok<{ items: { kind: string; title: string; link: string }[] }>('GET', '/notifications?pageSize=50');
    expect(notes.items).toContainEqual(expect.objectContaining({ kind: 'campaign.paused', link: `/campaigns/${c.id}` }));
  });

  it('test mode renders and records every message and sends nothing; a test send goes to one address and is not counted', async () => {
    const inbox = await emailInbox();
    const address = `${unique('dry')}@example.org`;
    const id = await lead({ name: 'Dry', email: address });
    const c = await campaign({
      name: 'Dry run',
      inboxId: inbox.id,
      audience: { leadIds: [id] },
      steps: [
        { delaySeconds: 0, subject: 'S {{ lead.name }}', text: 'T {{ lead.name }}' },
        { delaySeconds: 0, text: 'Again' },
      ],
    });
    const tester = `${unique('me')}@example.org`;
    const test = await ok('POST', `/campaigns/${c.id}/test`, { to: tester });
    expect(test.ok).toBe(true);
    await eventually(() => mailsTo(tester).length === 1);
    expect((await simpleParser(mailsTo(tester)[0]!.raw)).subject).toBe('[Test] S Dry');
    await ok('POST', `/campaigns/${c.id}/start`, { testMode: true });
    const done = await campaignWhen(c.id, (x) => x.status === 'FINISHED');
    expect(done.testMode).toBe(true);
    const recorded = await t.database.db.select().from(campaignSends).where(eq(campaignSends.campaignId, c.id));
    expect(recorded.map((r) => [r.step, r.subject, r.text.split('\n')[0], r.messageId])).toEqual(
      expect.arrayContaining([
        [0, 'S Dry', 'T Dry', null],
        [1, null, 'Again', null],
      ]),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(mailsTo(address)).toHaveLength(0);
  });

  it('refuses what cannot work with a clear error: changes to a running campaign (409), a window that ends before it starts, an e-mail campaign without a subject, an api inbox', async () => {
    const inbox = await emailInbox();
    const id = await lead({ email: `${unique('v')}@example.org` });
    const bad = await call('POST', '/campaigns', {
      name: 'x',
      inboxId: inbox.id,
      audience: { leadIds: [id] },
      steps: [{ delaySeconds: 0, text: 'no subject' }],
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/subject/);
    const window = await call('POST', '/campaigns', {
      name: 'x',
      inboxId: inbox.id,
      audience: { leadIds: [id] },
      steps: [{ delaySeconds: 0, subject: 's', text: 't' }],
      settings: { window: { days: [1], from: '18:00', to: '09:00', timezone: 'Europe/Paris' } },
    });
    expect(window.statusCode).toBe(400);
    const zone = await call('POST', '/campaigns', {
      name: 'x',
      inboxId: inbox.id,
      audience: { leadIds: [id] },
      steps: [{ delaySeconds: 0, subject: 's', text: 't' }],
      settings: { window: { days: [1], from: '09:00', to: '18:00', timezone: 'Mars/Olympus' } },
    });
    expect(zone.statusCode).toBe(400);
    // A window stays through a change that leaves it out, and goes with null.
    const windowed = await campaign({
      name: 'w',
      inboxId: inbox.id,
      audience: { leadIds: [id] },
      steps: [{ delaySeconds: 0, subject: 's', text: 't' }],
      settings: { window: { days: [1, 2], from: '09:00', to: '17:00', timezone: 'Europe/Paris' } },
    });
    expect((await ok('PATCH', `/campaigns/${windowed.id}`, { settings: { perMinute: 5 } })).settings).toMatchObject({
      perMinute: 5,
      window: { from: '09:00', timezone: 'Europe/Paris' },
    });
    const unwindowed = await ok('PATCH', `/campaigns/${windowed.id}`, { settings: { window: null } });
    expect(unwindowed.settings.window).toBeUndefined();
    expect(unwindowed.settings.perMinute).toBe(5);
    const api = await ok('POST', '/inboxes', { name: 'api', channel: 'api', config: { url: 'https://example.com/hook' } }, 201);
    const wrong = await call('POST', '/campaigns', { name: 'x', inboxId: api.id, audience: { leadIds: [id] }, steps: [{ delaySeconds: 0, text: 't' }] });
    expect(wrong.statusCode).toBe(422);
    const c = await campaign({ name: 'Running', inboxId: inbox.id, audience: { leadIds: [id] }, steps: [{ delaySeconds: 86400, subject: 's', text: 't' }] });
    // Start takes no body (CONTRACT §9).
    const bare = await t.call({ method: 'POST', url: `${base()}/campaigns/${c.id}/start`, auth: owner() });
    expect(bare.statusCode, bare.body).toBe(200);
    const patch = await call('PATCH', `/campaigns/${c.id}`, { name: 'changed' });
    expect(patch.statusCode).toBe(409);
    expect((await call('POST', `/campaigns/${c.id}/start`)).statusCode).toBe(409);
    expect((await call('DELETE', `/campaigns/${c.id}`)).statusCode).toBe(409);
    const canceled = await ok('POST', `/campaigns/${c.id}/cancel`);
    expect(canceled.status).toBe('CANCELED');
    expect((await recipients(c.id))[0]!.status).toBe('STOPPED');
    const finished = await eventually(async () => (await eventsOf(t, t.orgA.orgId, 'campaign.finished')).filter((e) => e.payload.campaign.id === c.id));
    expect(finished[0]!.payload.status).toBe('CANCELED');
  });

  it("a workflow's campaigns.start starts a DRAFT campaign once; the REPORT_WRITER writes a CAMPAIGN_SUMMARY whose recommendation applies", async () => {
    const inbox = await emailInbox();
    const fan = `${unique('fan')}@example.org`;
    const quiet = `${unique('quiet')}@example.org`;
    const fanId = await lead({ name: 'Fan', email: fan });
    const quietId = await lead({ name: 'Quiet', email: quiet });
    const c = await campaign({
      name: 'From a workflow',
      inboxId: inbox.id,
      audience: { leadIds: [fanId, quietId] },
      steps: [{ delaySeconds: 0, subject: 'News', text: 'News for you' }],
    });
    const wf = await ok(
      'POST',
      '/workflows',
      {
        name: unique('wf'),
        nodes: [
          { id: 'start', type: 'trigger.manual' },
          { id: 'go', type: 'campaigns.start', params: { campaignId: c.id } },
        ],
        edges: [{ from: 'start', to: 'go' }],
      },
      201,
    );
    const runOf = async () => {
      const run = await ok('POST', `/workflows/${wf.id}/run`, {}, 201);
      return eventually(async () => {
        const r = await ok('GET', `/runs/${run.id}`);
        return ['SUCCEEDED', 'FAILED'].includes(r.status) ? r : undefined;
      });
    };
    const first = await runOf();
    expect(first.status, JSON.stringify(first.error)).toBe('SUCCEEDED');
    expect(first.steps.find((step: { nodeId: string }) => step.nodeId === 'go').items[0]).toMatchObject({
      campaignId: c.id,
      status: 'RUNNING',
      total: 2,
      alreadyStarted: false,
    });
    const second = await runOf();
    expect(second.steps.find((step: { nodeId: string }) => step.nodeId === 'go').items[0]).toMatchObject({ campaignId: c.id, alreadyStarted: true });
    expect((await eventsOf(t, t.orgA.orgId, 'campaign.started')).filter((e) => e.payload.campaign.id === c.id)).toHaveLength(1);

    await eventually(() => mailsTo(fan).length === 1 && mailsTo(quiet).length === 1);
    await campaignWhen(c.id, (x) => x.stats.sent === 2);
    advance(60);
    const sentId = (await simpleParser(mailsTo(fan)[0]!.raw)).messageId!;
    const raw = [
      `From: ${fan}`,
      `To: ${inbox.config.address}`,
      'Subject: Re: News',
      `Message-ID: <${unique('r')}@example.org>`,
      `In-Reply-To: ${sentId}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain',
      '',
      'Tell me more',
    ].join('\r\n');
    expect(
      (
        await t.call({
          method: 'POST',
          url: `/api/v1/hooks/email/${inbox.id}?token=${encodeURIComponent(inbox.secrets.token)}`,
          headers: { 'content-type': 'message/rfc822' },
          payload: raw,
        })
      ).statusCode,
    ).toBeLessThan(300);
    await campaignWhen(c.id, (x) => x.status === 'FINISHED' && x.stats.replied === 1);

    const writer = await ok(
      'POST',
      '/agents/run',
      { type: 'REPORT_WRITER', task: 'Summarise the campaign', input: { reportType: 'CAMPAIGN_SUMMARY', campaignId: c.id } },
      202,
    );
    const done = await eventually(async () => {
      const r = await ok('GET', `/agent-runs/${writer.id}`);
      return ['succeeded', 'failed', 'canceled'].includes(r.status) ? r : undefined;
    });
    expect(done.status, done.error).toBe('succeeded');
    const report = await ok('GET', `/reports/${done.reportId}`);
    expect(report).toMatchObject({ type: 'CAMPAIGN_SUMMARY', metrics: { total: 2, sent: 2, replied: 1, campaignId: c.id } });
    const engage = report.recommendations.find((r: { action: { type: string } }) => r.action.type === 'set_lead_status');
    expect(engage.action.params).toEqual({ leadIds: [fanId], status: 'ENGAGED' });
    await ok('POST', `/reports/${report.id}/apply-recommendation`, { index: engage.index });
    expect((await ok('GET', `/leads/${fanId}`)).status).toBe('ENGAGED');
  });

  it('WhatsApp: only leads with a recorded opt-in receive the step (a template); receipts move delivered and read forward only', async () => {
    const appSecret = `secret-${unique('wa')}`;
    const phoneNumberId = String(200000000000000 + counter++);
    const inbox = await ok(
      'POST',
      '/inboxes',
      { name: unique('wa'), channel: 'whatsapp', config: { phoneNumberId }, credentials: { accessToken: `EAAG${unique('t')}`, appSecret } },
      201,
    );
    const tag = unique('wa');
    const phone = (n: number) => `+1415555${String(1000 + counter * 10 + n).slice(-4)}`;
    const yes = await lead({ name: 'Yes', phone: phone(1), tags: [tag] });
    const no = await lead({ name: 'No', phone: phone(2), tags: [tag] });
    await ok(
      'POST',
      `/leads/${yes}/consents`,
      { channel: 'whatsapp', status: 'opted_in', source: 'checkout form', text: 'Send me order news on WhatsApp' },
      201,
    );
    const consents = await ok<{ items: { status: string; source: string }[] }>('GET', `/leads/${yes}/consents`);
    expect(consents.items[0]).toMatchObject({ status: 'opted_in', source: 'checkout form' });
    const c = await campaign({
      name: 'WhatsApp news',
      inboxId: inbox.id,
      audience: { tags: [tag] },
      steps: [{ delaySeconds: 0, text: 'Order news for {{ lead.name }}', template: { name: 'order_news', language: 'en_US' } }],
    });
    await ok('POST', `/campaigns/${c.id}/start`);
    const skipped = await recipients(c.id, 'SKIPPED');
    expect(skipped.map((r) => [r.leadId, r.skipReason])).toEqual([[no, 'NO_OPT_IN']]);
    const sent = await eventually(() =>
      graph.received.find((r) => (r.json as { to?: string }).to === phone(1).replace('+', '') || (r.json as { to?: string }).to === phone(1)),
    );
    expect(sent.json as { type: string; template: { name: string } }).toMatchObject({ type: 'template', template: { name: 'order_news' } });
    await campaignWhen(c.id, (x) => x.stats.sent === 1);
    // The provider's id of the message, as the campaign's message in the lead's conversation carries it.
    const [thread] = (await ok<{ items: { id: string }[] }>('GET', `/conversations?inboxId=${inbox.id}`)).items;
    const wamid = (await ok<{ items: { direction: string; externalId?: string }[] }>('GET', `/conversations/${thread!.id}/messages`)).items.find(
      (m) => m.direction === 'out',
    )!.externalId!;
    expect(wamid).toMatch(/^wamid\./);
    const hook = async (status: string) => {
      const raw = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [
          {
            id: 'WABA',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'whatsapp',
                  metadata: { display_phone_number: '15550001111', phone_number_id: phoneNumberId },
                  statuses: [{ id: wamid, status, timestamp: String(Math.floor(clock.at / 1000)), recipient_id: phone(1).replace('+', '') }],
                },
              },
            ],
          },
        ],
      });
      const res = await t.call({
        method: 'POST',
        url: `/api/v1/hooks/whatsapp/${inbox.id}`,
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${createHmac('sha256', appSecret).update(raw).digest('hex')}` },
        payload: raw,
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    await hook('read');
    await hook('delivered');
    const done = await campaignWhen(c.id, (x) => x.status === 'FINISHED');
    expect(done.stats).toMatchObject({ total: 2, sent: 1, delivered: 1, read: 1, skipped: 1, failed: 0 });
    const [recipient] = await recipients(c.id, 'COMPLETED');
    expect(recipient).toMatchObject({ leadId: yes });
    expect(recipient!.readAt).not.toBeNull();
  });

  it('keeps organizations apart (404) and needs the campaigns scopes (403)', async () => {
    const inbox = await emailInbox();
    const id = await lead({ email: `${unique('iso')}@example.org` });
    const c = await campaign({ name: 'Mine', inboxId: inbox.id, audience: { leadIds: [id] }, steps: [{ delaySeconds: 0, subject: 's', text: 't' }] });
    for (const [method, url] of [
      ['GET', `/campaigns/${c.id}`],
      ['PATCH', `/campaigns/${c.id}`],
      ['POST', `/campaigns/${c.id}/start`],
      ['GET', `/campaigns/${c.id}/recipients`],
      ['DELETE', `/campaigns/${c.id}`],
      ['GET', `/leads/${id}/consents`],
    ] as const) {
      const res = await call(method, url, method === 'PATCH' ? { name: 'x' } : method === 'POST' ? {} : undefined, t.orgB);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    const sup = await ok('POST', '/suppressions', { channel: 'email', address: `${unique('s')}@example.org` }, 201);
    expect((await call('DELETE', `/suppressions/${sup.id}`, undefined, t.orgB)).statusCode).toBe(404);
    const readOnly = await t.key(t.orgA.orgId, ['campaigns:read']);
    const leadsOnly = await t.key(t.orgA.orgId, ['leads:read']);
    expect((await t.call({ method: 'GET', url: `${base()}/campaigns`, auth: { apiKey: readOnly } })).statusCode).toBe(200);
    expect((await t.call({ method: 'POST', url: `${base()}/campaigns/${c.id}/start`, auth: { apiKey: readOnly } })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${base()}/campaigns`, auth: { apiKey: leadsOnly } })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${base()}/suppressions`, auth: { apiKey: leadsOnly } })).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: `${base()}/suppressions/${sup.id}`, auth: { apiKey: readOnly } })).statusCode).toBe(403);
  });

  it('a step with its own subject is sent with it as a new thread; a step without one answers in the thread (Re:, In-Reply-To, References)', async () => {
    const inbox = await emailInbox();
    const address = `${unique('thread')}@example.org`;
    const id = await lead({ name: 'Ada', email: address });
    const c = await campaign({
      name: 'Threads',
      inboxId: inbox.id,
      audience: { leadIds: [id] },
      settings: { perMinute: 100 },
      steps: [
        { delaySeconds: 0, subject: 'Hello {{ lead.name }}', text: 'One' },
        { delaySeconds: 60, subject: 'An offer for {{ lead.name }}', text: 'Two' },
        { delaySeconds: 60, text: 'Three' },
      ],
    });
    await ok('POST', `/campaigns/${c.id}/start`);
    for (const step of [1, 2]) {
      // The step's outcome recorded (its next step timed from now) before the clock moves on.
      await eventually(async () => (await recipients(c.id)).some((r) => r.currentStep === step && r.nextSendAt));
      advance(61);
    }
    await eventually(() => mailsTo(address).length === 3);
    const [one, two, three] = await Promise.all(mailsTo(address).map((m) => simpleParser(m.raw)));
    expect(one!.subject).toBe('Hello Ada');
    expect(two!.subject).toBe('An offer for Ada');
    // A new subject is a new thread: it answers nothing, so no client files it under the first.
    expect(two!.inReplyTo).toBeUndefined();
    expect(two!.references).toBeUndefined();
    expect(two!.text).toContain('Two');
    expect(three!.subject).toBe('Re: An offer for Ada');
    expect(three!.inReplyTo).toBe(two!.messageId);
    expect([three!.references].flat()).toEqual([two!.messageId]);
    await campaignWhen(c.id, (x) => x.status === 'FINISHED');
  });

  it("a recipient waiting for the sending window shows its next opening, in the window's time zone, as nextSendAt, and is sent then", async () => {
    const inbox = await emailInbox();
    const address = `${unique('window')}@example.org`;
    const id = await lead({ email: address });
    // A Friday a week or more ahead, 17:30 in New York (22:30 UTC; EST, -5, from November to March):
    // the window (Monday to Friday, 09:00–17:00 New York) next opens on Monday at 09:00 there, 14:00 UTC.
    const ahead = new Date(clock.at + 7 * 86_400_000);
    const friday = Date.UTC(ahead.getUTCFullYear(), ahead.getUTCMonth(), ahead.getUTCDate() + ((5 - ahead.getUTCDay() + 7) % 7), 22, 30);
    const monday = new Date(friday + 2 * 86_400_000 + 15.5 * 3_600_000).toISOString();
    expect(monday).toMatch(/T14:00:00\.000Z$/);
    clock.at = friday;
    const c = await campaign({
      name: 'Windowed',
      inboxId: inbox.id,
      audience: { leadIds: [id] },
      steps: [{ delaySeconds: 0, subject: 'Hi', text: 'Hi' }],
      settings: { window: { days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00', timezone: 'America/New_York' } },
    });
    await ok('POST', `/campaigns/${c.id}/start`);
    expect(await recipients(c.id)).toEqual([expect.objectContaining({ status: 'PENDING', nextSendAt: monday })]);
    advance(86_400);
    await new Promise((r) => setTimeout(r, 600));
    expect(mailsTo(address)).toHaveLength(0);
    expect(await recipients(c.id)).toEqual([expect.objectContaining({ status: 'PENDING', nextSendAt: monday })]);
    clock.at = Date.parse(monday) - 5_000;
    await new Promise((r) => setTimeout(r, 600));
    expect(mailsTo(address)).toHaveLength(0);
    clock.at = Date.parse(monday) + 1_000;
    await eventually(() => mailsTo(address).length === 1);
    const done = await campaignWhen(c.id, (x) => x.status === 'FINISHED');
    expect(done.stats).toMatchObject({ sent: 1, skipped: 0, failed: 0 });
  });

  it("refuses leadIds that are not leads of the campaign's project (another project's, another organization's, unknown), naming them, at create and PATCH (400)", async () => {
    const inbox = await emailInbox();
    const mine = await lead({ email: `${unique('mine')}@example.org` });
    const project = await secondProject();
    const elsewhere = await lead({ email: `${unique('elsewhere')}@example.org`, projectId: project.id });
    const foreign = (
      await t.call({ method: 'POST', url: `${base(t.orgB)}/leads`, auth: owner(t.orgB), payload: { email: `${unique('foreign')}@example.org` } })
    ).json().id as string;
    const unknown = 'lead_00000000000000000000000000';
    const steps = [{ delaySeconds: 0, subject: 's', text: 't' }];
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const refused = (res: { statusCode: number; json(): any }, names: string[]) => {
      expect(res.statusCode).toBe(400);
      const body = res.json();
      expect(body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.audience.leadIds' }] });
      for (const name of names) {
        expect(body.message).toContain(name);
        expect(body.details[0].message).toContain(name);
      }
      expect(body.message).not.toContain(mine);
    };
    refused(await call('POST', '/campaigns', { name: 'Mixed', inboxId: inbox.id, audience: { leadIds: [mine, elsewhere, foreign, unknown] }, steps }), [
      elsewhere,
      foreign,
      unknown,
    ]);
    const c = await campaign({ name: 'Mine', inboxId: inbox.id, audience: { leadIds: [mine] }, steps });
    refused(await call('PATCH', `/campaigns/${c.id}`, { audience: { leadIds: [mine, elsewhere] } }), [elsewhere]);
    expect((await ok('GET', `/campaigns/${c.id}`)).audience).toEqual({ leadIds: [mine] });
    expect((await ok('PATCH', `/campaigns/${c.id}`, { audience: { leadIds: [mine] } })).audience).toEqual({ leadIds: [mine] });
  });

  it("keeps the audience in the campaign's project: another organization's project is not found (404), a bound key naming another project is refused (403), another project of the organization is refused (400)", async () => {
    const inbox = await emailInbox();
    const tag = unique('scoped');
    await lead({ email: `${unique('scoped')}@example.org`, tags: [tag] });
    const project = await secondProject();
    const body = (audience: Record<string, unknown>) => ({
      name: 'Scoped',
      inboxId: inbox.id,
      audience: { tags: [tag], ...audience },
      steps: [{ delaySeconds: 0, subject: 's', text: 't' }],
    });
    expect((await call('POST', '/campaigns', body({ projectId: t.orgB.projectId }))).statusCode).toBe(404);
    const other = await call('POST', '/campaigns', body({ projectId: project.id }));
    expect(other.statusCode).toBe(400);
    expect(other.json().details).toEqual([expect.objectContaining({ field: 'body.audience.projectId' })]);
    const c = await campaign(body({ projectId: t.orgA.projectId }));
    expect((await call('PATCH', `/campaigns/${c.id}`, { audience: { projectId: t.orgB.projectId } })).statusCode).toBe(404);
    expect((await call('PATCH', `/campaigns/${c.id}`, { audience: { tags: [tag], projectId: project.id } })).statusCode).toBe(400);

    const bound = await t.key(t.orgA.orgId, ['*'], t.orgA.projectId);
    const asBound = (method: 'POST' | 'PATCH', url: string, payload: object) => t.call({ method, url: `${base()}${url}`, auth: { apiKey: bound }, payload });
    for (const projectId of [project.id, t.orgB.projectId]) {
      const res = await asBound('POST', '/campaigns', body({ projectId }));
      expect(res.statusCode, res.body).toBe(403);
      expect((await asBound('PATCH', `/campaigns/${c.id}`, { audience: { projectId } })).statusCode).toBe(403);
    }
    expect((await asBound('POST', '/campaigns', body({ projectId: t.orgA.projectId }))).statusCode).toBe(201);
    // The refusal comes before anything else the route would answer (here, a started campaign's 409).
    await ok('POST', `/campaigns/${c.id}/start`);
    expect((await asBound('PATCH', `/campaigns/${c.id}`, { audience: { projectId: project.id } })).statusCode).toBe(403);
    expect((await asBound('PATCH', `/campaigns/${c.id}`, { audience: { projectId: t.orgA.projectId } })).statusCode).toBe(409);
    const named = (await ok<{ items: { name: string }[] }>('GET', '/campaigns?pageSize=100')).items.filter((x) => x.name === 'Scoped');
    expect(named).toHaveLength(2);
  });
});
