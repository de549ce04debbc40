import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { OAuthStandIn } from '../test/oauth-provider.ts';
import { GoogleStandIn } from '../test/google-stand-in.ts';
import { startSocialStandIn, type StandIn } from '../test/social-stand-in.ts';
import { apiCall, browserAvailable, screenshot, signUp, startE2E, type E2E } from './harness.ts';

// The providers' authorization servers, Google's analytics APIs and LinkedIn/X's APIs, all on
// loopback: the browser really goes to the authorization URL and back through the callback.
let e2e: E2E;
let oauth: OAuthStandIn;
let google: GoogleStandIn;
let social: StandIn;

/** A day `n` days before today (UTC), as the sync's "yesterday" counts. */
const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

// Five days of figures, yesterday back; the days before them have none (stored as zeros).
const GA4 = [
  { sessions: 826, totalUsers: 650, keyEvents: 11 },
  { sessions: 760, totalUsers: 550, keyEvents: 7 },
  { sessions: 1005, totalUsers: 800, keyEvents: 9 },
  { sessions: 910, totalUsers: 700, keyEvents: 15 },
  { sessions: 820, totalUsers: 600, keyEvents: 12 },
];
const GSC = [
  { clicks: 50, impressions: 2200, position: 8.1 },
  { clicks: 38, impressions: 1800, position: 8.8 },
  { clicks: 61, impressions: 3000, position: 7.5 },
  { clicks: 55, impressions: 2500, position: 7.9 },
  { clicks: 40, impressions: 2000, position: 8.2 },
];

beforeAll(async () => {
  if (!browserAvailable) return;
  oauth = await new OAuthStandIn().start();
  google = await new GoogleStandIn().start();
  google.isValid = (token) => oauth.isValid(token);
  google.accounts = [
    {
      account: 'accounts/77',
      displayName: 'Acme',
      properties: [
        { property: 'properties/1001', displayName: 'Acme web' },
        { property: 'properties/1002', displayName: 'Acme shop' },
      ],
    },
  ];
  google.sites = [
    { siteUrl: 'https://www.acme.example/', permissionLevel: 'siteOwner' },
    { siteUrl: 'sc-domain:blog.acme.example', permissionLevel: 'siteFullUser' },
  ];
  google.setGa4('properties/1001', Object.fromEntries(GA4.map((n, i) => [daysAgo(i + 1), n])));
  google.setGsc('https://www.acme.example/', Object.fromEntries(GSC.map((n, i) => [daysAgo(i + 1), { ...n, ctr: n.clicks / n.impressions }])));
  social = await startSocialStandIn({ oauth });
  e2e = await startE2E({ ...oauth.env(), ...google.env(), LINKEDIN_API_URL: social.url, X_API_URL: social.url });
});
afterAll(async () => {
  await e2e?.close();
  await oauth?.stop();
  await google?.stop();
  await social?.close();
});

interface Integration {
  id: string;
  name: string;
  provider: string;
  status: string;
  authType: string;
  config: Record<string, string>;
}
interface SyncRun {
  id: string;
  status: string;
  from: string;
  to: string;
  rows: number;
}
interface Rule {
  id: string;
  name: string;
  state: string;
  lastValue: number | null;
}

const searchParams = (page: Page) => new URL(page.url()).searchParams;

