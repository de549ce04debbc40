import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { apiCall, browserAvailable, screenshot, signUp, startE2E, type E2E } from './harness.ts';
import { startSocialStandIn, type StandIn } from '../test/social-stand-in.ts';

let e2e: E2E;
let social: StandIn;
beforeAll(async () => {
  if (!browserAvailable) return;
  // LinkedIn and X are the loopback stand-in: a token starting "ok" publishes, "revoked" gets a 401.
  social = await startSocialStandIn();
  e2e = await startE2E({ LINKEDIN_API_URL: social.url, X_API_URL: social.url, PUBLISH_RETRY_DELAYS_S: '0.05,0.05,0.05', PUBLISHER_POLL_MS: '50' });
});
afterAll(async () => {
  await e2e?.close();
  await social?.close();
});

/** A real PNG (a colour gradient), so the preview shows an image the browser decoded. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = y * (width * 3 + 1) + 1 + x * 3;
      rows.set([79 + Math.round((x / width) * 120), 70 + Math.round((y / height) * 90), 229 - Math.round((x / width) * 80)], at);
    }
  }
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A calendar date (YYYY-MM-DD) `days` from now, in the browser's zone, and the region name the calendar gives that day. */
async function dayInBrowser(page: Page, days: number): Promise<{ date: string; name: string; input: string }> {
  return page.evaluate((offset) => {
    const d = new Date();
    d.setDate(d.getDate() + offset);
    const pad = (n: number) => String(n).padStart(2, '0');
    const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
    const name = new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' }).format(
      new Date(`${date}T00:00:00Z`),
    );
    return { date, name, input: `${date}T10:30` };
  }, days);
}

interface Post {
  id: string;
  status: string;
  body: string;
  scheduledAt: string | null;
  mediaIds: string[];
  integrationId: string | null;
  error: { message: string } | null;
}
interface Integration {
  id: string;
  name: string;
  status: string;
}

