/**
 * The canvas workflow editor in Chromium (issue 17): a workflow built from nothing, kept over a
 * reload before it is saved, refused by the API and fixed on the canvas, saved, run in test mode and
 * followed live on the canvas, then for real to a receiver this test runs; a stale save refused
 * without losing anything; a template opened without creating a workflow; export and import.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { Receiver } from '../test/receiver.ts';
import { apiCall, browserAvailable, screenshot, signUp, startE2E, type E2E } from './harness.ts';

const FIXTURE = new URL('../panel/src/components/workflows/fixtures/node-types.json', import.meta.url);

let e2e: E2E;
let receiver: Receiver;
beforeAll(async () => {
  if (!browserAvailable) return;
  receiver = await new Receiver().start();
  e2e = await startE2E();
});
afterAll(async () => {
  await receiver?.stop();
  await e2e?.close();
});

interface Workflow {
  id: string;
  name: string;
  version: number;
  nodes: Record<string, unknown>[];
  edges: Record<string, unknown>[];
}

const canvas = (page: Page) => page.getByRole('group', { name: 'Workflow canvas' });
const step = (page: Page, name: string) => canvas(page).getByRole('group', { name, exact: true });
const side = (page: Page) => page.getByRole('complementary', { name: 'Side panel' });
const palette = (page: Page) => page.getByRole('complementary', { name: 'Node palette' });
const statusOf = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"] > div`).getAttribute('data-status');
const nodeIds = (page: Page) => page.locator('.react-flow__node').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-id')));

/** Draws an edge by dragging from an output handle to an input handle, as a person does. */
async function connect(page: Page, from: string, output: string, to: string): Promise<void> {
  const boxes = async () =>
    Promise.all([
      page.locator(`.react-flow__node[data-id="${from}"] .react-flow__handle.source[data-handleid="${output}"]`).boundingBox(),
      page.locator(`.react-flow__node[data-id="${to}"] .react-flow__handle.target`).boundingBox(),
    ]);
  // The canvas may still be panning to a step just added: wait until the handles stay put.
  let [source, target] = await boxes();
  for (let i = 0; i < 20; i++) {
    await page.waitForTimeout(100);
    const [s, t] = await boxes();
    const still = JSON.stringify([s, t]) === JSON.stringify([source, target]);
    [source, target] = [s, t];
    if (still) break;
  }
  if (!source || !target) throw new Error(`handles of ${from}:${output} → ${to} not on screen`);
  await page.mouse.move(source.x + source.width / 2, source.y + source.height / 2);
  await page.mouse.down();
  await page.mouse.move(target.x + target.width / 2, target.y + target.height / 2, { steps: 12 });
  await page.mouse.up();
  await page.locator(`.react-flow__edge[data-id="${from}:${output}>${to}"]`).waitFor({ state: 'attached' });
}

async function markDocument(page: Page): Promise<void> {
  await page.evaluate(() => {
    (window as unknown as { e2eMark?: number }).e2eMark = 42;
  });
}

const stillSameDocument = (page: Page) => page.evaluate(() => (window as unknown as { e2eMark?: number }).e2eMark === 42);

