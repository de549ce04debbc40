import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { apiCall, browserAvailable, screenshot, signIn, signUp, startE2E, type E2E } from './harness.ts';
import { Receiver } from '../test/receiver.ts';
import { linkIn, SmtpStandIn } from '../test/smtp.ts';

// A real webhook receiver (node:http on loopback) and a real SMTP relay (smtp-server) stand in for
// the customer's systems; the service sends to them as it would in production.
let e2e: E2E;
let receiver: Receiver;
let relay: SmtpStandIn;
beforeAll(async () => {
  if (!browserAvailable) return;
  receiver = await new Receiver().start();
  relay = await new SmtpStandIn().start();
  // Every test signs in several times: more than the default 20 password-route requests a minute.
  e2e = await startE2E({ SMTP_URL: relay.url, AUTH_RATE_LIMIT_MAX: '500' });
});
afterAll(async () => {
  await e2e?.close();
  await receiver?.stop();
  await relay?.close();
});

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();

async function mailTo(address: string) {
  await expect.poll(() => relay.received.some((m) => m.rcptTo.includes(address)), { timeout: 10_000 }).toBe(true);
  return relay.received.filter((m) => m.rcptTo.includes(address)).at(-1)!;
}

describe.runIf(browserAvailable)('administration in the panel', () => {
  it('webhooks: creates an endpoint, sends a signed test, shows and resends deliveries, and a 410 deactivates it with a live notification', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    receiver.behaviour = (req) => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ received: (req.json as { type?: string } | undefined)?.type ?? null }),
    });

    await nav(page, 'Webhooks');
    await page.getByText('No webhook endpoints yet').waitFor();
    await page.getByRole('button', { name: 'New endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'New webhook endpoint' });
    await dialog.getByLabel('URL', { exact: true }).fill(receiver.url('/hooks/crm'));
    await dialog.getByLabel('Description', { exact: true }).fill('CRM sync');
    await dialog.getByRole('checkbox', { name: 'Leads: all events' }).check();
    await dialog.getByRole('checkbox', { name: 'post.published' }).check();
    await dialog.getByText('5 of 28 events chosen.').waitFor();
    await screenshot(page, 'webhooks-new');
    await dialog.getByRole('button', { name: 'Create endpoint' }).click();
    const created = page.getByRole('dialog', { name: 'Endpoint created' });
    const secret = (await created.getByLabel('Signing secret').innerText()).trim();
    expect(secret.length).toBeGreaterThanOrEqual(16);
    await created.getByRole('button', { name: 'Open endpoint' }).click();
    await page.getByRole('heading', { name: receiver.url('/hooks/crm') }).waitFor();
    const endpointId = new URL(page.url()).pathname.split('/').pop()!;
    const stored = await apiCall<{ events: string[]; description: string }>(e2e, accessToken, 'GET', `/orgs/${orgId}/webhook-endpoints/${endpointId}`);
    expect(stored).toMatchObject({ description: 'CRM sync', events: ['lead.created', 'lead.updated', 'lead.qualified', 'lead.replied', 'post.published'] });

    // An event the endpoint subscribes to: its delivery appears without a reload, then a resend.
    await page.getByText('No deliveries in the last 7 days').waitFor();
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/leads`, { name: 'Ada Lovelace', email: 'ada@engines.example' });
    const deliveries = page.getByRole('table', { name: 'Deliveries' });
    await deliveries.getByText('succeeded').waitFor();
    await deliveries.getByText('HTTP 200').waitFor();
    await deliveries.getByRole('button', { name: 'Resend lead.created (attempt 1)' }).click();
    await expect.poll(() => deliveries.getByText('succeeded').count(), { timeout: 10_000 }).toBe(2);
    const leadHooks = receiver.received.filter((r) => r.headers['x-service-event'] === 'lead.created');
    expect(leadHooks).toHaveLength(2);
    expect((leadHooks[1]!.json as { id: string }).id).toBe((leadHooks[0]!.json as { id: string }).id);
    expect(leadHooks[1]!.headers['x-service-delivery']).not.toBe(leadHooks[0]!.headers['x-service-delivery']);

    // The status filter lives in the URL.
    await page.getByLabel('Delivery status').selectOption('failed');
    await expect.poll(() => new URL(page.url()).searchParams.get('status')).toBe('failed');
    await page.getByText('No failed deliveries in the last 7 days').waitFor();
    await page.reload();
    await page.getByText('No failed deliveries in the last 7 days').waitFor();
    expect(await page.getByLabel('Delivery status').inputValue()).toBe('failed');
    await page.getByLabel('Delivery status').selectOption('');
    await expect.poll(() => deliveries.locator('tbody tr').count()).toBe(2);

    // The test: a signed `ping`, its status, duration and response shown.
    const before = receiver.received.length;
    await page.getByRole('button', { name: 'Send test' }).click();
    const result = page.getByRole('region', { name: 'Test result' });
    await result.getByText(/^Test delivered: HTTP 200 in \d+ ms$/).waitFor();
    expect(await result.getByLabel('Response preview').innerText()).toBe('{"received":"ping"}');
    const ping = receiver.received[before]!;
    expect(ping.method).toBe('POST');
    expect(ping.headers['x-service-event']).toBe('ping');
    expect(ping.headers['user-agent']).toBe('Service-Webhooks/1.0');
    expect(ping.headers['x-service-delivery']).toBeTruthy();
    const timestamp = ping.headers['x-service-timestamp'] as string;
    expect(Math.abs(Date.now() / 1000 - Number(timestamp))).toBeLessThan(300);
    expect(ping.headers['x-service-signature']).toBe(`sha256=${createHmac('sha256', secret).update(`${timestamp}.${ping.raw}`).digest('hex')}`);
    expect(ping.json).toMatchObject({ type: 'ping', organizationId: orgId });
    await screenshot(page, 'webhook-detail');

    // A second endpoint for everything, then the list.
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/webhook-endpoints`, {
      url: receiver.url('/hooks/warehouse'),
      events: ['*'],
      description: 'Data warehouse',
    });
    await nav(page, 'Webhooks');
    const list = page.getByRole('table', { name: 'Webhook endpoints' });
    await list.getByText('All events').waitFor();
    await list.getByText('5 events').waitFor();
    await screenshot(page, 'webhooks');

    // The receiver answers 410 Gone: the service deactivates the endpoint and tells the owner.
    receiver.behaviour = (req) => (req.url === '/hooks/crm' ? { status: 410, body: 'gone' } : { status: 200, body: 'ok' });
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/leads`, { name: 'Grace Hopper', email: 'grace@navy.example' });
    const bell = page.getByRole('button', { name: 'Notifications, 1 unread' });
    await bell.waitFor({ timeout: 15_000 });
    await bell.click();
    await page
      .getByRole('dialog', { name: 'Notifications' })
      .getByRole('button', { name: /Webhook endpoint deactivated/ })
      .click();
    await page.waitForURL(`**/orgs/${orgId}/webhooks/${endpointId}**`);
    await page.getByRole('alert').filter({ hasText: 'Deliveries to this endpoint are stopped' }).waitFor();
    await deliveries.getByText('HTTP 410').waitFor();
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    expect(
      await apiCall<{ active: boolean; consecutiveFailures: number }>(e2e, accessToken, 'GET', `/orgs/${orgId}/webhook-endpoints/${endpointId}`),
    ).toMatchObject({ active: true, consecutiveFailures: 0 });
  });

  it('API keys: creates one with scopes, shows it once, works with fetch within its scopes, and stops at revocation', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    await nav(page, 'API keys');
    expect((await page.getByLabel('Organization ID', { exact: true }).innerText()).trim()).toBe(orgId);
    await page.getByText('No API keys yet').waitFor();

    await page.getByRole('button', { name: 'New API key' }).click();
    const dialog = page.getByRole('dialog', { name: 'New API key' });
    await dialog.getByLabel('Name', { exact: true }).fill('CRM sync');
    await dialog.getByRole('checkbox', { name: 'leads:read' }).check();
    await dialog.getByRole('checkbox', { name: 'leads:write' }).check();
    await dialog.getByText('2 scopes: leads:read, leads:write').waitFor();
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('dialog', { name: 'API key created' });
    const key = (await shown.getByLabel('API key').innerText()).trim();
    expect(key.length).toBeGreaterThan(20);

    const headers = { 'x-api-key': key, 'content-type': 'application/json' };
    const created = await fetch(`${e2e.base}/api/v1/orgs/${orgId}/leads`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'From the CRM', email: 'crm@partner.example' }),
    });
    expect(created.status).toBe(201);
    const listed = await fetch(`${e2e.base}/api/v1/orgs/${orgId}/leads`, { headers });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { items: { email: string }[] }).items.map((l) => l.email)).toEqual(['crm@partner.example']);
    const runs = await fetch(`${e2e.base}/api/v1/orgs/${orgId}/runs`, { headers });
    expect(runs.status).toBe(403);
    expect(await runs.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });

    await shown.getByRole('button', { name: 'Done' }).click();
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/api-keys`, { name: 'Reporting dashboard', scopes: ['usage:read', 'reports:read'] });
    await page.reload();
    const table = page.getByRole('table', { name: 'API keys' });
    await table.getByText('Reporting dashboard').waitFor();
    const row = table.locator('tr', { hasText: 'CRM sync' });
    await row.getByText('leads:write').waitFor();
    const { prefix } = (await apiCall<{ name: string; prefix: string }[]>(e2e, accessToken, 'GET', `/orgs/${orgId}/api-keys`)).find(
      (k) => k.name === 'CRM sync',
    )!;
    expect(key.startsWith(prefix)).toBe(true);
    await row.getByText(`${prefix}…`).waitFor();
    expect(await row.getByText('Never').count()).toBe(0);
    await screenshot(page, 'api-keys');

    await table.getByRole('button', { name: 'Revoke CRM sync' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke CRM sync?' });
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    // The open dialog hides the table from the accessibility tree: wait for it to close first.
    await confirm.waitFor({ state: 'hidden' });
    await table.getByText('Reporting dashboard').waitFor();
    await expect.poll(() => table.getByText('CRM sync').count()).toBe(0);
    expect((await fetch(`${e2e.base}/api/v1/orgs/${orgId}/leads`, { headers })).status).toBe(401);
  });

  it('members: invites a viewer who accepts in a new browser, sees no write actions and a 403 where refused; roles change; revoked links fail', async () => {
    const owner = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, owner);
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/leads`, { name: 'Existing Lead', email: 'lead@customer.example' });
    await nav(owner, 'Members');
    await owner.getByRole('table', { name: 'Members' }).getByText('Dana Marketer').waitFor();
    await owner.getByText('No pending invitations').waitFor();

    const invite = async (email: string, role: string) => {
      await owner.getByRole('button', { name: 'Invite member' }).click();
      const dialog = owner.getByRole('dialog', { name: 'Invite a member' });
      await dialog.getByLabel('Email').fill(email);
      await dialog.getByLabel('Role').selectOption(role);
      await dialog.getByRole('button', { name: 'Send invitation' }).click();
      const sent = owner.getByRole('dialog', { name: 'Invitation created' });
      await sent.getByText(`An e-mail with this link was sent to ${email}.`, { exact: false }).waitFor();
      const link = (await sent.getByLabel('Invitation link', { exact: true }).innerText()).trim();
      await sent.getByRole('button', { name: 'Done' }).click();
      return link;
    };
    const viewerEmail = `viewer${Date.now()}@example.com`;
    const link = await invite(viewerEmail, 'viewer');
    expect(link.startsWith(`${e2e.base}/accept-invitation?token=`)).toBe(true);
    expect(linkIn(await mailTo(viewerEmail), `${e2e.base}/accept-invitation?token=`)).toBe(link);
    const pending = owner.getByRole('table', { name: 'Pending invitations' });
    await pending.getByText(viewerEmail).waitFor();

    // A second invitation, revoked: its link stops working.
    const revokedEmail = `revoked${Date.now()}@example.com`;
    const revokedLink = await invite(revokedEmail, 'member');
    await pending.getByRole('button', { name: `Revoke invitation of ${revokedEmail}` }).click();
    await expect.poll(() => pending.getByText(revokedEmail).count()).toBe(0);

    // The invited person, in a browser of their own, creates the account by accepting.
    const viewer = await e2e.page();
    await viewer.goto(link);
    await viewer.getByLabel('Name').fill('Vic Viewer');
    await viewer.getByLabel('Password').fill('viewer passphrase 2026');
    await viewer.getByRole('button', { name: 'Accept invitation' }).click();
    await viewer.getByRole('navigation', { name: 'Main' }).waitFor();
    expect(new URL(viewer.url()).pathname).toBe(`/orgs/${orgId}`);

    // A viewer reads, and sees no write action anywhere.
    await nav(viewer, 'Leads');
    await viewer.getByRole('table', { name: 'Leads' }).getByText('Existing Lead').waitFor();
    expect(await viewer.getByRole('button', { name: 'New lead' }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: 'Import CSV' }).count()).toBe(0);
    expect(await viewer.getByLabel('Select all on this page').count()).toBe(0);
    await nav(viewer, 'Webhooks');
    await viewer.getByText('An owner or admin can add endpoints.').waitFor();
    expect(await viewer.getByRole('button', { name: 'New endpoint' }).count()).toBe(0);
    await nav(viewer, 'Members');
    const seen = viewer.getByRole('table', { name: 'Members' });
    await seen.getByText(viewerEmail).waitFor();
    expect(await viewer.getByRole('button', { name: 'Invite member' }).count()).toBe(0);
    expect(await viewer.getByRole('combobox', { name: /^Role of / }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: /^Remove / }).count()).toBe(0);
    expect(await viewer.getByText('Pending invitations').count()).toBe(0);
    await nav(viewer, 'Settings');
    await viewer.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Projects' }).click();
    await viewer.getByRole('table', { name: 'Projects' }).getByText('Default').waitFor();
    expect(await viewer.getByRole('button', { name: 'Create project' }).count()).toBe(0);
    // What the role does not allow is said as such.
    await nav(viewer, 'API keys');
    const refused = viewer.getByRole('alert').filter({ hasText: 'You do not have access to this' });
    await refused.waitFor();
    expect(await refused.innerText()).toMatch(/owner or admin/i);
    expect(await viewer.getByRole('button', { name: 'New API key' }).count()).toBe(0);
    expect((await viewer.getByLabel('Organization ID', { exact: true }).innerText()).trim()).toBe(orgId);

    // The owner makes the viewer a member.
    await owner.reload();
    await owner.getByRole('combobox', { name: `Role of ${viewerEmail}` }).selectOption('member');
    await owner.getByText('Vic Viewer is now a member.').waitFor();
    const members = await apiCall<{ email: string; role: string }[]>(e2e, accessToken, 'GET', `/orgs/${orgId}/members`);
    expect(members.find((m) => m.email === viewerEmail)?.role).toBe('member');

    // The revoked link no longer lets anyone in.
    const stranger = await e2e.page();
    await stranger.goto(revokedLink);
    await stranger.getByLabel('Password').fill('stranger passphrase 2026');
    await stranger.getByRole('button', { name: 'Accept invitation' }).click();
    await stranger.getByText('This invitation link does not work.').waitFor();

    await invite(`later${Date.now()}@example.com`, 'admin');
    await owner.getByRole('table', { name: 'Members' }).getByText('Vic Viewer').waitFor();
    await screenshot(owner, 'members');
  });

  it('password: changes it in the settings, signs in with the new one, and resets a forgotten one by e-mail', async () => {
    const page = await e2e.page();
    const { email, password, orgId } = await signUp(e2e, page);
    await nav(page, 'Settings');
    expect((await page.getByLabel('Organization ID', { exact: true }).innerText()).trim()).toBe(orgId);
    await screenshot(page, 'settings');

    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Account' }).click();
    const form = page.getByRole('form', { name: 'Change password' });
    await form.getByLabel('Current password').fill('not my password at all');
    await form.getByLabel('New password', { exact: true }).fill('a brand new passphrase');
    await form.getByLabel('Confirm new password').fill('a brand new passphrase!');
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('The two passwords differ.').waitFor();
    await form.getByLabel('Confirm new password').fill('a brand new passphrase');
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('is not the current password').waitFor();
    await form.getByLabel('Current password').fill(password);
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('Password changed. Your other sessions are signed out.').waitFor();
    await screenshot(page, 'settings-account');

    // This tab stays signed in (a reload restores the renewed session), and the new password is the one.
    await page.reload();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await page.getByRole('button', { name: 'Account' }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
    await signIn(page, email, 'a brand new passphrase');

    // Forgotten: a link by e-mail, a new password, signed in with it.
    await page.getByRole('button', { name: 'Account' }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    // The reset form first: until its page has loaded, 'Email' is still the sign-in form's field.
    await page.getByRole('button', { name: 'Send reset link' }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByText('Check your e-mail').waitFor();
    const resetLink = linkIn(await mailTo(email), `${e2e.base}/reset-password?token=`);
    await page.goto(resetLink);
    await page.getByLabel('New password', { exact: true }).fill('remembered at last 42');
    await page.getByLabel('Confirm new password').fill('remembered at last 42');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('Your new password is set').waitFor();
    await page.getByRole('link', { name: 'Sign in' }).click();
    await signIn(page, email, 'remembered at last 42');
    // The link worked once.
    await page.goto(resetLink);
    await page.getByLabel('New password', { exact: true }).fill('another one entirely 7');
    await page.getByLabel('Confirm new password').fill('another one entirely 7');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('This link does not work any more.').waitFor();
  });
});
