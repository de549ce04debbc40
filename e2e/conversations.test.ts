import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { Receiver, type Received } from '../test/receiver.ts';
import { apiCall, browserAvailable, screenshot, signUp, startE2E, type E2E } from './harness.ts';

let e2e: E2E;
let rx: Receiver;
beforeAll(async () => {
  if (!browserAvailable) return;
  // The customer's own system: receives the api inbox's replies as signed webhooks.
  rx = await new Receiver().start();
  rx.behaviour = (_req, n) => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: `their-${n}` }) });
  e2e = await startE2E({ WEBHOOK_ALLOW_PRIVATE: 'true' });
});
afterAll(async () => {
  await rx?.stop();
  await e2e?.close();
});

interface Conversation {
  id: string;
  status: string;
  handledBy: string;
  assigneeId?: string;
  handoffReason?: string;
  unreadCount: number;
  leadId?: string;
}
interface Message {
  id: string;
  text: string;
  status: string;
  private: boolean;
  direction: string;
}

/** Marks the document, so a later check can tell that the page was not reloaded. */
async function markDocument(page: Page): Promise<void> {
  await page.evaluate(() => {
    (window as unknown as { e2eMark?: number }).e2eMark = 42;
  });
}
const stillSameDocument = (page: Page) => page.evaluate(() => (window as unknown as { e2eMark?: number }).e2eMark === 42);

function signedBy(req: Received, secret: string): boolean {
  const ts = String(req.headers['x-service-timestamp']);
  return req.headers['x-service-signature'] === `sha256=${createHmac('sha256', secret).update(`${ts}.${req.raw}`).digest('hex')}`;
}

async function postInbound(inboundUrl: string, apiKey: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(inboundUrl, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`inbound: ${res.status} ${await res.text()}`);
}

const searchParam = (page: Page, name: string) => new URL(page.url()).searchParams.get(name);