describe.runIf(browserAvailable)('the canvas workflow editor', () => {
  it("has the node types the server serves in the panel tests' fixture (UPDATE_FIXTURES=1 rewrites it)", async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    const served = await apiCall<unknown[]>(e2e, accessToken, 'GET', `/orgs/${orgId}/node-types`);
    if (process.env.UPDATE_FIXTURES) writeFileSync(FIXTURE, `${JSON.stringify(served, null, 2)}\n`);
    expect(JSON.parse(readFileSync(FIXTURE, 'utf8'))).toEqual(served);
  });

  it('builds a workflow from nothing, keeps it over a reload, fixes what the API refuses on the canvas, saves, and follows a test run live', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('link', { name: 'Build on canvas' }).click();
    await canvas(page).getByText('An empty workflow').waitFor();
    await page.getByRole('textbox', { name: 'Workflow name' }).fill('Route hot leads');

    // Manual trigger, then If after it (connected: the trigger has one output).
    await palette(page).getByRole('button', { name: 'Add Manual trigger (trigger.manual)' }).click();
    await step(page, 'Manual trigger').waitFor();
    await palette(page).getByRole('button', { name: 'Add If (flow.if)' }).click();
    await side(page).getByRole('textbox', { name: 'Name', exact: true }).fill('Score ≥ 70?');
    await side(page).getByRole('textbox', { name: 'Condition' }).fill('score >= 70');
    await page.locator('.react-flow__edge[data-id="manual:main>if"]').waitFor({ state: 'attached' });

    // A delay after If: If has two branches, so the edge is drawn by hand from its `true` handle.
    await palette(page).getByRole('button', { name: 'Add Delay (flow.delay)' }).click();
    await side(page).getByRole('textbox', { name: 'Name', exact: true }).fill('Wait a moment');
    await side(page).getByRole('textbox', { name: 'Seconds' }).fill('2');
    await connect(page, 'if', 'true', 'delay');

    // The palette searches: a webhook out after the delay (connected), to the receiver.
    await palette(page).getByRole('searchbox', { name: 'Search nodes' }).fill('webhook out');
    await expect.poll(() => palette(page).getByRole('button').count()).toBe(1);
    await palette(page).getByRole('button', { name: 'Add Webhook out (utility.webhookOut)' }).click();
    await side(page).getByRole('textbox', { name: 'Name', exact: true }).fill('Send to CRM');
    await side(page).getByRole('textbox', { name: 'URL' }).fill(receiver.url('/crm'));
    await page.locator('.react-flow__edge[data-id="delay:main>webhookOut"]').waitFor({ state: 'attached' });

    // The other branch: a second webhook out, from If's `false` handle, its URL left out for now.
    await canvas(page).getByRole('button', { name: 'Fit View' }).click();
    await step(page, 'Score ≥ 70?').click();
    await palette(page).getByRole('button', { name: 'Add Webhook out (utility.webhookOut)' }).click();
    await side(page).getByRole('textbox', { name: 'Name', exact: true }).fill('Send to nurture');
    await connect(page, 'if', 'false', 'webhookOut_2');

    // Duplicate, delete, undo, redo with the keyboard.
    await step(page, 'Send to nurture').click();
    await page.keyboard.press('Control+d');
    await step(page, 'Send to nurture (copy)').waitFor();
    await page.keyboard.press('Delete');
    await step(page, 'Send to nurture (copy)').waitFor({ state: 'detached' });
    await page.keyboard.press('Control+z');
    await step(page, 'Send to nurture (copy)').waitFor();
    await page.keyboard.press('Control+Shift+z');
    await step(page, 'Send to nurture (copy)').waitFor({ state: 'detached' });
    expect((await nodeIds(page)).sort()).toEqual(['delay', 'if', 'manual', 'webhookOut', 'webhookOut_2']);

    // Not saved yet: a reload keeps it as a draft in this browser, restored on request.
    await expect
      .poll(() => page.evaluate((key) => localStorage.getItem(key) ?? '', `workflow-draft:${orgId}:new`))
      .toContain('"from":"if","to":"webhookOut_2","output":"false"');
    await page.reload();
    const draft = page.getByRole('status', { name: 'Unsaved draft' });
    await draft.getByRole('button', { name: 'Restore draft' }).click();
    await step(page, 'Send to nurture').waitFor();
    expect((await nodeIds(page)).sort()).toEqual(['delay', 'if', 'manual', 'webhookOut', 'webhookOut_2']);
    await expect.poll(() => page.getByRole('textbox', { name: 'Workflow name' }).inputValue()).toBe('Route hot leads');
    expect(await apiCall<{ total: number }>(e2e, accessToken, 'GET', `/orgs/${orgId}/workflows`)).toMatchObject({ total: 0 });

    // Saved: the API refuses the webhook without a URL, and the canvas says which node and why.
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const problems = page.getByRole('alert', { name: 'Problems' });
    await problems.getByText('Not saved: the workflow is not valid').waitFor();
    await expect.poll(() => page.locator('.react-flow__node[data-id="webhookOut_2"] > div').getAttribute('data-invalid')).toBe('true');
    await step(page, 'Send to nurture').getByText(/url/i).waitFor();
    await side(page)
      .getByRole('alert')
      .getByText(/Not valid/)
      .waitFor();
    expect(await statusOf(page, 'webhookOut')).toBeNull();
    await screenshot(page, 'workflow-editor-invalid');

    // Fixed in its side panel (it was selected for us), saved with the keyboard.
    await side(page).getByRole('textbox', { name: 'URL' }).fill(receiver.url('/nurture'));
    await expect.poll(() => page.locator('.react-flow__node[data-id="webhookOut_2"] > div').getAttribute('data-invalid')).toBeNull();
    await page.keyboard.press('Control+s');
    await page.waitForURL(/\/workflows\/[^/]+\/edit$/);
    await page
      .getByRole('status', { name: 'Save status' })
      .getByText(/Saved · version/)
      .waitFor();
    const workflowId = new URL(page.url()).pathname.split('/').at(-2)!;
    const saved = await apiCall<Workflow>(e2e, accessToken, 'GET', `/orgs/${orgId}/workflows/${workflowId}`);
    expect(saved.name).toBe('Route hot leads');
    expect(saved.nodes.map((n) => [n.id, n.type, n.name])).toEqual([
      ['manual', 'trigger.manual', 'Manual trigger'],
      ['if', 'flow.if', 'Score ≥ 70?'],
      ['delay', 'flow.delay', 'Wait a moment'],
      ['webhookOut', 'utility.webhookOut', 'Send to CRM'],
      ['webhookOut_2', 'utility.webhookOut', 'Send to nurture'],
    ]);
    expect(saved.nodes.every((n) => typeof (n.position as { x?: unknown } | undefined)?.x === 'number')).toBe(true);
    expect(saved.nodes.find((n) => n.id === 'delay')!.params).toEqual({ seconds: 2 });
    expect(saved.edges).toEqual(
      expect.arrayContaining([
        { from: 'manual', to: 'if' },
        { from: 'if', to: 'delay', output: 'true' },
        { from: 'delay', to: 'webhookOut' },
        { from: 'if', to: 'webhookOut_2', output: 'false' },
      ]),
    );
    expect(await page.evaluate((key) => localStorage.getItem(key), `workflow-draft:${orgId}:new`)).toBeNull();

    // A test run from the editor: every step on the path lights up as it runs, without a reload.
    await markDocument(page);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Run from the editor' });
    await dialog.getByRole('textbox', { name: 'Input (JSON)' }).fill('{ "score": 85, "email": "ada@engines.example" }');
    expect(await dialog.getByRole('checkbox', { name: 'Test mode' }).isChecked()).toBe(true);
    await dialog.getByRole('button', { name: 'Start test run' }).click();
    await step(page, 'Manual trigger').getByText('Succeeded').waitFor();
    await step(page, 'Score ≥ 70?').getByText('Succeeded').waitFor();
    await step(page, 'Wait a moment').getByText('Waiting').waitFor();
    // Live: the step after the delay has not run yet.
    expect(await statusOf(page, 'webhookOut')).toBeNull();
    await step(page, 'Send to CRM').getByText('Succeeded · 1 item').waitFor({ timeout: 20_000 });
    await expect.poll(() => page.getByRole('status', { name: 'Run status' }).innerText()).toBe('Succeeded');
    for (const id of ['manual', 'if', 'delay', 'webhookOut']) expect(await statusOf(page, id)).toBe('succeeded');
    await step(page, 'Send to nurture').getByText('Skipped').waitFor();
    expect(await stillSameDocument(page)).toBe(true);
    await screenshot(page, 'workflow-editor-run');

    // A step's items are one click away: in test mode the webhook only shows what it would send.
    await step(page, 'Send to CRM').click();
    const items = side(page).getByLabel('Items of Send to CRM');
    await items.getByText(/"dryRun": true/).waitFor();
    expect(await items.innerText()).toContain(receiver.url('/crm'));
    expect(receiver.received).toHaveLength(0);

    // An expression field shows its result against the run's items, evaluated by the server.
    await step(page, 'Score ≥ 70?').click();
    const result = side(page).getByRole('status', { name: 'Result of condition' });
    await result.getByText('true', { exact: true }).waitFor();
    await side(page).getByRole('textbox', { name: 'Condition' }).fill('score >= 90');
    await result.getByText('false', { exact: true }).waitFor();
    await side(page).getByRole('textbox', { name: 'Condition' }).fill('score >=');
    await result.getByText(/Error:/).waitFor();
    await side(page).getByRole('textbox', { name: 'Condition' }).fill('score >= 70');
    await page
      .getByRole('status', { name: 'Save status' })
      .getByText(/Saved · version/)
      .waitFor();

    // And for real: the webhook reaches the receiver, signed, with the item.
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await dialog.getByRole('checkbox', { name: 'Test mode' }).uncheck();
    await dialog.getByRole('button', { name: /^(Start run|Save and run)$/ }).click();
    await receiver.waitFor(1, 20_000);
    expect(receiver.received[0]!.url).toBe('/crm');
    expect(JSON.stringify(receiver.received[0]!.json)).toContain('"score":85');
    await expect.poll(() => page.getByRole('status', { name: 'Run status' }).innerText(), { timeout: 20_000 }).toBe('Succeeded');
  });

  it('refuses a stale save without losing the edit: the author reloads what changed elsewhere and gets the draft back', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    const created = await apiCall<Workflow>(e2e, accessToken, 'POST', `/orgs/${orgId}/workflows`, {
      name: 'Tag leads',
      nodes: [
        { id: 'start', type: 'trigger.manual', name: 'Start' },
        { id: 'tag', type: 'data.set', name: 'Tag', params: { fields: { tier: 'gold' } } },
      ],
      edges: [{ from: 'start', to: 'tag' }],
    });
    await page.goto(`/orgs/${orgId}/workflows/${created.id}`);
    await page.getByRole('link', { name: 'Open editor' }).click();
    await step(page, 'Tag').click();
    await side(page).getByRole('textbox', { name: 'Name', exact: true }).fill('Tag as gold');

    // Meanwhile, someone changes the workflow through the API.
    await apiCall(e2e, accessToken, 'PATCH', `/orgs/${orgId}/workflows/${created.id}`, { description: 'Changed elsewhere' });

    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const conflict = page.getByRole('alert', { name: 'Save conflict' });
    await conflict.getByText(/changed elsewhere since you opened it/).waitFor();
    await conflict.getByText(/kept as a draft in this browser/).waitFor();
    const stored = await apiCall<Workflow>(e2e, accessToken, 'GET', `/orgs/${orgId}/workflows/${created.id}`);
    expect(stored.nodes.find((n) => n.id === 'tag')!.name).toBe('Tag');
    expect(await page.evaluate((key) => localStorage.getItem(key) ?? '', `workflow-draft:${orgId}:${created.id}`)).toContain('Tag as gold');
    await screenshot(page, 'workflow-editor-conflict');

    // Load what is saved now (the other change shows), then take the draft back on top of it.
    await conflict.getByRole('button', { name: 'Load the saved version' }).click();
    await step(page, 'Tag').waitFor();
    await expect
      .poll(() => page.getByRole('region', { name: 'Workflow settings' }).getByRole('textbox', { name: 'Description' }).inputValue())
      .toBe('Changed elsewhere');
    await page.getByRole('status', { name: 'Unsaved draft' }).getByRole('button', { name: 'Restore draft' }).click();
    await step(page, 'Tag as gold').waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status', { name: 'Save status' }).getByText('All changes saved').waitFor();
    const after = await apiCall<Workflow>(e2e, accessToken, 'GET', `/orgs/${orgId}/workflows/${created.id}`);
    expect(after.nodes.find((n) => n.id === 'tag')!.name).toBe('Tag as gold');
    expect(after.version).toBeGreaterThan(stored.version);
  });

  it('opens a template on the canvas without creating a workflow; exports it and imports it into a new one', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('link', { name: 'Templates' }).click();
    await page
      .getByRole('list', { name: 'Templates' })
      .getByRole('button', { name: /Welcome message to new leads/ })
      .click();
    await page.getByRole('region', { name: 'Template preview' }).getByText('Has an email?').waitFor();
    await page.getByRole('link', { name: 'Open in editor' }).click();
    await step(page, 'Has an email?').waitFor();
    await step(page, 'Send welcome').waitFor();
    await page.getByRole('status', { name: 'Save status' }).getByText('Not saved yet').waitFor();
    expect(await apiCall<{ total: number }>(e2e, accessToken, 'GET', `/orgs/${orgId}/workflows`)).toMatchObject({ total: 0 });
    const template = await apiCall<{ nodes: unknown[]; edges: unknown[] }>(e2e, accessToken, 'GET', `/orgs/${orgId}/templates/welcome-new-leads`);

    // A branch's params, as a form: the `anyOf` of messaging.send shows the webhook form it matches.
    await step(page, 'Send welcome').click();
    expect(await side(page).getByRole('textbox', { name: 'URL' }).inputValue()).toBe('https://gateway.example.com/messages');
    await page.locator('.react-flow__pane').click({ position: { x: 10, y: 10 } });
    await screenshot(page, 'workflow-editor-template');

    // Export: the file holds the definition as it is on the canvas.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export' }).click()]);
    const file = JSON.parse(readFileSync((await download.path())!, 'utf8')) as { name: string; nodes: unknown[]; edges: unknown[] };
    expect(file.name).toBe('Welcome message to new leads');
    expect(file.nodes).toEqual(template.nodes);
    expect(file.edges).toEqual(template.edges);

    // Import it into a blank workflow, and save it.
    await page.goto(`/orgs/${orgId}/workflows/new`);
    await canvas(page).getByText('An empty workflow').waitFor();
    await page
      .getByLabel('Import a workflow file')
      .setInputFiles({ name: 'welcome.workflow.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(file)) });
    await step(page, 'Send welcome').waitFor();
    await page
      .getByRole('status', { name: 'Notice' })
      .getByText(/Imported 4 steps/)
      .waitFor();
    expect(await page.getByRole('textbox', { name: 'Workflow name' }).inputValue()).toBe('Welcome message to new leads');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(/\/workflows\/[^/]+\/edit$/);
    const list = await apiCall<{ items: Workflow[] }>(e2e, accessToken, 'GET', `/orgs/${orgId}/workflows`);
    expect(list.items.map((w) => w.name)).toEqual(['Welcome message to new leads']);
    expect(list.items[0]!.nodes).toEqual(template.nodes);
  });
});
