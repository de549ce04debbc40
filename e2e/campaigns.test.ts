import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { SmtpStandIn } from '../test/smtp.ts';
import { apiCall, browserAvailable, screenshot, signUp, startE2E, type E2E } from './harness.ts';

let e2e: E2E;
let smtp: SmtpStandIn;
beforeAll(async () => {
  if (!browserAvailable) return;
  // The operator's relay: the e-mail inbox sends through it, so "sent" means a mail arrived here.
  smtp = await new SmtpStandIn().start();
  e2e = await startE2E({ SMTP_URL: smtp.url });
});
afterAll(async () => {
  await e2e?.close();
  await smtp?.close();
});

interface Campaign {
  id: string;
  status: string;
  audience: Record<string, unknown>;
  steps: { delaySeconds: number; subject?: string; text: string }[];
  settings: Record<string, unknown>;
  stats: Record<string, number>;
}

const searchParam = (page: Page, name: string) => new URL(page.url()).searchParams.get(name);
const mailsTo = (address: string) => smtp.received.filter((m) => m.rcptTo.includes(address));
/** A counter of the progress view (a `dd` labelled by its `dt`). */
const stat = (page: Page, name: string) => page.getByRole('region', { name: 'Progress' }).getByLabel(name, { exact: true });

describe.runIf(browserAvailable)('campaigns in the panel', () => {
  it('creates a campaign in the editor (audience preview, API errors shown), sends a test, starts it, watches it send, filters recipients, pauses and resumes it', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    const call = <T = unknown>(method: string, path: string, body?: unknown) => apiCall<T>(e2e, accessToken, method, `/orgs/${orgId}${path}`, body);
    const ada = 'ada@lovelace.example';
    const bob = 'bob@babbage.example';
    await call('POST', '/leads', { name: 'Ada', email: ada, tags: ['spring'] });
    await call('POST', '/leads', { name: 'Bob', email: bob, tags: ['spring'] });
    await call('POST', '/leads', { name: 'Cy', phone: '+4915112345678', tags: ['spring'] });
    await call('POST', '/leads', { name: 'Dee', email: 'dee@example.org' });
    await call('POST', '/inboxes', { name: 'Outreach', channel: 'email', config: { address: 'sales@shop.example.com', fromName: 'Shop' } });
    // Not a sending channel: the editor does not offer it.
    await call('POST', '/inboxes', { name: 'Helpdesk API', channel: 'api', config: { url: 'https://crm.example.com/hook' } });

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('heading', { name: 'Campaigns', level: 1 }).waitFor();
    await page.getByText('No campaigns yet').waitFor();
    await page.getByRole('link', { name: 'New campaign' }).click();
    await page.getByRole('heading', { name: 'New campaign' }).waitFor();

    const form = page.getByRole('form', { name: 'Campaign' });
    await form.getByLabel('Name').fill('Spring welcome');
    // The inboxes arrive after the form (under load, "Loading inboxes…" first).
    await expect.poll(() => form.getByLabel('Inbox').locator('option').allInnerTexts()).toEqual(['Choose an inbox', 'Outreach (E-mail)']);
    await form.getByLabel('Inbox').selectOption({ label: 'Outreach (E-mail)' });

    // The audience preview counts the leads the filter matches now.
    const preview = form.getByRole('status', { name: 'Audience preview' });
    await expect.poll(() => preview.innerText()).toMatch(/^4 leads match/);
    await form.getByLabel('Tags').fill('spring');
    await expect.poll(() => preview.innerText()).toMatch(/^3 leads match/);
    await form.getByRole('group', { name: 'Lead status' }).getByLabel('Customer').check();
    await expect.poll(() => preview.innerText()).toMatch(/^0 leads match/);
    await form.getByRole('group', { name: 'Lead status' }).getByLabel('Customer').uncheck();
    await form.getByRole('group', { name: 'Lead status' }).getByLabel('New').check();
    await expect.poll(() => preview.innerText()).toMatch(/^3 leads match/);

    // Two steps: the e-mail's subject, personalised text; the follow-up a day later.
    const first = form.getByRole('group', { name: 'Step 1' });
    expect(await first.getByRole('button', { name: 'Remove step 1' }).isDisabled()).toBe(true);
    await first.getByLabel('Subject').fill('Hello {{ lead.name }}');
    await first.getByLabel('Message').fill('Hi {{ lead.name }}, spring is here.');
    await form.getByText('{{ lead.name }}', { exact: true }).first().waitFor();
    await form.getByRole('button', { name: 'Add step' }).click();
    await form.getByRole('button', { name: 'Add step' }).click();
    const second = form.getByRole('group', { name: 'Step 2' });
    expect(await second.getByLabel('Days').inputValue()).toBe('1');
    await second.getByLabel('Hours').fill('6');
    await second.getByText('Sent after 1 day 6 hours').waitFor();
    await second.getByLabel('Message').fill('Any questions, {{ lead.name }}?');
    await form.getByRole('button', { name: 'Remove step 3' }).click();
    await expect.poll(() => form.getByRole('group', { name: /^Step \d$/ }).count()).toBe(2);
    await form.getByLabel('Messages per minute').fill('120');

    // A window that ends before it starts: the API's 400 shows beside the form and under the field.
    await form.getByLabel('Send only within a window').check();
    await form.getByLabel('From').fill('18:00');
    await form.getByLabel('To', { exact: true }).fill('09:00');
    await form.getByRole('button', { name: 'Create campaign' }).click();
    await expect.poll(() => form.getByRole('alert').innerText()).toMatch(/window\.to must be after from/);
    await form.getByText('must be after from', { exact: true }).waitFor();
    await screenshot(page, 'campaign-editor');
    await form.getByLabel('Send only within a window').uncheck();
    await form.getByRole('button', { name: 'Create campaign' }).click();

    // The detail page of the new draft.
    await page.getByRole('heading', { name: 'Spring welcome', level: 1 }).waitFor();
    const campaignId = new URL(page.url()).pathname.split('/').at(-1)!;
    expect(campaignId).toMatch(/^cmp_/);
    const stored = await call<Campaign>('GET', `/campaigns/${campaignId}`);
    expect(stored).toMatchObject({
      status: 'DRAFT',
      audience: { tags: ['spring'], status: 'NEW' },
      steps: [
        { delaySeconds: 0, subject: 'Hello {{ lead.name }}', text: 'Hi {{ lead.name }}, spring is here.' },
        { delaySeconds: 30 * 3600, text: 'Any questions, {{ lead.name }}?' },
      ],
      settings: { perMinute: 120, stopOnReply: true },
    });
    expect(stored.settings.window).toBeUndefined();
    const actions = page.getByRole('group', { name: 'Campaign actions' });
    const main = page.getByRole('main');
    await main.getByText('Draft', { exact: true }).waitFor();
    await page.getByText('No recipients yet').waitFor();

    // A test send: the first step, to one address, not counted.
    await actions.getByRole('button', { name: 'Send test' }).click();
    const test = page.getByRole('dialog', { name: 'Send a test' });
    await test.getByLabel('Send to').fill('me@shop.example.com');
    await test.getByRole('button', { name: 'Send test' }).click();
    await test.getByText(/Test queued for me@shop\.example\.com/).waitFor();
    await expect.poll(() => mailsTo('me@shop.example.com').length).toBe(1);
    expect(mailsTo('me@shop.example.com')[0]!.subject).toMatch(/^\[Test\] Hello/);
    await test.getByRole('button', { name: 'Done' }).click();

    // Start: the audience becomes recipients; the stats move as the relay takes the mails.
    await actions.getByRole('button', { name: 'Start' }).click();
    await main.getByText('Running', { exact: true }).waitFor();
    await expect.poll(() => stat(page, 'Total').innerText()).toBe('3');
    await expect.poll(() => mailsTo(ada).length + mailsTo(bob).length).toBe(2);
    expect(mailsTo(ada)[0]!.subject).toBe('Hello Ada');
    await expect.poll(() => stat(page, 'Sent').innerText()).toBe('2');
    expect(await stat(page, 'Skipped').innerText()).toBe('1');
    await page.getByText('Live: refreshed every 2 seconds').waitFor();
    const recipients = page.getByRole('table', { name: 'Recipients' });
    await expect.poll(() => recipients.getByRole('row').count()).toBe(4);
    const skippedRow = recipients.getByRole('row', { name: /No address/ });
    await skippedRow.getByText('No address on the channel').waitFor();
    await skippedRow.getByText('Skipped', { exact: true }).waitFor();
    const adaRow = recipients.getByRole('row', { name: new RegExp(ada) });
    await adaRow.getByText('1 of 2').waitFor();
    // The follow-up is due a day and 6 hours after the first mail went out.
    await expect.poll(() => adaRow.getByRole('cell').nth(4).innerText()).not.toBe('—');
    expect(smtp.received.filter((m) => m.rcptTo.includes('dee@example.org'))).toHaveLength(0);
    await screenshot(page, 'campaign-detail');

    // The recipients' status filter lives in the URL.
    await page.getByLabel('Recipient status').selectOption('SKIPPED');
    await expect.poll(() => searchParam(page, 'status')).toBe('SKIPPED');
    await expect.poll(() => recipients.getByRole('row').count()).toBe(2);
    await page.reload();
    await recipients.getByRole('row', { name: /No address/ }).waitFor();
    expect(await page.getByLabel('Recipient status').inputValue()).toBe('SKIPPED');
    await page.getByLabel('Recipient status').selectOption('');
    await expect.poll(() => recipients.getByRole('row').count()).toBe(4);

    // Pause and resume; while paused it can be edited (the audience is fixed by then).
    await actions.getByRole('button', { name: 'Pause' }).click();
    await main.getByText('Paused', { exact: true }).waitFor();
    await page.getByText('Paused: paused by a person').waitFor();
    expect((await call<Campaign>('GET', `/campaigns/${campaignId}`)).status).toBe('PAUSED');
    await actions.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit Spring welcome' }).waitFor();
    expect(await form.getByLabel('Tags').isDisabled()).toBe(true);
    expect(await form.getByLabel('Inbox').isDisabled()).toBe(true);
    expect(await form.getByRole('group', { name: 'Step 2' }).getByLabel('Hours').inputValue()).toBe('6');
    await form.getByLabel('Name').fill('Spring welcome (v2)');
    await form.getByRole('button', { name: 'Save campaign' }).click();
    await page.getByRole('heading', { name: 'Spring welcome (v2)', level: 1 }).waitFor();
    await actions.getByRole('button', { name: 'Resume' }).click();
    await main.getByText('Running', { exact: true }).waitFor();
    expect((await call<Campaign>('GET', `/campaigns/${campaignId}`)).status).toBe('RUNNING');

    // The list: counts, and the status filter in the URL.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
    const list = page.getByRole('table', { name: 'Campaigns' });
    const row = list.getByRole('row', { name: /Spring welcome \(v2\)/ });
    await row.waitFor();
    const { stats } = await call<Campaign>('GET', `/campaigns/${campaignId}`);
    expect(await row.getByRole('cell').allInnerTexts()).toEqual([
      'Spring welcome (v2)',
      'E-mail',
      'Running',
      '3',
      '2',
      String(stats.pending),
      expect.any(String),
    ]);
    await screenshot(page, 'campaigns');
    await page.getByLabel('Status').selectOption('DRAFT');
    await expect.poll(() => searchParam(page, 'status')).toBe('DRAFT');
    await page.getByText('No draft campaigns').waitFor();
    await page.getByLabel('Status').selectOption('RUNNING');
    await row.waitFor();
  });

  it('adds a suppression on the settings page, filters and searches the list (in the URL), and lifts it after confirming', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/suppressions`, { channel: 'whatsapp', address: '+4915112345678', reason: 'stop_keyword' });

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Suppressions' }).click();
    const table = page.getByRole('table', { name: 'Suppressions' });
    await table
      .getByRole('row', { name: /\+4915112345678/ })
      .getByText('STOP keyword')
      .waitFor();

    await page.getByRole('button', { name: 'Add suppression' }).click();
    const add = page.getByRole('dialog', { name: 'Add suppression' });
    expect(await add.getByLabel('Channel').inputValue()).toBe('email');
    await add.getByLabel('Address').fill('gone@example.org');
    await add.getByLabel('Reason').selectOption({ label: 'Complaint' });
    await add.getByRole('button', { name: 'Add suppression' }).click();
    await add.waitFor({ state: 'hidden' });
    await table
      .getByRole('row', { name: /gone@example\.org/ })
      .getByText('Complaint')
      .waitFor();
    const stored = await apiCall<{ items: { id: string; channel: string; address: string; reason: string }[] }>(
      e2e,
      accessToken,
      'GET',
      `/orgs/${orgId}/suppressions?channel=email`,
    );
    expect(stored.items).toEqual([expect.objectContaining({ channel: 'email', address: 'gone@example.org', reason: 'complaint' })]);

    const filters = page.getByRole('search', { name: 'Filter suppressions' });
    await filters.getByLabel('Channel').selectOption('whatsapp');
    await expect.poll(() => searchParam(page, 'channel')).toBe('whatsapp');
    await expect.poll(() => table.getByRole('row').count()).toBe(2);
    await filters.getByLabel('Search').fill('gone');
    await expect.poll(() => searchParam(page, 'q')).toBe('gone');
    await page.getByText('No suppressions match these filters').waitFor();
    await filters.getByLabel('Channel').selectOption('');
    await expect.poll(() => searchParam(page, 'channel')).toBeNull();
    await page.reload();
    await table.getByRole('row', { name: /gone@example\.org/ }).waitFor();
    expect(await table.getByRole('row').count()).toBe(2);
    expect(await filters.getByLabel('Search').inputValue()).toBe('gone');
    await screenshot(page, 'suppressions');

    // Lifting asks first; Cancel keeps it.
    await table.getByRole('button', { name: 'Delete the suppression of gone@example.org' }).click();
    const confirm = page.getByRole('dialog', { name: 'Lift the suppression of gone@example.org?' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await table.getByRole('button', { name: 'Delete the suppression of gone@example.org' }).click();
    await confirm.getByRole('button', { name: 'Lift suppression' }).click();
    await page.getByText('No suppressions match these filters').waitFor();
    expect((await apiCall<{ total: number }>(e2e, accessToken, 'GET', `/orgs/${orgId}/suppressions`)).total).toBe(1);
  });
});
