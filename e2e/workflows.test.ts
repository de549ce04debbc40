import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { apiCall, browserAvailable, screenshot, signIn, signUp, startE2E, type E2E } from './harness.ts';

let e2e: E2E;
beforeAll(async () => {
  if (browserAvailable) e2e = await startE2E();
});
afterAll(async () => e2e?.close());

interface Workflow {
  id: string;
  name: string;
  active: boolean;
  nodes: Record<string, unknown>[];
  edges: Record<string, unknown>[];
}
interface Run {
  id: string;
  status: string;
  steps: { nodeId: string; status: string; items: Record<string, unknown>[] | null }[];
}
interface Approval {
  id: string;
  status: string;
  comment: string | null;
  editedPayload: unknown;
}

/** Marks the document, so a later check can tell that the page was not reloaded. */
async function markDocument(page: Page): Promise<void> {
  await page.evaluate(() => {
    (window as unknown as { e2eMark?: number }).e2eMark = 42;
  });
}

async function stillSameDocument(page: Page): Promise<boolean> {
  return page.evaluate(() => (window as unknown as { e2eMark?: number }).e2eMark === 42);
}

const runStatus = (page: Page) => page.getByRole('status', { name: 'Run status' }).innerText();
const step = (page: Page, name: string) => page.getByRole('list', { name: 'Steps' }).getByRole('listitem', { name, exact: true });

