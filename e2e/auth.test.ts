import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, startE2E, type E2E } from './harness.ts';

let e2e: E2E;
beforeAll(async () => {
  if (browserAvailable) e2e = await startE2E();
});
afterAll(async () => e2e?.close());

describe.runIf(browserAvailable)('the API reference', () => {
  it('renders at /docs under its own Content-Security-Policy (its inline configuration allowed by hash, nothing else)', async () => {
    const page = await e2e.page();
    const answer = await page.goto('/docs');
    expect(answer!.headers()['content-security-policy']).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    // The reference fetched the OpenAPI document and shows it, its operations in the sidebar; a CSP
    // violation or a script error fails the test in close() (e2e/harness.ts).
    await page.getByRole('heading', { name: 'Automation Service API', exact: true }).waitFor({ timeout: 30_000 });
    await page.getByText('Log in with email and password').first().waitFor();
  });
});

describe.runIf(browserAvailable)('signing in and out', () => {
  it('registers through the form, survives a reload without any credential readable by scripts, signs out for good', async () => {
    const page = await e2e.page();
    await page.goto('/');
    await page.waitForURL(/\/login/);
    await page.getByRole('link', { name: 'Create one' }).click();
    await page.getByLabel('Your name').fill('Riley Seller');
    await page.getByLabel('Email').fill('riley@shop.example');
    await page.getByLabel('Password').fill('a long enough passphrase');
    await page.getByLabel('Organization name').fill('Riley Shop');
    await page.getByRole('button', { name: 'Create account' }).click();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.waitFor();
    for (const name of ['Leads', 'Workflows', 'Runs', 'Approvals', 'Agents', 'Reports', 'Content', 'Webhooks', 'API keys', 'Members', 'Usage', 'Settings']) {
      expect(await nav.getByRole('link', { name, exact: true }).count(), name).toBe(1);
    }
    await page.getByRole('button', { name: 'Organization: Riley Shop' }).waitFor();

    // The refresh token is an HttpOnly cookie: nothing a page script can read holds a token.
    const readable = await page.evaluate(() => ({ cookie: document.cookie, local: JSON.stringify(localStorage), session: JSON.stringify(sessionStorage) }));
    expect(readable.cookie).toBe('');
    expect(readable.local + readable.session).not.toMatch(/eyJ|token/i);
    const cookies = await page.context().cookies();
    const refresh = cookies.find((c) => c.name === 'refresh_token');
    expect(refresh).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/v1/auth' });

    await page.reload();
    await nav.waitFor();

    await page.getByRole('button', { name: 'Account' }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.waitForURL(/\/login/);
    expect((await page.context().cookies()).find((c) => c.name === 'refresh_token')).toBeUndefined();
    await page.goto('/');
    await page.waitForURL(/\/login/);
  });

  it('sends a deep link through sign-in and back, and refuses wrong credentials with a message', async () => {
    const res = await fetch(`${e2e.base}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'deep@link.example', password: 'another long passphrase', organizationName: 'Deep' }),
    });
    const { organization } = (await res.json()) as { organization: { id: string } };
    const page = await e2e.page();
    await page.goto(`/orgs/${organization.id}/leads?q=acme`);
    await page.waitForURL(/\/login\?redirect=/);
    await page.getByLabel('Email').fill('deep@link.example');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).toMatch(/invalid|incorrect|wrong/i);
    await page.getByLabel('Password').fill('another long passphrase');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === `/orgs/${organization.id}/leads`);
    await expect.poll(() => page.getByLabel('Search').inputValue()).toBe('acme');
  });
});
