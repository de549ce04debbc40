/**
 * The web panel's budgets (issue 13), printed, not asserted:
 *
 * - the initial JavaScript (index.html's script and the modules it preloads) gzipped, and the CSS;
 * - the first render of the leads page with 10,000 leads: from navigation to the table's rows on
 *   screen, signed in, in headless Chromium on this machine (median and worst of several loads);
 * - the runs page with 50 live runs changing (each waits a few seconds, then finishes): how long the
 *   page's main thread was blocked (long tasks, total blocking time) and how soon it can paint a
 *   frame while the runs change.
 *
 *   npm run bench -- panel
 *
 * Needs the built panel (npm install builds it) and Chromium (/usr/bin/chromium or CHROMIUM_PATH).
 * Environment: BENCH_LOADS (7 leads-page loads), BENCH_RUNS (50 live runs).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { chromium } from 'playwright-core';
import { freePort, startServer } from '../test/processes.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'panel', 'dist');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LOADS = Number(process.env.BENCH_LOADS ?? 7);
const RUNS = Number(process.env.BENCH_RUNS ?? 50);

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** What the browser loads before the first page renders: the entry script, its preloads and the CSS. */
function initialAssets(): { js: number; jsGzip: number; css: number; cssGzip: number; files: string[] } {
  const html = readFileSync(join(DIST, 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/<script[^>]+src="([^"]+)"/g), ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g)].map((m) => m[1]!);
  const styles = [...html.matchAll(/<link[^>]+rel="stylesheet"[^>]+href="([^"]+)"/g)].map((m) => m[1]!);
  const size = (paths: string[]) => paths.reduce((sum, p) => {
    const body = readFileSync(join(DIST, p));
    return { raw: sum.raw + body.length, gzip: sum.gzip + gzipSync(body, { level: 9 }).length };
  }, { raw: 0, gzip: 0 });
  const js = size(scripts);
  const css = size(styles);
  return { js: js.raw, jsGzip: js.gzip, css: css.raw, cssGzip: css.gzip, files: [...scripts, ...styles] };
}

async function api<T>(base: string, token: string, method: string, path: string, body?: unknown, type = 'application/json'): Promise<T> {
  const res = await fetch(`${base}/api/v1${path}`, {
    method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': type }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

export async function main(): Promise<void> {
  if (!existsSync(join(DIST, 'index.html'))) throw new Error('panel/dist is missing: run npm run build:panel');
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}`);

  const assets = initialAssets();
  console.log(`initial JavaScript: ${kb(assets.js)} (${kb(assets.jsGzip)} gzipped; budget 300 KB gzipped), CSS ${kb(assets.css)} (${kb(assets.cssGzip)} gzipped)`);

  const dataDir = mkdtempSync(join(tmpdir(), 'bench-panel-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const children = new Set<ChildProcess>();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  try {
    await startServer(port, { DATA_DIR: dataDir, APP_SECRET: 'bench-panel-secret-long-enough-0000', PUBLIC_URL: base, RATE_LIMIT_MAX: '1000000' }, children, 60_000);
    const email = 'bench@panel.example';
    const password = 'bench panel passphrase';
    const registered = await (await fetch(`${base}/api/v1/auth/register`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password, organizationName: 'Bench' }),
    })).json() as { organization: { id: string }; tokens: { accessToken: string } };
    const orgId = registered.organization.id;
    const token = registered.tokens.accessToken;

    const csv = ['name,email,company,tags', ...Array.from({ length: 10_000 }, (_, i) => `Person ${i},person${i}@bench${i % 97}.example,Company ${i % 300},t${i % 20}`)].join('\n');
    const imported = await api<{ created: number }>(base, token, 'POST', `/orgs/${orgId}/leads/import`, csv, 'text/csv');
    console.log(`seeded ${imported.created} leads`);

    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${base}/login`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();

    // A full page load each time (the session comes back from the refresh cookie), to the rows on screen.
    const times: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      await page.goto(`${base}/orgs/${orgId}/leads`, { waitUntil: 'commit' });
      await page.getByRole('table', { name: 'Leads' }).locator('tbody tr').first().waitFor();
      times.push(await page.evaluate(() => performance.now()));
    }
    times.sort((a, b) => a - b);
    console.log(`leads page, 10,000 leads, navigation → rows on screen: median ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms, worst ${times.at(-1)!.toFixed(0)} ms over ${LOADS} loads (budget 1,000 ms)`);

    // 50 runs that each wait 3 s and finish, while the runs page is open.
    const workflow = await api<{ id: string }>(base, token, 'POST', `/orgs/${orgId}/workflows`, {
      name: 'Bench wait', nodes: [{ id: 'start', type: 'trigger.manual' }, { id: 'wait', type: 'flow.delay', params: { seconds: 3 } }, { id: 'set', type: 'data.set', params: { fields: { done: true } } }],
      edges: [{ from: 'start', to: 'wait' }, { from: 'wait', to: 'set' }],
    });
    await page.goto(`${base}/orgs/${orgId}/runs`);
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    await page.evaluate(() => {
      const w = window as unknown as { blocking: { count: number; total: number } };
      w.blocking = { count: 0, total: 0 };
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) {
          w.blocking.count += 1;
          w.blocking.total += Math.max(0, entry.duration - 50);
        }
      }).observe({ type: 'longtask', buffered: false });
    });
    const started = Date.now();
    await Promise.all(Array.from({ length: RUNS }, (_, i) => api(base, token, 'POST', `/orgs/${orgId}/workflows/${workflow.id}/run`, { input: { n: i } })));
    // While they change: how soon the page can paint a frame and run a task after it (a click's answer waits for both).
    const frames: number[] = [];
    while (Date.now() - started < 8_000) {
      const t0 = Date.now();
      await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))));
      frames.push(Date.now() - t0);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const blocking = await page.evaluate(() => (window as unknown as { blocking: { count: number; total: number } }).blocking);
    frames.sort((a, b) => a - b);
    const rows = await page.getByRole('table').locator('tbody tr').count();
    const finished = (await api<{ total: number }>(base, token, 'GET', `/orgs/${orgId}/runs?status=SUCCEEDED&pageSize=1`)).total;
    console.log(`runs page, ${RUNS} live runs for 8 s (${finished} finished meanwhile): ${blocking.count} long tasks, total blocking time ${blocking.total.toFixed(0)} ms; next frame in median ${frames[Math.floor(frames.length / 2)]} ms, worst ${frames.at(-1)} ms; ${rows} rows shown`);
    await context.close();
  } finally {
    await browser.close();
    for (const child of children) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}
