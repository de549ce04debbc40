/**
 * What the panel benchmarks share: a server on the embedded store in a temporary data folder, an
 * owner registered through the API, and headless Chromium signed in as that owner.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { chromium, type Page } from 'playwright-core';
import { freePort, startServer } from '../test/processes.ts';

export const DIST = join(fileURLToPath(new URL('..', import.meta.url)), 'panel', 'dist');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface PanelSession {
  base: string;
  orgId: string;
  token: string;
  page: Page;
  /** A call to the API as the owner; throws on an error status. */
  api<T>(method: string, path: string, body?: unknown, type?: string): Promise<T>;
}

/** Runs `work` with a signed-in panel, then stops the browser and the server and removes the data. */
export async function withPanelSession(name: string, work: (session: PanelSession) => Promise<void>): Promise<void> {
  if (!existsSync(join(DIST, 'index.html'))) throw new Error('panel/dist is missing: run npm run build:panel');
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}`);
  const dataDir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const children = new Set<ChildProcess>();
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
  try {
    await startServer(
      port,
      { DATA_DIR: dataDir, APP_SECRET: `bench-${name}-secret-long-enough-0000`, PUBLIC_URL: base, RATE_LIMIT_MAX: '1000000' },
      children,
      60_000,
    );
    const email = `bench@${name}.example`;
    const password = `bench ${name} passphrase`;
    const registered = (await (
      await fetch(`${base}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password, organizationName: 'Bench' }),
      })
    ).json()) as { organization: { id: string }; tokens: { accessToken: string } };
    const token = registered.tokens.accessToken;
    const api = async <T>(method: string, path: string, body?: unknown, type = 'application/json'): Promise<T> => {
      const res = await fetch(`${base}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': type }) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (res.status === 204 ? undefined : await res.json()) as T;
    };
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${base}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await work({ base, orgId: registered.organization.id, token, page, api });
    await context.close();
  } finally {
    await browser.close();
    for (const child of children) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}
