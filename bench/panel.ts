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
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { DIST, withPanelSession } from './_panel-session.ts';

const LOADS = Number(process.env.BENCH_LOADS ?? 7);
const RUNS = Number(process.env.BENCH_RUNS ?? 50);

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** What the browser loads before the first page renders: the entry script, its preloads and the CSS. */
function initialAssets(): { js: number; jsGzip: number; css: number; cssGzip: number; files: string[] } {
  const html = readFileSync(join(DIST, 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/<script[^>]+src="([^"]+)"/g), ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g)].map((m) => m[1]!);
  const styles = [...html.matchAll(/<link[^>]+rel="stylesheet"[^>]+href="([^"]+)"/g)].map((m) => m[1]!);
  const size = (paths: string[]) =>
    paths.reduce(
      (sum, p) => {
        const body = readFileSync(join(DIST, p));
        return { raw: sum.raw + body.length, gzip: sum.gzip + gzipSync(body, { level: 9 }).length };
      },
      { raw: 0, gzip: 0 },
    );
  const js = size(scripts);
  const css = size(styles);
  return { js: js.raw, jsGzip: js.gzip, css: css.raw, cssGzip: css.gzip, files: [...scripts, ...styles] };
}

export async function main(): Promise<void> {
  const assets = initialAssets();
  console.log(
    `initial JavaScript: ${kb(assets.js)} (${kb(assets.jsGzip)} gzipped; budget 300 KB gzipped), CSS ${kb(assets.css)} (${kb(assets.cssGzip)} gzipped)`,
  );

  await withPanelSession('panel', async ({ base, orgId, page, api }) => {
    const csv = [
      'name,email,company,tags',
      ...Array.from({ length: 10_000 }, (_, i) => `Person ${i},person${i}@bench${i % 97}.example,Company ${i % 300},t${i % 20}`),
    ].join('\n');
    const imported = await api<{ created: number }>('POST', `/orgs/${orgId}/leads/import`, csv, 'text/csv');
    console.log(`seeded ${imported.created} leads`);

    // A full page load each time (the session comes back from the refresh cookie), to the rows on screen.
    const times: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      await page.goto(`${base}/orgs/${orgId}/leads`, { waitUntil: 'commit' });
      await page.getByRole('table', { name: 'Leads' }).locator('tbody tr').first().waitFor();
      times.push(await page.evaluate(() => performance.now()));
    }
    times.sort((a, b) => a - b);
    console.log(
      `leads page, 10,000 leads, navigation → rows on screen: median ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms, worst ${times.at(-1)!.toFixed(0)} ms over ${LOADS} loads (budget 1,000 ms)`,
    );

    // 50 runs that each wait 3 s and finish, while the runs page is open.
    const workflow = await api<{ id: string }>('POST', `/orgs/${orgId}/workflows`, {
      name: 'Bench wait',
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'wait', type: 'flow.delay', params: { seconds: 3 } },
        { id: 'set', type: 'data.set', params: { fields: { done: true } } },
      ],
      edges: [
        { from: 'start', to: 'wait' },
        { from: 'wait', to: 'set' },
      ],
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
    await Promise.all(Array.from({ length: RUNS }, (_, i) => api('POST', `/orgs/${orgId}/workflows/${workflow.id}/run`, { input: { n: i } })));
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
    const finished = (await api<{ total: number }>('GET', `/orgs/${orgId}/runs?status=SUCCEEDED&pageSize=1`)).total;
    console.log(
      `runs page, ${RUNS} live runs for 8 s (${finished} finished meanwhile): ${blocking.count} long tasks, total blocking time ${blocking.total.toFixed(0)} ms; next frame in median ${frames[Math.floor(frames.length / 2)]} ms, worst ${frames.at(-1)} ms; ${rows} rows shown`,
    );
  });
}
