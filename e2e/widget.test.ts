import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, browserAvailable, screenshot, signUp, startE2E, type E2E } from './harness.ts';

/**
 * The web chat widget on a customer's site: a page served from another loopback origin (an allowed
 * origin of the inbox) embeds the inbox's snippet; a visitor chats in Chromium while the team reads
 * and answers in the panel.
 */
let e2e: E2E;
let site: Server;
let siteOrigin = '';
let snippet = '';

beforeAll(async () => {
  if (!browserAvailable) return;
  e2e = await startE2E();
  // The customer's site: one page with a heading, some styles of its own, and the snippet.
  site = createServer((req, res) => {
    if (req.url !== '/') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Nordic Bikes</title>
      <style>body { font-family: Georgia, serif; margin: 40px; background: #fdf6e3; } button { background: red !important; font-size: 40px !important; }</style>
      </head><body><h1>Nordic Bikes</h1><p>Hand-built bicycles, shipped across Europe.</p>${snippet}</body></html>`);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteOrigin = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
  await e2e?.close();
});

interface Conversation {
  id: string;
  channel: string;
  contact: { address: string };
}

describe.runIf(browserAvailable)('the web chat widget', () => {
  it("a visitor on the customer's site chats, the team sees it in the panel and the reply appears live in the widget", async () => {
    const panel = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, panel);
    const inbox = await apiCall<{ id: string; widgetSnippet: string }>(e2e, accessToken, 'POST', `/orgs/${orgId}/inboxes`, {
      name: 'Website chat',
      channel: 'web',
      config: { allowedOrigins: [siteOrigin] },
    });
    expect(inbox.widgetSnippet).toBe(`<script src="${e2e.base}/api/v1/widget/${inbox.id}/widget.js" async></script>`);
    snippet = inbox.widgetSnippet;

    await panel.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Conversations' }).click();
    await panel.getByText('No open conversations').waitFor();

    // The visitor opens the chat on the site and writes.
    const visitor = await e2e.page();
    await visitor.goto(`${siteOrigin}/`);
    await visitor.getByRole('heading', { name: 'Nordic Bikes' }).waitFor();
    await visitor.getByRole('button', { name: 'Open chat' }).click();
    const log = visitor.getByRole('log', { name: 'Messages' });
    await log.waitFor();
    await visitor.getByRole('textbox', { name: 'Message' }).fill('Hi! Do you ship to Norway?');
    await visitor.getByRole('button', { name: 'Send' }).click();
    await log.getByText('Hi! Do you ship to Norway?').waitFor();
    expect(await visitor.getByRole('textbox', { name: 'Message' }).inputValue()).toBe('');
    // The site's own CSS does not reach the widget's buttons (Shadow DOM).
    expect(await visitor.getByRole('button', { name: 'Send' }).evaluate((el) => getComputedStyle(el).fontSize)).toBe('14px');

    // The team sees it arrive in the panel, live.
    const list = panel.getByRole('list', { name: 'Conversations' });
    await list.getByRole('button', { name: /visitor:/ }).click();
    await panel.getByRole('log', { name: 'Messages' }).getByText('Hi! Do you ship to Norway?').waitFor();
    const conversations = await apiCall<{ items: Conversation[] }>(e2e, accessToken, 'GET', `/orgs/${orgId}/conversations?inboxId=${inbox.id}`);
    expect(conversations.items).toHaveLength(1);
    const conversation = conversations.items[0]!;
    expect(conversation.channel).toBe('web');

    // A reply through the API shows in the widget without a reload, and a private note never does.
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/conversations/${conversation.id}/messages`, {
      text: 'Internal: check the Oslo carrier',
      private: true,
    });
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/conversations/${conversation.id}/messages`, { text: 'Yes! Norway in 3–5 days, free over €500.' });
    await log.getByText('Yes! Norway in 3–5 days, free over €500.').waitFor();
    expect(await log.getByText('Internal: check the Oslo carrier').count()).toBe(0);
    await screenshot(visitor, 'widget');

    // A reload resumes the same conversation (the visitor's session token is kept by the site's page).
    await visitor.reload();
    await visitor.getByRole('button', { name: 'Open chat' }).click();
    await log.getByText('Yes! Norway in 3–5 days, free over €500.').waitFor();
    await log.getByText('Hi! Do you ship to Norway?').waitFor();
    await visitor.getByRole('textbox', { name: 'Message' }).fill('Great, thanks!');
    await visitor.getByRole('button', { name: 'Send' }).click();
    await panel.getByRole('log', { name: 'Messages' }).getByText('Great, thanks!').waitFor();
    const after = await apiCall<{ items: Conversation[] }>(e2e, accessToken, 'GET', `/orgs/${orgId}/conversations?inboxId=${inbox.id}`);
    expect(after.items.map((c) => c.id)).toEqual([conversation.id]);

    // A message the service refuses (the team has deleted the inbox) says so and stays in the box.
    await apiCall(e2e, accessToken, 'DELETE', `/orgs/${orgId}/inboxes/${inbox.id}`);
    await visitor.getByRole('textbox', { name: 'Message' }).fill('Are you still there?');
    await visitor.getByRole('button', { name: 'Send' }).click();
    await visitor.getByRole('alert').filter({ hasText: /\S/ }).waitFor();
    expect(await visitor.getByRole('textbox', { name: 'Message' }).inputValue()).toBe('Are you still there?');
  });
});