describe.runIf(browserAvailable)('conversations in the panel', () => {
  it('creates an api inbox, sees an inbound message arrive live and the bot answer from the FAQ, reads it, takes over from the bot, notes, hands off, closes and reopens', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    const me = await apiCall<{ user: { id: string } }>(e2e, accessToken, 'GET', '/auth/me');

    // Settings → Inboxes: a new api inbox, its secrets shown once.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Inboxes' }).click();
    await page.getByText('No inboxes yet').waitFor();
    await page.getByRole('button', { name: 'New inbox' }).click();
    const dialog = page.getByRole('dialog', { name: 'New inbox' });
    await dialog.getByLabel('Name').fill('Shop API');
    expect(await dialog.getByLabel('Channel').inputValue()).toBe('api');
    await dialog.getByLabel('Delivery URL').fill(rx.url('/out'));
    await dialog.getByLabel('The bot answers new conversations').check();
    await dialog.getByRole('button', { name: 'Add FAQ entry' }).click();
    await dialog.getByLabel('Question 1').fill('Do you ship abroad?');
    await dialog.getByLabel('Answer 1').fill('Yes, to all of Europe.');
    await screenshot(page, 'inbox-new');
    await dialog.getByRole('button', { name: 'Create inbox' }).click();
    const created = page.getByRole('dialog', { name: 'Inbox created' });
    const signingSecret = await created.getByLabel('Signing secret', { exact: true }).innerText();
    expect(signingSecret).toMatch(/^whsec_/);
    const inboundUrl = await created.getByLabel('Inbound URL', { exact: true }).innerText();
    expect(inboundUrl).toMatch(new RegExp(`/api/v1/orgs/${orgId}/inboxes/inb_[^/]+/messages$`));
    await screenshot(page, 'inbox-created');
    await created.getByRole('button', { name: 'Done' }).click();
    const inboxes = page.getByRole('table', { name: 'Inboxes' });
    await inboxes.getByRole('link', { name: 'Shop API' }).waitFor();
    const stored = await apiCall<{ items: { config: { url: string; faq: unknown[] }; bot: { enabled: boolean } }[] }>(
      e2e,
      accessToken,
      'GET',
      `/orgs/${orgId}/inboxes`,
    );
    expect(stored.items).toEqual([
      expect.objectContaining({
        config: { url: rx.url('/out'), faq: [{ question: 'Do you ship abroad?', answer: 'Yes, to all of Europe.' }] },
        bot: expect.objectContaining({ enabled: true }),
      }),
    ]);

    // The customer's system posts inbound messages with an API key.
    const { key } = await apiCall<{ key: string }>(e2e, accessToken, 'POST', `/orgs/${orgId}/api-keys`, { name: 'shop', scopes: ['conversations:write'] });

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Conversations' }).click();
    await page.getByText('No open conversations').waitFor();
    await markDocument(page);
    await postInbound(inboundUrl, key, { contact: { name: 'Ada Lovelace', address: 'ada@engines.example' }, text: 'Hello, do you ship to Norway?' });

    // It appears without a reload, unread.
    const list = page.getByRole('list', { name: 'Conversations' });
    const filters = page.getByRole('search', { name: 'Filter conversations' });
    await list.getByRole('button', { name: 'Ada Lovelace, 1 unread' }).waitFor();
    expect(await stillSameDocument(page)).toBe(true);
    await screenshot(page, 'conversations-list');

    // Opening it reads it: the badge goes, for this user in the API too.
    await list.getByRole('button', { name: /Ada Lovelace/ }).click();
    const log = page.getByRole('log', { name: 'Messages' });
    await log.getByText('Hello, do you ship to Norway?').waitFor();
    // The bot answers from the inbox's FAQ, live, through the customer's system.
    await log.getByRole('article', { name: /^Bot: Yes, to all of Europe/ }).waitFor();
    await rx.waitFor(1);
    expect(rx.received[0]!.json).toMatchObject({ payload: { message: { sender: 'bot', text: 'Yes, to all of Europe.' } } });
    await list.getByRole('button', { name: 'Ada Lovelace', exact: true }).waitFor();
    const conversationId = searchParam(page, 'conversation')!;
    expect(conversationId).toMatch(/^conv_/);
    await expect.poll(async () => (await apiCall<Conversation>(e2e, accessToken, 'GET', `/orgs/${orgId}/conversations/${conversationId}`)).unreadCount).toBe(0);

    // The details: the contact became a lead (linked), the inbox, handled by the bot.
    const details = page.getByRole('complementary', { name: 'Details' });
    await details.getByText('Handled by the bot').waitFor();
    await details.getByText('Shop API').waitFor();
    const leadId = (await apiCall<Conversation>(e2e, accessToken, 'GET', `/orgs/${orgId}/conversations/${conversationId}`)).leadId!;
    expect(await details.getByRole('link', { name: 'Open lead' }).getAttribute('href')).toContain(`lead=${leadId}`);

    // A reply in a bot-handled conversation says it takes over; the receiver gets it signed.
    const thread = page.getByRole('region', { name: 'Thread' });
    await thread.getByText('sending a reply takes it over').waitFor();
    await thread.getByLabel('Reply').fill('Yes, we ship to Norway within 3 days.');
    await thread.getByRole('button', { name: 'Take over and send' }).click();
    await rx.waitFor(2);
    const delivery = rx.received[1]!;
    expect(signedBy(delivery, signingSecret)).toBe(true);
    expect(delivery.json).toMatchObject({
      type: 'conversation.message',
      payload: {
        message: { text: 'Yes, we ship to Norway within 3 days.' },
        conversation: { id: conversationId, contact: { address: 'ada@engines.example' } },
      },
    });
    const reply = log.getByRole('article', { name: /^Team: Yes, we ship to Norway/ });
    await reply.getByText('sent', { exact: true }).waitFor();
    await details.getByText('Handled by a person').waitFor();
    await details.getByText('takeover').waitFor();
    expect(await details.getByLabel('Assignee').inputValue()).toBe(me.user.id);

    // The contact writes again while the thread is open: it shows live and stays read.
    await postInbound(inboundUrl, key, { contact: { address: 'ada@engines.example' }, text: 'Great, and to Sweden?' });
    await log.getByText('Great, and to Sweden?').waitFor();
    await expect.poll(async () => (await apiCall<Conversation>(e2e, accessToken, 'GET', `/orgs/${orgId}/conversations/${conversationId}`)).unreadCount).toBe(0);
    await list.getByRole('button', { name: 'Ada Lovelace', exact: true }).waitFor();
    expect(await stillSameDocument(page)).toBe(true);

    // A private note: styled apart, stored, never sent.
    await thread.getByRole('button', { name: 'Private note' }).click();
    await thread.getByLabel('Private note').fill('Check the Swedish carrier rates before answering.');
    await thread.getByRole('button', { name: 'Add note' }).click();
    const note = log.getByRole('article', { name: /^Private note: Check the Swedish carrier/ });
    await note.getByText('Private note · not sent').waitFor();
    const messages = await apiCall<{ items: Message[] }>(e2e, accessToken, 'GET', `/orgs/${orgId}/conversations/${conversationId}/messages`);
    expect(messages.items.map((m) => [m.direction, m.private, m.text])).toEqual([
      ['in', false, 'Hello, do you ship to Norway?'],
      ['out', false, 'Yes, to all of Europe.'],
      ['out', false, 'Yes, we ship to Norway within 3 days.'],
      ['in', false, 'Great, and to Sweden?'],
      ['out', true, 'Check the Swedish carrier rates before answering.'],
    ]);
    // Oldest first on the page too.
    expect(await log.getByRole('article').evaluateAll((els) => els.map((el) => el.getAttribute('aria-label')?.split(':')[0]))).toEqual([
      'Contact',
      'Bot',
      'Team',
      'Contact',
      'Private note',
    ]);
    await screenshot(page, 'conversations');

    // Hand off with a reason: kept, and the organization is notified.
    await details.getByRole('button', { name: 'Hand off' }).click();
    const handoff = page.getByRole('dialog', { name: 'Hand off to a person' });
    await handoff.getByLabel('Reason').fill('shipping rates question');
    await handoff.getByRole('button', { name: 'Hand off' }).click();
    await details.getByText('shipping rates question').waitFor();
    await page.getByRole('button', { name: /Notifications, 1 unread/ }).waitFor();
    expect((await apiCall<Conversation>(e2e, accessToken, 'GET', `/orgs/${orgId}/conversations/${conversationId}`)).handoffReason).toBe(
      'shipping rates question',
    );

    // Close: it leaves the open list, the composer asks to reopen; the closed list has it; reopen.
    await details.getByRole('button', { name: 'Close', exact: true }).click();
    await details.getByRole('button', { name: 'Reopen' }).waitFor();
    await page.getByText('No open conversations').waitFor();
    await thread.getByText('reopen it to reply').waitFor();
    expect((await apiCall<Conversation>(e2e, accessToken, 'GET', `/orgs/${orgId}/conversations/${conversationId}`)).status).toBe('CLOSED');
    await filters.getByLabel('Status').selectOption('CLOSED');
    await expect.poll(() => searchParam(page, 'status')).toBe('CLOSED');
    await list.getByRole('button', { name: /Ada Lovelace/ }).waitFor();
    await details.getByRole('button', { name: 'Reopen' }).click();
    await details.getByRole('button', { name: 'Close', exact: true }).waitFor();
    expect((await apiCall<Conversation>(e2e, accessToken, 'GET', `/orgs/${orgId}/conversations/${conversationId}`)).status).toBe('OPEN');
    expect(rx.received).toHaveLength(2);

    // A reply the customer's system refuses shows as failed, with its answer.
    rx.behaviour = () => ({ status: 400, body: 'unknown contact' });
    await thread.getByRole('button', { name: 'Reply', exact: true }).click();
    await thread.getByLabel('Reply').fill('Sweden too, in 4 days.');
    await thread.getByRole('button', { name: 'Send reply' }).click();
    const refused = log.getByRole('article', { name: /^Team: Sweden too/ });
    await refused.getByText('failed', { exact: true }).waitFor();
    await refused.getByText(/Not delivered: .*unknown contact/).waitFor();
    rx.behaviour = (_req, n) => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: `their-${n}` }) });

    // The filters live in the URL: a reload keeps them and what they select.
    await filters.getByLabel('Status').selectOption('OPEN');
    await filters.getByLabel('Handled by').selectOption('human');
    await filters.getByLabel('Assignee').selectOption('mine');
    await filters.getByLabel('Search').fill('Sweden');
    await expect.poll(() => searchParam(page, 'q')).toBe('Sweden');
    expect(searchParam(page, 'handledBy')).toBe('human');
    expect(searchParam(page, 'assigneeId')).toBe('mine');
    expect(searchParam(page, 'status')).toBeNull();
    await page.reload();
    await list.getByRole('button', { name: /Ada Lovelace/ }).waitFor();
    expect(await filters.getByLabel('Search').inputValue()).toBe('Sweden');
    expect(await filters.getByLabel('Handled by').inputValue()).toBe('human');
    await log.getByText('Great, and to Sweden?').waitFor();
    await filters.getByLabel('Handled by').selectOption('bot');
    await page.getByText('No conversations match these filters').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await list.getByRole('button', { name: /Ada Lovelace/ }).waitFor();
    // Taken over, so assigned to me: not in the unassigned queue.
    await filters.getByLabel('Assignee').selectOption('none');
    await expect.poll(() => searchParam(page, 'assigneeId')).toBe('none');
    await page.getByText('No conversations match these filters').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await list.getByRole('button', { name: /Ada Lovelace/ }).waitFor();
    expect(searchParam(page, 'handledBy')).toBeNull();
    expect(searchParam(page, 'conversation')).toBe(conversationId);

    // The hand-off's notification leads to the conversation.
    await page.goto(`/orgs/${orgId}/leads`);
    await page.getByRole('button', { name: /Notifications, 1 unread/ }).click();
    await page
      .getByRole('dialog', { name: 'Notifications' })
      .getByRole('button', { name: /A conversation needs a person/ })
      .click();
    await expect.poll(() => searchParam(page, 'conversation')).toBe(conversationId);
    await log.getByText('Hello, do you ship to Norway?').waitFor();
  });

  it('edits an inbox in settings and deletes it after confirming', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/inboxes`, { name: 'Helpdesk', channel: 'api', config: { url: rx.url('/helpdesk') } });
    await page.goto(`/orgs/${orgId}/settings/inboxes`);
    const table = page.getByRole('table', { name: 'Inboxes' });
    await table.getByRole('link', { name: 'Helpdesk' }).waitFor();
    await screenshot(page, 'settings-inboxes');

    await table.getByRole('button', { name: 'Edit Helpdesk' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Helpdesk' });
    expect(await edit.getByLabel('Delivery URL').inputValue()).toBe(rx.url('/helpdesk'));
    await edit.getByLabel('Name').fill('Helpdesk EU');
    await edit.getByLabel('Delivery URL').fill(rx.url('/helpdesk-eu'));
    await edit.getByLabel('The bot answers new conversations').check();
    await edit.getByRole('button', { name: 'Save inbox' }).click();
    await table.getByRole('link', { name: 'Helpdesk EU' }).waitFor();
    const [inbox] = (
      await apiCall<{ items: { id: string; name: string; config: { url: string }; bot: { enabled: boolean } }[] }>(
        e2e,
        accessToken,
        'GET',
        `/orgs/${orgId}/inboxes`,
      )
    ).items;
    expect(inbox).toMatchObject({ name: 'Helpdesk EU', config: { url: rx.url('/helpdesk-eu') }, bot: { enabled: true } });

    // The channel filter lives in the URL.
    await page.getByLabel('Channel').selectOption('email');
    await expect.poll(() => searchParam(page, 'channel')).toBe('email');
    await page.getByText('No E-mail inboxes').waitFor();
    await page.getByLabel('Channel').selectOption('');
    await table.getByRole('link', { name: 'Helpdesk EU' }).waitFor();

    // Deleting asks first; Cancel keeps it.
    await table.getByRole('button', { name: 'Delete Helpdesk EU' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete Helpdesk EU?' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect((await apiCall<{ total: number }>(e2e, accessToken, 'GET', `/orgs/${orgId}/inboxes`)).total).toBe(1);
    await table.getByRole('button', { name: 'Delete Helpdesk EU' }).click();
    await confirm.getByRole('button', { name: 'Delete inbox' }).click();
    await page.getByText('No inboxes yet').waitFor();
    expect(await apiCall<{ total: number }>(e2e, accessToken, 'GET', `/orgs/${orgId}/inboxes/${inbox!.id}`).catch((e: Error) => e.message)).toMatch(/404/);
  });
});
