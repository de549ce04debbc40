import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import type { TestApp } from '../../../../test/harness.ts';
import type { Receiver } from '../../../../test/receiver.ts';
import { eventsOf, eventually } from '../../../../test/helpers.ts';
import { api, manual, startWorkflowApp } from '../../../../test/workflows.ts';
import { messages } from '../../conversations/tables.ts';
import { workflowRuns } from '../tables.ts';

let t: TestApp;
let w: ReturnType<typeof api>;
let rx: Receiver;
let close: () => Promise<void>;

beforeAll(async () => {
  ({
    t,
    w,
    receiver: rx,
    close,
  } = await startWorkflowApp({ WEBHOOK_RETRY_DELAYS_S: '0,0,0', WEBHOOK_TIMEOUT_MS: '2000', WHATSAPP_API_BASE_URL: 'http://127.0.0.1:9/v21.0' }));
});
afterAll(() => close());

let counter = 0;
const unique = (label: string) => `${label}-${++counter}-${Date.now()}`;

async function inbox(payload: Record<string, unknown>): Promise<{ id: string; channel: string }> {
  const res = await t.call({ method: 'POST', url: `${w.base}/inboxes`, auth: w.auth, payload: { name: unique('inbox'), ...payload } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}
const apiInbox = (path = '/out') => inbox({ channel: 'api', config: { url: rx.url(path) } });

async function lead(payload: Record<string, unknown>): Promise<{ id: string; email?: string }> {
  const res = await t.call({ method: 'POST', url: `${w.base}/leads`, auth: w.auth, payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

const rowsOf = (inboxId: string) => t.database.db.select().from(messages).where(eq(messages.inboxId, inboxId));
const deliveriesTo = (path: string) => rx.received.filter((r) => r.url === path);

describe('messaging.send through an inbox', () => {
  it('sends to a lead: a conversation with the lead, the message queued as campaign and delivered by the channel; the output names both', async () => {
    const path = `/${unique('lead-out')}`;
    const box = await apiInbox(path);
    const person = await lead({ name: 'Ada Reach', email: `${unique('ada')}@example.com` });
    const wf = await w.create(
      [manual, { id: 'msg', type: 'messaging.send', params: { inboxId: box.id, leadId: '{{ leadId }}', text: 'Hello {{ name }}' } }],
      [{ from: 'start', to: 'msg' }],
    );
    const run = await w.until((await w.run(wf.id, { input: { leadId: person.id, name: 'Ada' } })).id);
    expect(run.status, JSON.stringify(run.error)).toBe('SUCCEEDED');
    const output = w.step(run, 'msg')!.items![0] as { messageId: string; conversationId: string; channel: string };
    expect(output).toMatchObject({
      messageId: expect.stringMatching(/^msg_/),
      conversationId: expect.stringMatching(/^conv_/),
      channel: 'api',
      inboxId: box.id,
    });

    const delivered = await eventually(() => deliveriesTo(path)[0]);
    expect(delivered.json).toMatchObject({
      type: 'conversation.message',
      payload: {
        message: { id: output.messageId, text: 'Hello Ada', sender: 'campaign' },
        conversation: { id: output.conversationId, contact: { address: person.email } },
      },
    });
    const conv = await t.call({ method: 'GET', url: `${w.base}/conversations/${output.conversationId}`, auth: w.auth });
    expect(conv.json()).toMatchObject({ inboxId: box.id, leadId: person.id, status: 'OPEN' });
    const sent = await eventually(async () => (await eventsOf(t, t.orgA.orgId, 'message.sent')).find((e) => e.payload.message.id === output.messageId));
    expect(sent.payload).toMatchObject({ sender: 'campaign', conversationId: output.conversationId, leadId: person.id });

    // A second send to the same lead joins the open conversation.
    const again = await w.until((await w.run(wf.id, { input: { leadId: person.id, name: 'again' } })).id);
    expect(w.step(again, 'msg')!.items![0]).toMatchObject({ conversationId: output.conversationId });
    expect(await rowsOf(box.id)).toHaveLength(2);
  });

  it('sends to an address (to); the contact becomes a lead as an inbound one would', async () => {
    const path = `/${unique('to-out')}`;
    const box = await apiInbox(path);
    const address = `${unique('to')}@example.com`;
    const wf = await w.create(
      [manual, { id: 'msg', type: 'messaging.send', params: { inboxId: box.id, to: address, text: 'Hi' } }],
      [{ from: 'start', to: 'msg' }],
    );
    const run = await w.until((await w.run(wf.id)).id);
    expect(run.status, JSON.stringify(run.error)).toBe('SUCCEEDED');
    const { conversationId } = w.step(run, 'msg')!.items![0] as { conversationId: string };
    const conv = (await t.call({ method: 'GET', url: `${w.base}/conversations/${conversationId}`, auth: w.auth })).json();
    expect(conv).toMatchObject({ contact: { address }, leadId: expect.stringMatching(/^lead_/) });
    await eventually(() => deliveriesTo(path).length === 1);
  });

  it('a step executed again (a retry after a later item failed) queues its earlier items once', async () => {
    const path = `/${unique('retry-out')}`;
    const box = await apiInbox(path);
    const good = `${unique('good')}@example.com`;
    const wf = await w.create(
      [
        manual,
        { id: 'a', type: 'data.set', params: { fields: { to: good } } },
        { id: 'b', type: 'data.set', params: { fields: { leadId: 'lead_does_not_exist' } } },
        { id: 'msg', type: 'messaging.send', params: { inboxId: box.id, to: '{{ to }}', leadId: '{{ leadId }}', text: 'once' }, retry: { maxAttempts: 3 } },
      ],
      [
        { from: 'start', to: 'a' },
        { from: 'start', to: 'b' },
        { from: 'a', to: 'msg' },
        { from: 'b', to: 'msg' },
      ],
    );
    const run = await w.until((await w.run(wf.id)).id);
    expect(run.status).toBe('FAILED');
    expect(w.step(run, 'msg')).toMatchObject({ attempt: 3, error: { code: 'NOT_FOUND' } });
    const rows = await rowsOf(box.id);
    expect(rows).toHaveLength(1);
    await eventually(() => deliveriesTo(path).length === 1);
  });

  it('test mode is a dry run: nothing queued or delivered, the output says what would be sent', async () => {
    const path = `/${unique('dry-out')}`;
    const box = await apiInbox(path);
    const person = await lead({ name: 'Dry Run', phone: '+4915112345678' });
    const wf = await w.create(
      [manual, { id: 'msg', type: 'messaging.send', params: { inboxId: box.id, leadId: person.id, text: 'Would be {{ n }}' } }],
      [{ from: 'start', to: 'msg' }],
    );
    const run = await w.until((await w.run(wf.id, { input: { n: 'sent' }, testMode: true })).id);
    expect(run.status, JSON.stringify(run.error)).toBe('SUCCEEDED');
    expect(w.step(run, 'msg')!.items![0]).toEqual({
      dryRun: true,
      inboxId: box.id,
      channel: 'api',
      to: '+4915112345678',
      text: 'Would be sent',
      conversationId: null,
      leadId: person.id,
    });
    // A real send afterwards proves the receiver is reachable; still only that one message.
    const real = await w.until((await w.run(wf.id, { input: { n: 'real' } })).id);
    expect(real.status).toBe('SUCCEEDED');
    await eventually(() => deliveriesTo(path).length === 1);
    expect((await rowsOf(box.id)).map((m) => m.text)).toEqual(['Would be real']);
  });

  it("the channel's rules apply: WhatsApp free text without an open window fails the node with CHANNEL_WINDOW_CLOSED (dry run too), a template is queued", async () => {
    const box = await inbox({
      channel: 'whatsapp',
      config: { phoneNumberId: String(100000000000000 + ++counter) },
      credentials: { accessToken: 'EAAGtoken', appSecret: 'app-secret' },
    });
    const phone = '+4915199900011';
    const text = await w.create(
      [manual, { id: 'msg', type: 'messaging.send', params: { inboxId: box.id, to: phone, text: 'Free text' } }],
      [{ from: 'start', to: 'msg' }],
    );
    for (const testMode of [false, true]) {
      const run = await w.until((await w.run(text.id, { testMode })).id);
      expect(run.status).toBe('FAILED');
      expect(w.step(run, 'msg')!.error).toMatchObject({ code: 'CHANNEL_WINDOW_CLOSED' });
    }
    expect(await rowsOf(box.id)).toHaveLength(0);
    const template = await w.create(
      [manual, { id: 'msg', type: 'messaging.send', params: { inboxId: box.id, to: phone, template: { name: 'welcome', language: 'en' } } }],
      [{ from: 'start', to: 'msg' }],
    );
    const run = await w.until((await w.run(template.id)).id);
    expect(run.status, JSON.stringify(run.error)).toBe('SUCCEEDED');
    const [row] = await rowsOf(box.id);
    expect(row).toMatchObject({ direction: 'out', sender: 'campaign', template: { name: 'welcome', language: 'en' } });
  });

  it('refuses params that name no recipient or two, an inbox of another organization, and bad forms at write time', async () => {
    const box = await apiInbox();
    const both = await w.create(
      [manual, { id: 'msg', type: 'messaging.send', params: { inboxId: box.id, to: 'a@example.com', leadId: 'lead_x', text: 'x' } }],
      [{ from: 'start', to: 'msg' }],
    );
    const run = await w.until((await w.run(both.id)).id);
    expect(w.step(run, 'msg')!.error).toMatchObject({ code: 'VALIDATION_ERROR' });
    const foreign = await t.call({
      method: 'POST',
      url: `/api/v1/orgs/${t.orgB.orgId}/inboxes`,
      auth: { token: t.orgB.token },
      payload: { name: 'b', channel: 'api', config: { url: rx.url('/b') } },
    });
    const other = await w.create(
      [manual, { id: 'msg', type: 'messaging.send', params: { inboxId: foreign.json().id, to: 'a@example.com', text: 'x' } }],
      [{ from: 'start', to: 'msg' }],
    );
    const otherRun = await w.until((await w.run(other.id)).id);
    expect(w.step(otherRun, 'msg')!.error).toMatchObject({ code: 'NOT_FOUND' });
    expect(await rowsOf(foreign.json().id)).toHaveLength(0);
    const mixed = await t.call({
      method: 'POST',
      url: `${w.base}/workflows`,
      auth: w.auth,
      payload: {
        name: 'bad',
        nodes: [manual, { id: 'msg', type: 'messaging.send', params: { inboxId: box.id, url: 'https://x.example', to: 'a', text: 'x' } }],
        edges: [{ from: 'start', to: 'msg' }],
      },
    });
    expect(mixed.statusCode).toBe(422);
    expect(mixed.json()).toMatchObject({ code: 'WORKFLOW_INVALID' });
  });
});

describe('trigger.event on message.received', () => {
  it('an inbound api-channel message starts the run with the event as its input', async () => {
    const box = await apiInbox();
    const wf = await w.create(
      [
        { id: 'start', type: 'trigger.event', params: { events: ['message.received'] } },
        { id: 'pick', type: 'data.set', params: { fields: { said: '{{ payload.message.text }}', from: '{{ payload.conversation.contact.address }}' } } },
      ],
      [{ from: 'start', to: 'pick' }],
    );
    const address = `${unique('writer')}@example.com`;
    const res = await t.call({
      method: 'POST',
      url: `${w.base}/inboxes/${box.id}/messages`,
      auth: { apiKey: t.orgA.apiKey },
      payload: { contact: { address }, text: 'Is this thing on?' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const runId = await eventually(
      async () =>
        (
          await t.database.db
            .select()
            .from(workflowRuns)
            .where(and(eq(workflowRuns.workflowId, wf.id)))
        )[0]?.id,
      15_000,
    );
    const run = await w.until(runId, undefined, 15_000);
    expect(run.status, JSON.stringify(run.error)).toBe('SUCCEEDED');
    expect(run.input).toMatchObject({
      type: 'message.received',
      organizationId: t.orgA.orgId,
      payload: { message: { id: res.json().id, text: 'Is this thing on?', direction: 'in' }, conversation: { inboxId: box.id } },
    });
    expect(w.step(run, 'pick')!.items![0]).toMatchObject({ said: 'Is this thing on?', from: address });
  });
});