describe.runIf(browserAvailable)('workflows, runs and approvals in the panel', () => {
  it("creates a workflow from a template, edits it with the API's validation messages, runs it and watches it finish live", async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    const lead = await apiCall<{ id: string }>(e2e, accessToken, 'POST', `/orgs/${orgId}/leads`, {
      name: 'Ada Lovelace',
      email: 'ada@engines.example',
      company: 'Analytical Engines',
    });

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workflows' }).click();
    await page.getByText('No workflows yet').waitFor();

    // From a template, previewed as a graph.
    await page.getByRole('button', { name: 'New workflow' }).click();
    const dialog = page.getByRole('dialog', { name: 'New workflow' });
    await dialog.getByRole('radio', { name: /Qualify new leads with AI/ }).check();
    await dialog.getByRole('group', { name: 'Graph of Qualify new leads with AI' }).getByText('Score ≥ 70?').waitFor();
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Qualify fair leads');
    await dialog.getByRole('button', { name: 'Create workflow' }).click();
    await page.getByRole('heading', { level: 1, name: 'Qualify fair leads' }).waitFor();
    const workflowId = new URL(page.url()).pathname.split('/').pop()!;

    // It starts active (its trigger listens for lead.created): deactivate it while it is edited.
    await page.getByRole('button', { name: 'Deactivate' }).click();
    await page.getByRole('button', { name: 'Activate' }).waitFor();
    expect((await apiCall<Workflow>(e2e, accessToken, 'GET', `/orgs/${orgId}/workflows/${workflowId}`)).active).toBe(false);

    const graph = page.getByRole('group', { name: 'Workflow graph' });
    await graph.getByText('Mark qualified').waitFor();
    const editor = page.getByLabel('Definition (JSON)');
    const saved = JSON.parse(await editor.inputValue()) as { nodes: Record<string, unknown>[]; edges: Record<string, unknown>[] };
    expect(saved.nodes.map((n) => n.id)).toEqual(['trigger', 'qualify', 'good', 'qualified', 'unqualified']);

    // Broken JSON is pointed at before anything is sent.
    await editor.fill('{\n  "nodes": [\n    { "id": "t", }\n  ]\n}');
    await page.getByText(/Invalid JSON at line 3, column 18/).waitFor();
    expect(await page.getByRole('button', { name: 'Save', exact: true }).isDisabled()).toBe(true);

    // Bad params: the API's 422 names the node, and the graph marks it.
    const broken = structuredClone(saved);
    broken.nodes.find((n) => n.id === 'good')!.params = {};
    await editor.fill(JSON.stringify(broken, null, 2));
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const problem = page.getByRole('alert').filter({ hasText: 'The workflow is not valid' });
    await problem.waitFor();
    expect(await problem.innerText()).toMatch(/Node "good"/);
    await graph.getByText('Has a problem').waitFor();
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, 'workflow-editor');

    // A dangling edge: named as an edge.
    const dangling = structuredClone(saved);
    dangling.edges.push({ from: 'qualify', to: 'nowhere' });
    await editor.fill(JSON.stringify(dangling, null, 2));
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await problem.getByText('Edge qualify → nowhere').waitFor();

    // A valid change: a short pause before the agent, so the run can be watched as it goes.
    const paused = structuredClone(saved);
    paused.nodes.splice(1, 0, { id: 'pause', type: 'flow.delay', name: 'Pause', params: { seconds: 3 } });
    paused.edges = paused.edges.map((e) => (e.from === 'trigger' ? { from: 'pause', to: e.to } : e));
    paused.edges.unshift({ from: 'trigger', to: 'pause' });
    await editor.fill(JSON.stringify(paused, null, 2));
    await graph.getByText('Pause', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    const stored = await apiCall<Workflow>(e2e, accessToken, 'GET', `/orgs/${orgId}/workflows/${workflowId}`);
    expect(stored.nodes.map((n) => n.id)).toEqual(['trigger', 'pause', 'qualify', 'good', 'qualified', 'unqualified']);
    expect(stored.edges).toContainEqual({ from: 'trigger', to: 'pause' });

    // Run it with an input (the event it stands for), and follow it on the run page.
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const runDialog = page.getByRole('dialog', { name: 'Run workflow' });
    await runDialog.getByLabel('Input (JSON)').fill('{ "payload": ');
    await runDialog.getByRole('button', { name: 'Start run' }).click();
    await runDialog.getByText(/Invalid JSON/).waitFor();
    await runDialog
      .getByLabel('Input (JSON)')
      .fill(JSON.stringify({ payload: { lead: { id: lead.id, name: 'Ada Lovelace', email: 'ada@engines.example', company: 'Analytical Engines' } } }));
    await runDialog.getByLabel('Test mode').check();
    await runDialog.getByRole('button', { name: 'Start test run' }).click();
    await page.waitForURL(/\/runs\/run_/);
    await markDocument(page);
    const runId = new URL(page.url()).pathname.split('/').pop()!;

    await expect.poll(() => runStatus(page), { timeout: 10_000 }).toBe('WAITING');
    await step(page, 'Pause').getByText('WAITING', { exact: true }).waitFor();
    await step(page, 'Pause')
      .getByText(/Waiting until/)
      .waitFor();
    await expect.poll(() => runStatus(page), { timeout: 30_000 }).toBe('SUCCEEDED');
    expect(await stillSameDocument(page)).toBe(true);

    await step(page, 'Pause').getByText('SUCCEEDED', { exact: true }).waitFor();
    await step(page, 'Qualify').getByText('SUCCEEDED', { exact: true }).waitFor();
    const run = await apiCall<Run>(e2e, accessToken, 'GET', `/orgs/${orgId}/runs/${runId}`);
    expect(run.status).toBe('SUCCEEDED');
    const branch = run.steps.some((s) => s.nodeId === 'qualified' && s.status === 'SUCCEEDED') ? 'Mark qualified' : 'Mark unqualified';
    await step(page, branch).getByText('SUCCEEDED', { exact: true }).waitFor();
    const qualifiedLead = await apiCall<{ status: string }>(e2e, accessToken, 'GET', `/orgs/${orgId}/leads/${lead.id}`);
    expect(qualifiedLead.status).toBe(branch === 'Mark qualified' ? 'QUALIFIED' : 'UNQUALIFIED');

    // The step's items come from the run record: the agent's score is there.
    await step(page, 'Qualify')
      .getByText(/^Items \(1\)$/)
      .click();
    await step(page, 'Qualify')
      .getByText(/"score":/)
      .waitFor();
    await step(page, 'Score ≥ 70?')
      .getByText(/Items \(true: \d, false: \d\)/)
      .waitFor();

    // The list shows it.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('table', { name: 'Workflows' }).getByRole('link', { name: 'Qualify fair leads' }).waitFor();
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/templates/weekly-report-digest/use`, { name: 'Weekly digest' });
    await page.reload();
    await page.getByRole('table', { name: 'Workflows' }).getByRole('link', { name: 'Weekly digest' }).waitFor();
    await page.getByLabel('State').selectOption('inactive');
    await expect.poll(() => new URL(page.url()).searchParams.get('state')).toBe('inactive');
    await expect.poll(() => page.getByRole('table', { name: 'Workflows' }).locator('tbody tr').count()).toBe(1);
    await page.getByLabel('State').selectOption('');
    await expect.poll(() => page.getByRole('table', { name: 'Workflows' }).locator('tbody tr').count()).toBe(2);
    await screenshot(page, 'workflows');
  });

  it('waits for an approval: the queue shows it live, approve with an edited payload and the run finishes; reject another with a comment', async () => {
    const page = await e2e.page();
    const { orgId, accessToken, email, password } = await signUp(e2e, page);
    const workflow = await apiCall<Workflow>(e2e, accessToken, 'POST', `/orgs/${orgId}/workflows`, {
      name: 'Offer with sign-off',
      nodes: [
        { id: 'trigger', type: 'trigger.manual', name: 'Start' },
        {
          id: 'approve',
          type: 'flow.approval',
          name: 'Sign-off',
          params: { title: 'Send the spring offer?', description: 'Analytical Engines asked for a discount.' },
        },
        { id: 'send', type: 'data.set', name: 'Offer sent', params: { fields: { sent: true } } },
        { id: 'drop', type: 'data.set', name: 'Offer dropped', params: { fields: { sent: false } } },
      ],
      edges: [
        { from: 'trigger', to: 'approve' },
        { from: 'approve', to: 'send', output: 'approved' },
        { from: 'approve', to: 'drop', output: 'rejected' },
      ],
    });

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Approvals' }).click();
    await page.getByText('Nothing waits for approval').waitFor();
    await markDocument(page);

    // A run starts elsewhere: its approval appears here without a reload.
    const first = await apiCall<{ id: string }>(e2e, accessToken, 'POST', `/orgs/${orgId}/workflows/${workflow.id}/run`, {
      input: { company: 'Analytical Engines', discount: 10 },
    });
    const table = page.getByRole('table', { name: 'Approvals' });
    await table.getByRole('button', { name: 'Send the spring offer?', exact: true }).waitFor({ timeout: 15_000 });
    await page.getByRole('status').filter({ hasText: 'New approval requested' }).waitFor();
    expect(await stillSameDocument(page)).toBe(true);

    // The run page, open in a second tab, waits.
    const runPage = await page.context().newPage();
    await runPage.goto(`/orgs/${orgId}/runs/${first.id}`);
    await expect.poll(() => runStatus(runPage)).toBe('WAITING');
    await runPage.getByRole('link', { name: 'Review the approval' }).waitFor();
    await markDocument(runPage);

    // Approve with an edited payload.
    await table.getByRole('button', { name: 'Review Send the spring offer?' }).click();
    const panel = page.getByRole('dialog', { name: 'Send the spring offer?' });
    await panel.getByText(/"discount": 10/).waitFor();
    await panel.getByLabel('Comment (optional)').fill('Go with 20 %');
    await panel.getByLabel('Edit the payload before approving').check();
    await panel.getByLabel('Edited payload (JSON)').fill('[1, 2]');
    await panel.getByRole('button', { name: 'Approve with edits' }).click();
    await panel.getByText(/must be a JSON object or an array of objects/).waitFor();
    await panel.getByLabel('Edited payload (JSON)').fill(JSON.stringify([{ company: 'Analytical Engines', discount: 20, code: 'SPRING-20' }], null, 2));
    await screenshot(page, 'approvals');
    await panel.getByRole('button', { name: 'Approve with edits' }).click();
    await expect.poll(() => panel.getByRole('status', { name: 'Approval status' }).innerText()).toBe('APPROVED');
    await panel.getByText('Comment: “Go with 20 %”').waitFor();
    await page.keyboard.press('Escape');
    await page.getByText('Nothing waits for approval').waitFor();

    // The run tab sees the run resume and finish, live, with the edited items on the approved branch.
    await expect.poll(() => runStatus(runPage), { timeout: 30_000 }).toBe('SUCCEEDED');
    expect(await stillSameDocument(runPage)).toBe(true);
    await step(runPage, 'Offer sent').getByText('SUCCEEDED', { exact: true }).waitFor();
    await step(runPage, 'Offer sent').getByText('Items (1)').click();
    await step(runPage, 'Offer sent')
      .getByText(/"code": "SPRING-20"/)
      .waitFor();
    await screenshot(runPage, 'run-detail');
    const approvedRun = await apiCall<Run>(e2e, accessToken, 'GET', `/orgs/${orgId}/runs/${first.id}`);
    expect(approvedRun.steps.find((s) => s.nodeId === 'send')!.items).toEqual([{ company: 'Analytical Engines', discount: 20, code: 'SPRING-20', sent: true }]);

    // Another one, opened the way a notification link opens it, rejected with a comment.
    const second = await apiCall<{ id: string }>(e2e, accessToken, 'POST', `/orgs/${orgId}/workflows/${workflow.id}/run`, {
      input: { company: 'Difference Engines' },
    });
    await table.getByRole('button', { name: 'Send the spring offer?', exact: true }).waitFor({ timeout: 15_000 });
    const pending = await apiCall<{ items: Approval[] }>(e2e, accessToken, 'GET', `/orgs/${orgId}/approvals?status=PENDING&runId=${second.id}`);
    await page.goto(`/orgs/${orgId}/approvals?approval=${pending.items[0]!.id}`);
    const rejectPanel = page.getByRole('dialog', { name: 'Send the spring offer?' });
    await rejectPanel.getByText(/Difference Engines/).waitFor();
    await rejectPanel.getByLabel('Comment (optional)').fill('Not this quarter');
    await rejectPanel.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(() => rejectPanel.getByRole('status', { name: 'Approval status' }).innerText()).toBe('REJECTED');
    const rejected = await apiCall<Approval>(e2e, accessToken, 'GET', `/orgs/${orgId}/approvals/${pending.items[0]!.id}`);
    expect(rejected).toMatchObject({ status: 'REJECTED', comment: 'Not this quarter' });
    await expect
      .poll(async () => (await apiCall<Run>(e2e, accessToken, 'GET', `/orgs/${orgId}/runs/${second.id}`)).status, { timeout: 30_000 })
      .toBe('SUCCEEDED');
    const rejectedRun = await apiCall<Run>(e2e, accessToken, 'GET', `/orgs/${orgId}/runs/${second.id}`);
    expect(rejectedRun.steps.find((s) => s.nodeId === 'drop')!.items).toEqual([{ company: 'Difference Engines', sent: false }]);

    // Decided ones stay findable under their status.
    await page.keyboard.press('Escape');
    await page.getByLabel('Status').selectOption('ALL');
    await expect.poll(() => new URL(page.url()).searchParams.get('status')).toBe('ALL');
    await expect.poll(() => page.getByRole('table', { name: 'Approvals' }).locator('tbody tr').count()).toBe(2);

    // Runs: a new one appears live, is canceled from its page; the list filters by status in the URL.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Runs' }).click();
    const runs = page.getByRole('table', { name: 'Runs' });
    await expect.poll(() => runs.locator('tbody tr').count()).toBe(2);
    await markDocument(page);
    const third = await apiCall<{ id: string }>(e2e, accessToken, 'POST', `/orgs/${orgId}/workflows/${workflow.id}/run`, {
      input: { company: 'Babbage & Co' },
    });
    const thirdRow = runs.locator('tbody tr').filter({ has: page.getByRole('link', { name: `Run ${third.id} of Offer with sign-off` }) });
    await expect.poll(() => thirdRow.getByText('WAITING').count(), { timeout: 15_000 }).toBe(1);
    expect(await stillSameDocument(page)).toBe(true);
    await screenshot(page, 'runs');
    await page.getByLabel('Status').selectOption('SUCCEEDED');
    await expect.poll(() => new URL(page.url()).searchParams.get('status')).toBe('SUCCEEDED');
    await expect.poll(() => runs.locator('tbody tr').count()).toBe(2);
    await page.reload();
    await expect.poll(() => runs.locator('tbody tr').count()).toBe(2);
    await page.getByLabel('Status').selectOption('');

    await runs.getByRole('link', { name: `Run ${third.id} of Offer with sign-off` }).click();
    await expect.poll(() => runStatus(page)).toBe('WAITING');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByRole('dialog', { name: 'Cancel run' }).getByRole('button', { name: 'Cancel run' }).click();
    await expect.poll(() => runStatus(page)).toBe('CANCELED');
    expect((await apiCall<Run>(e2e, accessToken, 'GET', `/orgs/${orgId}/runs/${third.id}`)).status).toBe('CANCELED');
    expect(await page.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);

    // A viewer reads all of it and is offered no write action.
    const viewerEmail = `viewer-${Date.now()}@example.com`;
    const registered = await fetch(`${e2e.base}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: viewerEmail, password, name: 'Vic Viewer' }),
    });
    expect(registered.status).toBe(201);
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/members`, { email: viewerEmail, role: 'viewer' });
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/workflows/${workflow.id}/run`, { input: {} });
    const viewer = await e2e.page();
    await signIn(viewer, viewerEmail, password);
    await viewer.goto(`/orgs/${orgId}/workflows/${workflow.id}`);
    await viewer.getByRole('heading', { level: 1, name: 'Offer with sign-off' }).waitFor();
    for (const name of ['Run', 'Deactivate', 'Delete', 'Save']) expect(await viewer.getByRole('button', { name, exact: true }).count()).toBe(0);
    expect(await viewer.getByLabel('Definition (JSON)').getAttribute('readonly')).not.toBeNull();
    await viewer.goto(`/orgs/${orgId}/approvals`);
    await viewer.getByRole('table', { name: 'Approvals' }).getByRole('button', { name: 'View Send the spring offer?' }).click();
    await viewer.getByText('Waiting for a decision by a member of the organization.').waitFor();
    expect(await viewer.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
    expect(email).not.toBe(viewerEmail);
  });
});
