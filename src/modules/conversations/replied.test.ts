import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { Receiver } from '../../../test/receiver.ts';
import { SmtpStandIn } from '../../../test/smtp.ts';
import { eventsOf, eventually } from '../../../test/helpers.ts';
import { messages } from './tables.ts';

let t: TestApp;
let rx: Receiver;
let smtp: SmtpStandIn;

beforeAll(async () => {
  rx = await new Receiver().start();
  smtp = await new SmtpStandIn().start();
  t = await buildTestApp({ env: { SMTP_URL: smtp.url, WEBHOOK_RETRY_DELAYS_S: '0,0,0', WEBHOOK_TIMEOUT_MS: '2000' } });
});
afterAll(async () => {
  await t?.close();
  await rx?.stop();
  await smtp?.close();
});

const base = `/api/v1/orgs/${'{org}'}`;
const url = (path: string) => base.replace('{org}', t.orgA.orgId) + path;
const auth = () => ({ token: t.orgA.token });
let counter = 0;
const unique = (label: string) => `${label}-${++counter}-${Date.now()}`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function create(path: string, payload: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await t.call({ method: 'POST', url: url(path), auth: auth(), payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}
const apiInbox = (path = '/out') => create('/inboxes', { name: unique('api'), channel: 'api', config: { url: rx.url(path) } });

function inbound(inboxId: string, body: Record<string, unknown>) {
  return t.call({ method: 'POST', url: url(`/inboxes/${inboxId}/messages`), auth: { apiKey: t.orgA.apiKey }, payload: body });
}

async function replied(leadId: string) {
  return (await eventsOf(t, t.orgA.orgId, 'lead.replied')).filter((e) => e.payload.leadId === leadId);
}

/** Waits until the message left (the provider accepted it). */
async function sentOut(messageId: string): Promise<void> {
  await eventually(async () => (await t.database.db.select().from(messages).where(eq(messages.id, messageId)))[0]?.status === 'sent');
}

async function outreach(inboxId: string, leadId: string, text = 'Hello from us'): Promise<{ conversationId: string; messageId: string }> {
  const conversation = await create('/conversations', { inboxId, leadId, text });
  const [out] = await t.database.db.select().from(messages).where(eq(messages.conversationId, conversation.id));
  await sentOut(out!.id);
  return { conversationId: conversation.id, messageId: out!.id };
}

describe('lead.replied', () => {
  it('an answer of a lead who was sent outreach writes lead.replied with the message, once per inbound message (a provider retry adds none)', async () => {
    const box = await apiInbox();
    const email = `${unique('reached')}@example.com`;
    const lead = await create('/leads', { name: 'Reached', email });
    const { conversationId } = await outreach(box.id, lead.id);
    expect(await replied(lead.id)).toHaveLength(0);

    const first = await inbound(box.id, { contact: { address: email }, text: 'Tell me more', externalId: unique('ext') });
    expect(first.statusCode, first.body).toBe(201);
    const events = await replied(lead.id);
    expect(events).toHaveLength(1);
    // SPEC's fields: the lead as in lead.created, the conversation, the channel and the reply's text.
    expect(events[0]!.payload).toEqual({
      lead: { ...lead, updatedAt: expect.any(String) },
      conversationId,
      channel: 'api',
      text: 'Tell me more',
      leadId: lead.id,
      messageId: first.json().id,
    });

    const externalId = unique('ext');
    expect((await inbound(box.id, { contact: { address: email }, text: 'And prices?', externalId })).statusCode).toBe(201);
    expect((await inbound(box.id, { contact: { address: email }, text: 'And prices?', externalId })).statusCode).toBe(200);
    expect((await replied(lead.id)).map((e) => e.payload.messageId)).toHaveLength(2);
  });

  it("a first contact by the lead is not a reply; after a person answers, the lead's next message is", async () => {
    const box = await apiInbox();
    const email = `${unique('first')}@example.com`;
    const first = await inbound(box.id, { contact: { address: email }, text: 'Hi, I found you online' });
    expect(first.statusCode, first.body).toBe(201);
    const [row] = await t.database.db.select().from(messages).where(eq(messages.id, first.json().id));
    const conversation = (await t.call({ method: 'GET', url: url(`/conversations/${row!.conversationId}`), auth: auth() })).json();
    expect(conversation.leadId).toMatch(/^lead_/);
    // A second message before anyone answered: still no reply to anything.
    await inbound(box.id, { contact: { address: email }, text: 'Anyone there?' });
    expect(await replied(conversation.leadId)).toHaveLength(0);
    // A private note is not outreach either.
    await create(`/conversations/${conversation.id}/messages`, { text: 'internal: hot lead', private: true });
    await inbound(box.id, { contact: { address: email }, text: 'Hello?' });
    expect(await replied(conversation.leadId)).toHaveLength(0);

    const answer = await create(`/conversations/${conversation.id}/messages`, { text: 'Yes, how can we help?' });
    await sentOut(answer.id);
    const next = await inbound(box.id, { contact: { address: email }, text: 'Pricing please' });
    expect((await replied(conversation.leadId)).map((e) => e.payload.messageId)).toEqual([next.json().id]);
  });

  it('outreach that failed to leave is not answered by anything; outreach through a workflow (campaign) on another inbox of the channel is', async () => {
    const refused = `/${unique('refuses')}`;
    rx.behaviour = (req) => (req.url === refused ? { status: 400, body: 'no such user' } : { status: 200, body: 'ok' });
    const failedBox = await apiInbox(refused);
    const email = `${unique('campaign')}@example.com`;
    const lead = await create('/leads', { name: 'Campaign Target', email });
    const conversation = await create('/conversations', { inboxId: failedBox.id, leadId: lead.id, text: 'Lost message' });
    await eventually(async () => (await t.database.db.select().from(messages).where(eq(messages.conversationId, conversation.id)))[0]?.status === 'failed');
    await inbound(failedBox.id, { contact: { address: email }, text: 'I never got anything' });
    expect(await replied(lead.id)).toHaveLength(0);

    // A workflow reaches the lead through a second api inbox; the lead answers on the first.
    const campaignBox = await apiInbox('/campaign');
    const wf = await create('/workflows', {
      name: 'outreach',
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'msg', type: 'messaging.send', params: { inboxId: campaignBox.id, leadId: lead.id, text: 'Our offer' } },
      ],
      edges: [{ from: 'start', to: 'msg' }],
    });
    const run = await create(`/workflows/${wf.id}/run`, {});
    const messageId = await eventually(async () => {
      const got = (await t.call({ method: 'GET', url: url(`/runs/${run.id}`), auth: auth() })).json();
      return got.status === 'SUCCEEDED' ? (got.steps.find((s: { nodeId: string }) => s.nodeId === 'msg').items[0].messageId as string) : null;
    });
    await sentOut(messageId);
    const answer = await inbound(failedBox.id, { contact: { address: email }, text: 'Interested in the offer' });
    const events = await replied(lead.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ messageId: answer.json().id, channel: 'api', conversationId: conversation.id });
    rx.behaviour = () => ({ status: 200, body: 'ok' });
  });

  it("e-mail: an out-of-office answer to outreach is not a reply, the person's own answer is", async () => {
    const box = await create('/inboxes', { name: unique('mail'), channel: 'email', config: { address: `${unique('sales')}@shop.example.com` } });
    const email = `${unique('buyer')}@example.com`;
    const lead = await create('/leads', { name: 'Buyer', email });
    await outreach(box.id, lead.id, 'Our spring offer');
    const post = (headers: string[], body: string) =>
      t.call({
        method: 'POST',
        url: `/api/v1/hooks/email/${box.id}?token=${encodeURIComponent(box.secrets.token)}`,
        headers: { 'content-type': 'message/rfc822' },
        payload: [
          `From: Buyer <${email}>`,
          `To: ${box.config.address}`,
          'Subject: Re: Our spring offer',
          `Message-ID: <${unique('m')}@example.com>`,
          ...headers,
          'MIME-Version: 1.0',
          'Content-Type: text/plain; charset=utf-8',
          '',
          body,
        ].join('\r\n'),
      });
    const away = await post(['Auto-Submitted: auto-replied'], 'I am out of the office until Monday.');
    expect(away.statusCode, away.body).toBeLessThan(300);
    expect(await replied(lead.id)).toHaveLength(0);
    const human = await post(['Auto-Submitted: no'], 'Sounds good, send me the details.');
    expect(human.statusCode, human.body).toBeLessThan(300);
    const events = await replied(lead.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ leadId: lead.id, channel: 'email' });
  });
});