describe.runIf(browserAvailable)('integrations and analytics in the panel', () => {
  it('connects Google through its consent, picks a GA4 property and a Search Console site, syncs, charts the figures, and alerts on a rule', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    const call = <T = unknown>(method: string, path: string, body?: unknown) => apiCall<T>(e2e, accessToken, method, `/orgs/${orgId}${path}`, body);

    // Analytics before anything is connected: how to connect Google.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Analytics' }).click();
    await page.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor();
    await page.getByText('No Google account connected').waitFor();
    await page.getByRole('main').getByRole('link', { name: 'Settings → Integrations' }).click();

    // Connect Google: the browser leaves for the authorization server and comes back here.
    await page.getByRole('heading', { name: 'Integrations' }).waitFor();
    await page.getByText('No accounts connected').waitFor();
    await page.getByRole('button', { name: 'Connect Google' }).click();
    const notice = page.getByRole('status').filter({ hasText: /^Connected / });
    await notice.getByText('Connected google-user-1@example.com (Google). Choose its GA4 property and Search Console site below, then sync.').waitFor();
    const [authorize] = oauth.authorizeRequests.filter((r) => r.provider === 'google');
    expect(authorize!.query).toMatchObject({ response_type: 'code', code_challenge_method: 'S256', redirect_uri: `${e2e.base}/api/v1/oauth/callback` });
    expect(new URL(page.url()).pathname).toBe(`/orgs/${orgId}/settings/integrations`);
    // The parameters of the way back are gone from the URL (a reload does not announce it again).
    expect(searchParams(page).has('connected')).toBe(false);
    const accounts = page.getByRole('table', { name: 'Integrations' });
    const googleRow = accounts.getByRole('row', { name: /google-user-1@example\.com/ });
    await googleRow.getByText('connected', { exact: true }).waitFor();
    await googleRow.getByText('OAuth, renews itself').waitFor();
    const [stored] = (await call<{ items: Integration[] }>('GET', '/integrations?provider=google')).items;
    expect(stored).toMatchObject({ provider: 'google', status: 'connected', authType: 'oauth', config: {} });

    // The picker offers what the account can read: GA4 properties and Search Console sites.
    const setup = page.getByRole('region', { name: 'google-user-1@example.com: analytics sources' });
    const property = setup.getByLabel('GA4 property');
    await expect
      .poll(() => property.locator('option').allInnerTexts())
      .toEqual(['None', 'Acme — Acme shop (properties/1002)', 'Acme — Acme web (properties/1001)']);
    expect(await setup.getByLabel('Search Console site').locator('option').allInnerTexts()).toEqual([
      'None',
      'https://www.acme.example/',
      'sc-domain:blog.acme.example',
    ]);
    expect(await setup.getByRole('button', { name: /^Sync now/ }).isDisabled()).toBe(true);
    await property.selectOption({ label: 'Acme — Acme web (properties/1001)' });
    await setup.getByLabel('Search Console site').selectOption('https://www.acme.example/');
    await setup.getByRole('button', { name: /^Save sources/ }).click();
    await setup.getByText('Saved. Sync now to fetch the figures.').waitFor();
    await setup.getByText('GA4 Acme — Acme web · Search Console https://www.acme.example/').waitFor();
    expect((await call<Integration>('GET', `/integrations/${stored!.id}`)).config).toEqual({
      propertyId: 'properties/1001',
      siteUrl: 'https://www.acme.example/',
    });

    // The first sync fetches a history (90 days by default); its run shows as it finishes.
    expect(await setup.getByLabel(/^Days to fetch/).inputValue()).toBe('90');
    await setup.getByRole('button', { name: /^Sync now/ }).click();
    const runs = setup.getByRole('table', { name: /^Sync runs of / });
    // Past the daily sync hour (UTC) the scheduler may queue the same history as this integration's
    // backfill: then "Sync now" is that run, or (when it already finished) a second one.
    await runs.getByText('succeeded', { exact: true }).first().waitFor();
    const syncRuns = async () => (await call<{ items: SyncRun[] }>('GET', `/integrations/${stored!.id}/sync-runs`)).items;
    await expect.poll(async () => (await syncRuns()).every((r) => r.status === 'succeeded')).toBe(true);
    const [run] = await syncRuns();
    expect(run).toMatchObject({ status: 'succeeded', from: daysAgo(90), to: daysAgo(1) });
    // One row per day and source, the days without data as zeros.
    expect(run!.rows).toBe(180);
    await runs.getByRole('cell', { name: '180', exact: true }).first().waitFor();
    await page.getByRole('button', { name: 'Dismiss' }).click();
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'integrations-google');

    // Analytics: the figures the stand-in served, summed over the last 28 days.
    await setup.getByRole('link', { name: 'View analytics' }).click();
    await page.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor();
    expect(searchParams(page).get('integration')).toBe(stored!.id);
    const ga4Totals = page.locator('dl[aria-label="Google Analytics 4 totals"]');
    await expect.poll(() => ga4Totals.getByLabel('Sessions', { exact: true }).innerText()).toBe('4,321');
    expect(await ga4Totals.getByLabel('Users', { exact: true }).innerText()).toBe('3,300');
    expect(await ga4Totals.getByLabel('Conversions', { exact: true }).innerText()).toBe('54');
    const gscTotals = page.locator('dl[aria-label="Search Console totals"]');
    expect(await gscTotals.getByLabel('Clicks', { exact: true }).innerText()).toBe('244');
    expect(await gscTotals.getByLabel('Impressions', { exact: true }).innerText()).toBe('11,500');
    // Clicks over impressions, and the position weighted by impressions, as Search Console reports them.
    expect(await gscTotals.getByLabel('CTR', { exact: true }).innerText()).toBe('2.12 %');
    expect(await gscTotals.getByLabel('Average position', { exact: true }).innerText()).toBe('8.0');
    // The charts are drawn, a point per synced day of the range: the days after the sync's last
    // (yesterday, UTC) up to the browser's today are not synced yet, so they are gaps, not zeros.
    const sessionsChart = page.getByRole('figure', { name: 'Sessions and users' });
    await sessionsChart.getByRole('img', { name: 'Sessions and users per day' }).waitFor();
    const points = () => sessionsChart.locator('.recharts-line-dots').first().locator('.recharts-line-dot').count();
    const browserToday = await page.evaluate(() => new Date().toLocaleDateString('en-CA'));
    const unsynced = Math.max(0, Math.round((Date.parse(browserToday) - Date.parse(daysAgo(1))) / 86_400_000));
    await expect.poll(points).toBe(28 - unsynced);
    await page.getByRole('figure', { name: 'Average position' }).getByRole('img').waitFor();
    await page.getByText(/Synced (now|\d+ seconds? ago)/).waitFor();

    // The range lives in the URL: 7 days holds all five days of data too.
    await page.getByRole('group', { name: 'Range' }).getByRole('button', { name: '7 days' }).click();
    await expect.poll(() => searchParams(page).get('range')).toBe('7d');
    await expect.poll(points).toBe(7 - unsynced);
    expect(await ga4Totals.getByLabel('Sessions', { exact: true }).innerText()).toBe('4,321');

    // A rule: sessions below 5,000 over 7 days. It waits for the next sync to be evaluated.
    await page.getByRole('button', { name: 'New rule' }).click();
    const dialog = page.getByRole('dialog', { name: 'New rule' });
    await dialog.getByLabel('Name').fill('Traffic below plan');
    expect(await dialog.getByLabel('Google account').inputValue()).toBe(stored!.id);
    await dialog.getByLabel('Metric').selectOption('ga4.sessions');
    await dialog.getByLabel('Condition').selectOption('pct_change');
    await dialog.getByLabel('Minimum baseline').waitFor();
    await dialog.getByLabel('Condition').selectOption('below');
    expect(await dialog.getByLabel('Minimum baseline').count()).toBe(0);
    // A threshold that is not a number is refused before anything is sent.
    await dialog.getByLabel('Threshold').fill('a lot');
    await dialog.getByRole('button', { name: 'Create rule' }).click();
    await dialog.getByText('A number, such as 100 or 2.5.').waitFor();
    await dialog.getByLabel('Threshold').fill('5000');
    await dialog.getByLabel('Window').selectOption('7d');
    await dialog.getByText('Fires on: Sessions below 5,000 over the last 7 days.').waitFor();
    await dialog.getByRole('button', { name: 'Create rule' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const rules = page.getByRole('table', { name: 'Alert rules' });
    const ruleRow = rules.getByRole('row', { name: /Traffic below plan/ });
    await ruleRow.getByText('ok', { exact: true }).waitFor();
    await ruleRow.getByText('Never').waitFor();

    // The next sync evaluates it: 4,321 sessions over the last 7 days is below 5,000, so it fires,
    // and the page shows it without a reload (the organization stream).
    await call('POST', `/integrations/${stored!.id}/sync`, {});
    await ruleRow.getByText('firing', { exact: true }).waitFor();
    expect(await ruleRow.getByRole('cell').nth(3).innerText()).toBe('4,321');
    expect(await ruleRow.getByRole('cell').nth(4).innerText()).not.toBe('Never');
    const [rule] = (await call<{ items: Rule[] }>('GET', '/analytics/rules')).items;
    expect(rule).toMatchObject({ name: 'Traffic below plan', state: 'firing', lastValue: 4321 });
    await page.getByRole('group', { name: 'Range' }).getByRole('button', { name: '28 days' }).click();
    await expect.poll(points).toBe(28 - unsynced);
    // No tooltip left over from the pointer in the pictures.
    await page.mouse.move(0, 0);
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'analytics');
    await page.getByRole('heading', { name: 'Alert rules' }).evaluate((h) => h.scrollIntoView({ block: 'start' }));
    await screenshot(page, 'analytics-rules');

    // Edit it into a change rule, then delete it.
    await ruleRow.getByRole('button', { name: 'Edit Traffic below plan' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Traffic below plan' });
    expect(await edit.getByLabel('Threshold').inputValue()).toBe('5000');
    await edit.getByLabel('Condition').selectOption('pct_change');
    await edit.getByLabel('Threshold').fill('30');
    await edit.getByLabel('Minimum baseline').fill('100');
    await edit.getByRole('button', { name: 'Save rule' }).click();
    await edit.waitFor({ state: 'hidden' });
    await ruleRow.getByText(/Sessions: a change of 30 % or more over the last 7 days/).waitFor();
    // Changing what it watches puts it back to ok.
    await ruleRow.getByText('ok', { exact: true }).waitFor();
    await ruleRow.getByRole('button', { name: 'Delete Traffic below plan' }).click();
    await page.getByRole('dialog', { name: 'Delete Traffic below plan?' }).getByRole('button', { name: 'Delete rule' }).click();
    await page.getByText('No alert rules yet').waitFor();
    expect((await call<{ items: Rule[] }>('GET', '/analytics/rules')).items).toHaveLength(0);

    // Reconnecting goes through Google again and keeps the integration's id.
    await page.goto(`/orgs/${orgId}/settings/integrations`);
    const before = oauth.authorizeRequests.length;
    await googleRow.getByRole('button', { name: 'Reconnect google-user-1@example.com' }).click();
    await page.getByRole('status').filter({ hasText: 'Connected google-user-1@example.com (Google).' }).waitFor();
    expect(oauth.authorizeRequests.length).toBe(before + 1);
    const after = (await call<{ items: Integration[] }>('GET', '/integrations')).items;
    expect(after.map((i) => i.id)).toEqual([stored!.id]);
    expect(after[0]!.config).toEqual({ propertyId: 'properties/1001', siteUrl: 'https://www.acme.example/' });
  });

  it('connects X through its consent and lists it; a declined consent says so and connects nothing', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    await page.goto(`/orgs/${orgId}/settings/integrations`);
    await page.getByText('No accounts connected').waitFor();

    // The user says no at LinkedIn: back on the page with the reason, nothing stored.
    oauth.deny = true;
    try {
      await page.getByRole('button', { name: 'Connect LinkedIn' }).click();
      await page
        .getByRole('alert')
        .getByText(/^Access was declined at the provider, so nothing was connected/)
        .waitFor();
    } finally {
      oauth.deny = false;
    }
    expect(searchParams(page).has('error')).toBe(false);
    await page.getByText('No accounts connected').waitFor();

    await page.getByRole('button', { name: 'Connect X' }).click();
    await page.getByRole('status').getByText('Connected @x_user_1 (X). Posts can now be published through it.').waitFor();
    const row = page.getByRole('table', { name: 'Integrations' }).getByRole('row', { name: /@x_user_1/ });
    // The status is shown as the list is asked again: the row comes a moment later.
    await expect
      .poll(() => row.getByRole('cell').allInnerTexts())
      .toEqual([
        '@x_user_1',
        expect.stringMatching(/\bX\s+OAuth, renews itself$/),
        'All projects',
        'connected',
        expect.any(String),
        expect.stringMatching(/Reconnect\s*Disconnect/),
      ]);
    const items = (await apiCall<{ items: Integration[] }>(e2e, accessToken, 'GET', `/orgs/${orgId}/integrations`)).items;
    expect(items).toEqual([expect.objectContaining({ provider: 'x', name: '@x_user_1', authType: 'oauth', status: 'connected' })]);
    // The X connection is not an analytics source: no picker for it.
    expect(await page.getByRole('region', { name: /analytics sources/ }).count()).toBe(0);

    // Analytics says how to connect Google while only X is connected.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Analytics' }).click();
    await page.getByText('No Google account connected').waitFor();
    await screenshot(page, 'analytics-empty');
  });
});
