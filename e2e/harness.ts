/**
 * End-to-end tests: the real service (`node src/main.ts` on a fresh embedded store, with the built
 * panel) and Debian's Chromium driven by playwright-core. Each test file starts its own server and
 * browser; each test gets a fresh browser context (no cookies, no storage).
 */
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { freePort, startServer } from '../test/processes.ts';
import { embeddedDataDir } from '../test/embedded-template.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SCREENSHOTS = join(ROOT, 'docs', 'screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Chromium is there (CI installs it: .ci/run); without it, outside CI, the end-to-end tests are skipped. */
export const browserAvailable = existsSync(CHROMIUM);
if (!browserAvailable && process.env.CI) throw new Error(`Chromium not found at ${CHROMIUM}: the end-to-end tests need it (apt-get install chromium)`);
if (!existsSync(join(ROOT, 'panel', 'dist', 'index.html'))) throw new Error('The panel is not built: run npm run build:panel (npm install does it)');

export interface E2E {
  base: string;
  browser: Browser;
  /** A new context and page at 1400×900. */
  page(): Promise<Page>;
  /** Stops browser and server; fails if any page threw a script error or hit the CSP. */
  close(): Promise<void>;
}

export async function startE2E(env: Record<string, string> = {}): Promise<E2E> {
  const dataDir = embeddedDataDir('e2e-');
  const port = await freePort();
  const children = new Set<ChildProcess>();
  await startServer(
    port,
    { DATA_DIR: dataDir, APP_SECRET: 'e2e-secret-that-is-long-enough-000', PUBLIC_URL: `http://127.0.0.1:${port}`, ...env },
    children,
    60_000,
  );
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const contexts: BrowserContext[] = [];
  // What no test should ever see: a script error thrown in a page, or something the CSP blocked.
  const problems: string[] = [];
  return {
    base: `http://127.0.0.1:${port}`,
    browser,
    async page() {
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, baseURL: `http://127.0.0.1:${port}` });
      contexts.push(context);
      const page = await context.newPage();
      page.on('pageerror', (error) => problems.push(`page error on ${page.url()}: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) problems.push(`CSP violation on ${page.url()}: ${message.text()}`);
      });
      return page;
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
      for (const child of children) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
      if (problems.length) throw new Error(`the pages had problems:\n${problems.join('\n')}`);
    },
  };
}

let counter = 0;

/** A new account and organization through the API, then signed in through the panel's form. */
export async function signUp(
  e2e: E2E,
  page: Page,
  input: { organizationName?: string } = {},
): Promise<{ email: string; password: string; orgId: string; accessToken: string }> {
  const email = `user${Date.now()}-${counter++}@example.com`;
  const password = 'correct horse battery staple';
  const res = await fetch(`${e2e.base}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, name: 'Dana Marketer', organizationName: input.organizationName ?? 'Acme Marketing' }),
  });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { organization: { id: string }; tokens: { accessToken: string } };
  await signIn(page, email, password);
  return { email, password, orgId: body.organization.id, accessToken: body.tokens.accessToken };
}

/** Signs in through the form (CONTRACT §11's accessible names) and waits for the main navigation. */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** A screenshot of the page at 1400×900 into docs/screenshots (README: "Screenshots"). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/** Calls the API as the signed-in user of `signUp` (for arranging data a test is not about). */
export async function apiCall<T = unknown>(e2e: E2E, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${e2e.base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (res.status === 204 ? undefined : await res.json()) as T;
}
