/**
 * The canvas workflow editor with a large workflow (issue 17), printed, not asserted:
 *
 * - opening a 200-node workflow (no saved positions: the editor lays it out) in the editor: from
 *   navigation to every step drawn;
 * - frame times while the author pans (drags the background), zooms (mouse wheel) and drags a step:
 *   the gaps between requestAnimationFrame callbacks (p50, p99, worst, frames over 50 ms) and the
 *   main thread's long tasks meanwhile, in headless Chromium on this machine, with all 200 steps in
 *   view (the canvas fitted to the workflow: the most it ever draws at once).
 *
 *   npm run bench -- panel-canvas
 *
 * Needs the built panel (npm install builds it) and Chromium (/usr/bin/chromium or CHROMIUM_PATH).
 * Environment: BENCH_CANVAS_NODES (200), BENCH_CANVAS_ROUNDS (3 rounds of each gesture).
 */
import type { Page } from 'playwright-core';
import { withPanelSession } from './_panel-session.ts';

const NODES = Number(process.env.BENCH_CANVAS_NODES ?? 200);
const ROUNDS = Number(process.env.BENCH_CANVAS_ROUNDS ?? 3);
const CHAINS = 10;

/**
 * A workflow of `count` nodes: a manual trigger fanning out to ten chains of steps, every fourth an
 * If whose `false` branch ends in a step of its own and whose `true` branch goes on.
 */
export function bigWorkflow(count: number): { nodes: Record<string, unknown>[]; edges: Record<string, unknown>[] } {
  const nodes: Record<string, unknown>[] = [{ id: 'start', type: 'trigger.manual', name: 'Start' }];
  const edges: Record<string, unknown>[] = [];
  const tails: { id: string; output?: string }[] = Array.from({ length: CHAINS }, () => ({ id: 'start' }));
  for (let i = 1; nodes.length < count; i++) {
    const chain = i % CHAINS;
    const tail = tails[chain]!;
    const id = `n${i}`;
    const branch = i % 4 === 0 && nodes.length + 2 <= count;
    nodes.push(
      branch
        ? { id, type: 'flow.if', name: `Check ${i}`, params: { condition: `score >= ${i % 100}` } }
        : { id, type: 'data.set', name: `Step ${i}`, params: { fields: { [`f${i}`]: `{{ $.score + ${i} }}` } } },
    );
    edges.push({ from: tail.id, to: id, ...(tail.output ? { output: tail.output } : {}) });
    if (branch) {
      nodes.push({ id: `${id}_no`, type: 'data.set', name: `Not ${i}`, params: { fields: { skipped: true } } });
      edges.push({ from: id, to: `${id}_no`, output: 'false' });
      tails[chain] = { id, output: 'true' };
    } else {
      tails[chain] = { id };
    }
  }
  return { nodes, edges };
}

interface Frames {
  deltas: number[];
  longTasks: number;
  blocking: number;
}

/** Records requestAnimationFrame gaps and long tasks while `gesture` runs. */
async function measure(page: Page, gesture: () => Promise<void>): Promise<Frames> {
  await page.evaluate(() => {
    const w = window as unknown as {
      rec: { deltas: number[]; last: number; on: boolean; longTasks: number; blocking: number; observer?: PerformanceObserver };
    };
    // This recording's own record: the loop of an earlier one stops with it.
    const rec: typeof w.rec = { deltas: [], last: 0, on: true, longTasks: 0, blocking: 0 };
    w.rec = rec;
    const tick = (t: number) => {
      if (!rec.on) return;
      if (rec.last) rec.deltas.push(t - rec.last);
      rec.last = t;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    rec.observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        rec.longTasks += 1;
        rec.blocking += Math.max(0, entry.duration - 50);
      }
    });
    rec.observer.observe({ type: 'longtask', buffered: false });
  });
  await gesture();
  // The frame the last move asked for.
  await page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));
  return page.evaluate(() => {
    const w = window as unknown as { rec: { deltas: number[]; on: boolean; longTasks: number; blocking: number; observer?: PerformanceObserver } };
    w.rec.on = false;
    w.rec.observer?.disconnect();
    return { deltas: w.rec.deltas, longTasks: w.rec.longTasks, blocking: w.rec.blocking };
  });
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]!;