describe.runIf(browserAvailable)('content in the panel', () => {
  it('connects an account, writes a draft counted as X counts it, adds an image, approves with an edit and schedules it, and finds it on the calendar', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);

    // An account to publish through, connected on the integrations page.
    await page.goto(`/orgs/${orgId}/settings/integrations`);
    await page.getByText('No accounts connected').waitFor();
    await page.getByRole('button', { name: 'Connect an account' }).click();
    const connect = page.getByRole('dialog', { name: 'Connect an account' });
    await connect.getByLabel('Provider').selectOption('x');
    await connect.getByLabel('Name').fill('Acme on X');
    await connect.getByLabel('Access token').fill('ok-x-token');
    await connect.getByRole('button', { name: 'Connect' }).click();
    const accounts = page.getByRole('table', { name: 'Integrations' });
    await accounts.getByRole('cell', { name: 'Acme on X', exact: true }).waitFor();
    const [stored] = (await apiCall<{ items: Integration[] }>(e2e, accessToken, 'GET', `/orgs/${orgId}/integrations`)).items;
    expect(stored).toMatchObject({ name: 'Acme on X', provider: 'x', status: 'connected' });

    // Something already published today, for the calendar to show beside the new post.
    const earlier = await apiCall<Post>(e2e, accessToken, 'POST', `/orgs/${orgId}/content`, {
      platform: 'X',
      body: 'Our spring catalogue is out today.',
      integrationId: stored!.id,
    });
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/content/${earlier.id}/approve`, {});
    await expect.poll(async () => (await apiCall<Post>(e2e, accessToken, 'GET', `/orgs/${orgId}/content/${earlier.id}`)).status).toBe('PUBLISHED');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Content' }).click();
    await page.getByRole('table', { name: 'Posts' }).waitFor();
    await page.getByRole('button', { name: 'New post' }).click();
    const editor = page.getByRole('dialog', { name: 'New post' });
    await editor.getByLabel('Platform').selectOption('X');
    const counter = editor.getByRole('status', { name: 'Length as X counts it' }).first();
    const text = 'Spring launch week: everything you need to know https://example.com/blog/2026/spring-launch-week-everything-you-need-to-know';
    await editor.getByLabel('Text').fill(text);
    // 48 characters, then a link of 74 that X counts as 23.
    await expect.poll(() => counter.textContent()).toBe('71 / 280');
    await editor.getByLabel('Hashtags').fill('launch');
    await expect.poll(() => counter.textContent()).toBe('80 / 280');
    // Over the limit, it says so and refuses to save.
    await editor.getByLabel('Text').fill(`${text} ${'x'.repeat(210)}`);
    await expect.poll(() => counter.textContent()).toBe('291 / 280');
    await editor.getByText('11 over the limit').first().waitFor();
    expect(await editor.getByRole('button', { name: 'Save draft' }).isDisabled()).toBe(true);
    await editor.getByLabel('Text').fill(text);
    await expect.poll(() => counter.textContent()).toBe('80 / 280');

    // An image, uploaded and shown in the editor and in the preview.
    const file = join(mkdtempSync(join(tmpdir(), 'media-')), 'spring.png');
    writeFileSync(file, png(480, 270));
    await editor.getByLabel('Add image').setInputFiles(file);
    const thumbnail = editor.getByRole('img', { name: 'Image 1' });
    await thumbnail.waitFor();
    await expect.poll(() => thumbnail.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(480);
    await expect
      .poll(() =>
        editor
          .getByRole('article', { name: 'X preview' })
          .locator('img')
          .evaluate((img: HTMLImageElement) => img.naturalWidth),
      )
      .toBe(480);

    const tomorrow = await dayInBrowser(page, 1);
    await editor.getByLabel('Account').selectOption({ label: 'Acme on X' });
    await editor.getByLabel('Publish at').fill(tomorrow.input);
    await editor.getByText(/Your time zone: /).waitFor();
    await editor.getByRole('button', { name: 'Save draft' }).click();
    const draft = page.getByRole('dialog', { name: 'X post' });
    await draft.getByText(/^Draft for /).waitFor();
    const postId = new URL(page.url()).searchParams.get('post')!;
    expect(postId).toMatch(/^post_/);
    await screenshot(page, 'content-editor');

    // Approve with an edited text: the approval carries it, and the future time schedules the post.
    await draft.getByLabel('Text').fill(`${text} See you there!`);
    await draft.getByRole('button', { name: 'Approve and schedule' }).click();
    await draft.getByText(/^Approved and scheduled for /).waitFor();
    await draft.getByText('SCHEDULED', { exact: true }).waitFor();
    const scheduled = await apiCall<Post>(e2e, accessToken, 'GET', `/orgs/${orgId}/content/${postId}`);
    expect(scheduled).toMatchObject({ status: 'SCHEDULED', body: `${text} See you there!`, integrationId: stored!.id });
    expect(scheduled.mediaIds).toHaveLength(1);
    expect(new Date(scheduled.scheduledAt!).getTime()).toBe(await page.evaluate((v) => new Date(v).getTime(), tomorrow.input));
    await page.keyboard.press('Escape');
    await expect.poll(() => new URL(page.url()).searchParams.has('post')).toBe(false);

    // The week of that day, then its month: the post is on its day, with the published one on today.
    await page.goto(`/orgs/${orgId}/content?date=${tomorrow.date}`);
    const entry = page.getByRole('region', { name: tomorrow.name }).getByRole('button', { name: /10:30( AM)? X scheduled: Spring launch week/ });
    await entry.waitFor();
    const today = await dayInBrowser(page, 0);
    await page
      .getByRole('region', { name: today.name })
      .getByRole('button', { name: /X published: Our spring catalogue/ })
      .waitFor();
    await screenshot(page, 'content-calendar');
    await page.getByRole('button', { name: 'Month', exact: true }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('view')).toBe('month');
    await page
      .getByRole('region', { name: tomorrow.name })
      .getByRole('button', { name: /10:30( AM)? X scheduled: Spring launch week/ })
      .waitFor();
    expect(await page.getByRole('button', { name: 'Month', exact: true }).getAttribute('aria-pressed')).toBe('true');
    await screenshot(page, 'content-calendar-month');
    // The view and date survive a reload; an entry opens its post.
    await page.reload();
    await page
      .getByRole('region', { name: tomorrow.name })
      .getByRole('button', { name: /Spring launch week/ })
      .click();
    await page
      .getByRole('dialog', { name: 'X post' })
      .getByText(/^Scheduled for /)
      .waitFor();
    expect(new URL(page.url()).searchParams.get('post')).toBe(postId);
  });

  it('shows a failed publish and the account error, reconnects the account, publishes again and disconnects', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    const broken = await apiCall<Integration>(e2e, accessToken, 'POST', `/orgs/${orgId}/integrations`, {
      provider: 'linkedin',
      name: 'Acme page',
      credentials: { accessToken: 'revoked-token', author: 'urn:li:organization:42' },
    });
    const post = await apiCall<Post>(e2e, accessToken, 'POST', `/orgs/${orgId}/content`, {
      platform: 'LINKEDIN',
      body: 'We are hiring marketers.',
      integrationId: broken.id,
    });
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/content/${post.id}/approve`, {});
    await expect.poll(async () => (await apiCall<Post>(e2e, accessToken, 'GET', `/orgs/${orgId}/content/${post.id}`)).status).toBe('FAILED');

    // The failure, in the list and in the post.
    await page.goto(`/orgs/${orgId}/content?status=FAILED`);
    const list = page.getByRole('table', { name: 'Posts' });
    await list.getByRole('button', { name: 'We are hiring marketers.' }).click();
    const editor = page.getByRole('dialog', { name: 'LinkedIn post' });
    await editor.getByText(/^Publishing failed: /).waitFor();
    await editor.getByText(/The account “Acme page” needs reconnecting/).waitFor();

    // The account's error on the integrations page; a reconnect moves the waiting post to it.
    await editor.getByRole('link', { name: 'Go to integrations' }).click();
    const accounts = page.getByRole('table', { name: 'Integrations' });
    const row = accounts.getByRole('row', { name: /Acme page/ });
    await row.getByText('error', { exact: true }).waitFor();
    await row
      .getByText(/REAUTH_REQUIRED|401|token/i)
      .first()
      .waitFor();
    await screenshot(page, 'integrations');
    await row.getByRole('button', { name: 'Reconnect Acme page' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reconnect Acme page' });
    await dialog.getByLabel('Access token').fill('ok-linkedin-token');
    await dialog.getByLabel('Author').fill('urn:li:organization:42');
    await dialog.getByRole('button', { name: 'Reconnect' }).click();
    await dialog.getByText('Reconnected. 1 waiting post will publish through it.').waitFor();
    await dialog.getByRole('button', { name: 'Done' }).click();
    await row.getByText('connected', { exact: true }).waitFor();
    const now = (await apiCall<{ items: Integration[] }>(e2e, accessToken, 'GET', `/orgs/${orgId}/integrations`)).items;
    expect(now).toHaveLength(1);
    expect(now[0]).toMatchObject({ name: 'Acme page', status: 'connected' });
    expect((await apiCall<Post>(e2e, accessToken, 'GET', `/orgs/${orgId}/content/${post.id}`)).integrationId).toBe(now[0]!.id);

    // Approved again from the editor, it is published.
    await page.goto(`/orgs/${orgId}/content?post=${post.id}`);
    const again = page.getByRole('dialog', { name: 'LinkedIn post' });
    await again.getByRole('button', { name: 'Approve and publish' }).click();
    await again.getByRole('link', { name: 'View on LinkedIn' }).waitFor();
    expect(social.postCalls('ok-linkedin-token')).toHaveLength(1);

    // Disconnect.
    await page.goto(`/orgs/${orgId}/settings/integrations`);
    await page.getByRole('button', { name: 'Disconnect Acme page' }).click();
    await page.getByRole('dialog', { name: 'Disconnect Acme page?' }).getByRole('button', { name: 'Disconnect' }).click();
    await page.getByText('No accounts connected').waitFor();
    expect((await apiCall<{ items: Integration[] }>(e2e, accessToken, 'GET', `/orgs/${orgId}/integrations`)).items).toHaveLength(0);
  });

  it('generates drafts with AI (the offline model) and opens one', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    await page.goto(`/orgs/${orgId}/content`);
    await page.getByText('No posts yet').waitFor();
    await page.getByRole('button', { name: 'Generate with AI' }).click();
    const dialog = page.getByRole('dialog', { name: 'Generate drafts with AI' });
    await dialog.getByLabel('Topic').fill('Our free webinar on marketing automation');
    await dialog.getByLabel('Drafts per platform').fill('2');
    await dialog.getByRole('button', { name: 'Generate drafts' }).click();
    await dialog.getByText(/^4 drafts written/).waitFor();
    const drafts = await apiCall<{ items: Post[]; total: number }>(e2e, accessToken, 'GET', `/orgs/${orgId}/content?status=DRAFT`);
    expect(drafts.total).toBe(4);
    await dialog.getByRole('button', { name: 'Open draft' }).first().click();
    const editor = page.getByRole('dialog', { name: /(LinkedIn|X) post/ });
    await editor.getByText('DRAFT', { exact: true }).waitFor();
    expect(drafts.items.map((p) => p.body)).toContain(await editor.getByLabel('Text').inputValue());
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('table', { name: 'Posts' }).locator('tbody tr').count()).toBe(4);
  });
});