function report(name: string, runs: Frames[]): void {
  const deltas = runs.flatMap((r) => r.deltas).sort((a, b) => a - b);
  const slow = deltas.filter((d) => d > 50).length;
  const longTasks = runs.reduce((s, r) => s + r.longTasks, 0);
  const blocking = runs.reduce((s, r) => s + r.blocking, 0);
  console.log(
    `${name.padEnd(18)} ${String(deltas.length).padStart(5)} frames: p50 ${pct(deltas, 0.5).toFixed(1)} ms, p99 ${pct(deltas, 0.99).toFixed(1)} ms, worst ${deltas.at(-1)!.toFixed(1)} ms, ${slow} over 50 ms; ${longTasks} long tasks, ${blocking.toFixed(0)} ms blocking`,
  );
}

/** Moves the mouse from `from` by `by` in `steps` moves about 8 ms apart (a hand's pace), the button held. */
async function drag(page: Page, from: { x: number; y: number }, by: { x: number; y: number }, steps = 90): Promise<void> {
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  for (let i = 1; i <= steps; i++) {
    await page.mouse.move(from.x + (by.x * i) / steps, from.y + (by.y * i) / steps);
    await page.waitForTimeout(8);
  }
  await page.mouse.up();
}

export async function main(): Promise<void> {
  await withPanelSession('canvas', async ({ base, orgId, page, api }) => {
    const definition = bigWorkflow(NODES);
    const workflow = await api<{ id: string }>('POST', `/orgs/${orgId}/workflows`, { name: `Bench ${NODES} steps`, ...definition });
    console.log(`workflow of ${definition.nodes.length} nodes and ${definition.edges.length} edges`);

    // Opening: navigation → every step drawn (measured by React Flow: it shows a node once sized).
    const opens: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await page.goto(`${base}/orgs/${orgId}/workflows/${workflow.id}/edit`, { waitUntil: 'commit' });
      await page.waitForFunction(
        (n) =>
          document.querySelectorAll('.react-flow__node').length === n &&
          [...document.querySelectorAll<HTMLElement>('.react-flow__node')].every((el) => el.style.visibility !== 'hidden'),
        definition.nodes.length,
        { timeout: 60_000 },
      );
      opens.push(await page.evaluate(() => performance.now()));
    }
    opens.sort((a, b) => a - b);
    console.log(
      `open in the editor, navigation → ${definition.nodes.length} steps drawn: median ${opens[Math.floor(opens.length / 2)]!.toFixed(0)} ms, worst ${opens.at(-1)!.toFixed(0)} ms over ${ROUNDS} loads`,
    );
    await page.waitForTimeout(500);

    const pane = (await page.locator('.react-flow__pane').boundingBox())!;
    const center = { x: pane.x + pane.width / 2, y: pane.y + pane.height / 2 };
    const idle = [await measure(page, () => page.waitForTimeout(1000))];
    report('idle (1 s)', idle);

    const pans: Frames[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      pans.push(
        await measure(page, async () => {
          // From an empty corner of the pane (the fitted view leaves a margin), right and down, then back.
          const spot = { x: pane.x + 8, y: pane.y + 8 };
          await drag(page, spot, { x: 240, y: 160 });
          await drag(page, { x: spot.x + 240, y: spot.y + 160 }, { x: -240, y: -160 });
        }),
      );
    }
    report('pan', pans);

    const zooms: Frames[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      zooms.push(
        await measure(page, async () => {
          await page.mouse.move(center.x, center.y);
          for (let k = 0; k < 30; k++) {
            await page.mouse.wheel(0, k < 15 ? -120 : 120);
            await page.waitForTimeout(16);
          }
        }),
      );
    }
    report('zoom', zooms);

    // Drag a step in the middle of the workflow (it is selected by it, so its side panel is open too).
    const node = page.locator(`.react-flow__node[data-id="n${Math.floor(NODES / 2)}"]`);
    const drags: Frames[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const box = (await node.boundingBox())!;
      drags.push(
        await measure(page, async () => {
          const grip = { x: box.x + box.width / 2, y: box.y + 6 };
          await drag(page, grip, { x: 200, y: 120 });
        }),
      );
    }
    report('drag a step', drags);
    const undoSteps = await page.getByRole('button', { name: 'Undo' }).isEnabled();
    console.log(`(each drag is one undo step: Undo ${undoSteps ? 'enabled' : 'not enabled'} after ${ROUNDS} drags)`);
  });
}
