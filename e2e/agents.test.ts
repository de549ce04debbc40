import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelServer } from '../test/model-server.ts';
import { apiCall, browserAvailable, screenshot, signIn, signUp, startE2E, type E2E } from './harness.ts';

let e2e: E2E;
/** A real OpenAI-compatible model server on loopback: slow or held answers make a run's steps observable one by one. */
const model = new ModelServer();
beforeAll(async () => {
  if (!browserAvailable) return;
  const modelUrl = await model.start();
  // The offline model costs nothing by default; a price makes the cost figures and charts non-zero.
  e2e = await startE2E({
    MODEL_PRICES: JSON.stringify({ offline: { inputPerMTok: 40, outputPerMTok: 120 }, 'openai-compatible:slow': { inputPerMTok: 1, outputPerMTok: 2 } }),
    OPENAI_COMPATIBLE_BASE_URL: modelUrl,
    OPENAI_COMPATIBLE_API_KEY: 'loopback',
  });
});
afterAll(async () => {
  await e2e?.close();
  await model.stop();
});

async function arrangeLeads(token: string, orgId: string): Promise<string[]> {
  const ids: string[] = [];
  for (const [name, source] of [
    ['Ada Lovelace', 'fair'],
    ['Grace Hopper', 'fair'],
    ['Alan Turing', 'fair'],
    ['Edsger Dijkstra', 'website'],
  ] as const) {
    const lead = await apiCall<{ id: string }>(e2e, token, 'POST', `/orgs/${orgId}/leads`, {
      name,
      email: `${name.split(' ')[0]!.toLowerCase()}@example.com`,
      source,
    });
    ids.push(lead.id);
  }
  return ids;
}

async function waitForRun(token: string, orgId: string, runId: string): Promise<{ status: string }> {
  let run: { status: string } = { status: 'QUEUED' };
  await expect
    .poll(
      async () => {
        run = await apiCall<{ status: string }>(e2e, token, 'GET', `/orgs/${orgId}/runs/${runId}`);
        return ['SUCCEEDED', 'FAILED', 'CANCELED'].includes(run.status);
      },
      { timeout: 30_000 },
    )
    .toBe(true);
  return run;
}

describe.runIf(browserAvailable)('agents and reports in the panel', () => {
  it('runs an agent with the offline model and watches its steps arrive, then opens its report and applies a recommendation', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    await arrangeLeads(accessToken, orgId);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
    await page.getByText('No agent runs yet').waitFor();

    await page.getByRole('button', { name: 'Run an agent' }).click();
    const dialog = page.getByRole('dialog', { name: 'Run an agent' });
    await dialog.getByLabel('Type').selectOption('MARKET_ANALYST');
    expect(await dialog.getByLabel('Model').inputValue()).toBe('offline');
    await dialog.getByLabel('Task').fill('Where do our leads come from, and what next?');
    await dialog.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/agents\/runs\/arun_/);

    const steps = page.getByRole('list', { name: 'Steps' });
    await steps.getByText('Calls lead_stats').waitFor();
    await steps.getByText('Calls create_report').waitFor();
    await page.getByText('Succeeded', { exact: true }).waitFor();
    const result = page.getByRole('region', { name: 'Result' });
    await result.getByText(/4 leads in the pipeline/).waitFor();
    // Each step once, in order, as the run record has them.
    const runId = new URL(page.url()).pathname.split('/').pop()!;
    const record = await apiCall<{ steps: { index: number }[]; usage: { costUsd: number } }>(e2e, accessToken, 'GET', `/orgs/${orgId}/agent-runs/${runId}`);
    await expect.poll(() => steps.getByRole('listitem').count()).toBe(record.steps.length);
    const usage = page.getByRole('region', { name: 'Cost and usage' });
    expect(await usage.getByText(`${record.steps.length} of at most`).isVisible()).toBe(true);
    expect(record.usage.costUsd).toBeGreaterThan(0);
    await screenshot(page, 'agent-run');

    // The report it wrote: metrics and recommendations; apply one and see what it did.
    await result.getByRole('link', { name: 'Open the report' }).click();
    await page.getByRole('heading', { level: 1, name: /Market research/ }).waitFor();
    const metrics = page.getByRole('region', { name: 'Metrics' });
    await metrics.getByText('Total leads').waitFor();
    const recommendation = page.getByRole('listitem', { name: 'Start a dedicated campaign for the "fair" channel' });
    await recommendation.getByText('Adds the tag campaign-fair to 3 leads.').waitFor();
    await recommendation.getByRole('button', { name: /^Apply/ }).click();
    const confirm = page.getByRole('dialog', { name: 'Apply this recommendation?' });
    await confirm.getByRole('button', { name: 'Apply recommendation' }).click();
    await recommendation.getByRole('status').getByText('3 of 3 leads updated.').waitFor();
    await recommendation.getByText(/^Applied/).waitFor();
    const tagged = await apiCall<{ total: number }>(e2e, accessToken, 'GET', `/orgs/${orgId}/leads?tags=campaign-fair`);
    expect(tagged.total).toBe(3);
    await screenshot(page, 'report-detail');
    // Its link leads to the leads it changed.
    await recommendation.getByRole('link', { name: 'See the leads' }).click();
    await page.waitForURL(/\/leads\?tags=campaign-fair/);
    await expect.poll(() => page.getByRole('table', { name: 'Leads' }).locator('tbody tr').count()).toBe(3);

    // The reports list, filtered by type in the URL.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Reports' }).click();
    const reports = page.getByRole('table', { name: 'Reports' });
    await reports.getByRole('link', { name: /Market research/ }).waitFor();
    await page.getByLabel('Type').selectOption('WEEKLY_DIGEST');
    await expect.poll(() => new URL(page.url()).searchParams.get('type')).toBe('WEEKLY_DIGEST');
    await page.getByText('No reports match these filters').waitFor();
    await page.getByLabel('Type').selectOption('MARKET_RESEARCH');
    await reports.getByRole('link', { name: /Market research/ }).waitFor();
    await page.reload();
    await reports.getByRole('link', { name: /Market research/ }).waitFor();
    expect(await page.getByLabel('Type').inputValue()).toBe('MARKET_RESEARCH');
    await screenshot(page, 'reports');

    // A viewer reads the same pages without a single write action.
    const viewer = { email: `viewer${Date.now()}@example.com`, password: 'correct horse battery staple' };
    const registered = await fetch(`${e2e.base}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(viewer),
    });
    expect(registered.status).toBe(201);
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/members`, { email: viewer.email, role: 'viewer' });
    const reportId = new URL(await reports.getByRole('link', { name: /Market research/ }).evaluate((a) => (a as HTMLAnchorElement).href)).pathname
      .split('/')
      .pop()!;
    const viewerPage = await e2e.page();
    await signIn(viewerPage, viewer.email, viewer.password);
    await viewerPage.goto(`/orgs/${orgId}/reports/${reportId}`);
    await viewerPage.getByRole('listitem', { name: 'Qualify the 4 new leads' }).waitFor();
    expect(await viewerPage.getByRole('button', { name: /^Apply/ }).count()).toBe(0);
    await viewerPage.goto(`/orgs/${orgId}/agents/runs/${runId}`);
    await viewerPage.getByText('Succeeded', { exact: true }).waitFor();
    await viewerPage.goto(`/orgs/${orgId}/agents`);
    await viewerPage.getByRole('table', { name: 'Agent runs' }).waitFor();
    expect(await viewerPage.getByRole('button', { name: 'Run an agent' }).count()).toBe(0);
    expect(await viewerPage.getByRole('button', { name: 'New agent' }).count()).toBe(0);
    await viewerPage.goto(`/orgs/${orgId}/usage`);
    await viewerPage.getByText('Owners and admins set the monthly budget.', { exact: false }).waitFor();
    expect(await viewerPage.getByRole('button', { name: 'Save budget' }).count()).toBe(0);
  });

  it('shows the steps of a running agent as they happen, with its cost, and cancels it', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    await arrangeLeads(accessToken, orgId);
    // The model thinks for a moment, asks for the pipeline figures, then keeps the next call open.
    const before = model.requests.length;
    model.script = (_request, index) =>
      index === before
        ? {
            reasoning: 'Reading the pipeline figures first.',
            toolCalls: [{ name: 'lead_stats', arguments: {} }],
            delayMs: 1500,
            usage: { prompt: 1200, completion: 300 },
          }
        : { hold: true };

    await page.goto(`/orgs/${orgId}/agents`);
    await page.getByRole('button', { name: 'Run an agent' }).click();
    const dialog = page.getByRole('dialog', { name: 'Run an agent' });
    await dialog.getByLabel('Type').selectOption('MARKET_ANALYST');
    await dialog.getByLabel('Model').fill('openai-compatible:slow');
    await dialog.getByLabel('Task').fill('Size up the pipeline');
    const stream = page.waitForResponse((r) => /\/agent-runs\/arun_[^/]+\/events/.test(r.url()));
    await dialog.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/agents\/runs\/arun_/);
    expect((await stream).headers()['content-type']).toContain('text/event-stream');

    // The page is connected before the model has answered: the steps come over the stream.
    const steps = page.getByRole('list', { name: 'Steps' });
    await steps.getByText('Reading the pipeline figures first.').waitFor();
    await steps.getByText('Calls lead_stats').waitFor();
    await steps.getByText(/lead_stats answered/).waitFor();
    await page.getByText(/^Live · \d+ steps so far$/).waitFor();
    await page.getByText('Running', { exact: true }).waitFor();
    await model.waitForHeld();
    const heldIndex = model.requests.length - 1;
    // Usage of the first model call, while the second is in flight.
    const usage = page.getByRole('region', { name: 'Cost and usage' });
    await expect.poll(() => usage.getByText('1,200').count()).toBe(1);
    await screenshot(page, 'agent-run-live');

    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByText('Canceled', { exact: true }).waitFor();
    await expect.poll(() => model.aborted.includes(heldIndex)).toBe(true);
    expect(await page.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
    const runId = new URL(page.url()).pathname.split('/').pop()!;
    expect((await apiCall<{ status: string }>(e2e, accessToken, 'GET', `/orgs/${orgId}/agent-runs/${runId}`)).status).toBe('canceled');
  });

  it('saves an agent, edits it, runs it, and lists the runs with filters in the URL', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    await arrangeLeads(accessToken, orgId);
    await page.goto(`/orgs/${orgId}/agents?view=agents`);
    await page.getByText('No saved agents yet').waitFor();

    await page.getByRole('button', { name: 'New agent' }).first().click();
    const create = page.getByRole('dialog', { name: 'New agent' });
    await create.getByLabel('Name').fill('Weekly digest');
    await create.getByLabel('Type').selectOption('REPORT_WRITER');
    await create.getByLabel('Instructions').fill('Keep it short.');
    await create.getByLabel('Step limit').fill('99');
    await create.getByRole('button', { name: 'Create agent' }).click();
    // The API's message for the field, next to it.
    await create.getByText(/must be <= 50|at most 50/).waitFor();
    await create.getByLabel('Step limit').fill('8');
    await create.getByRole('button', { name: 'Create agent' }).click();
    const table = page.getByRole('table', { name: 'Saved agents' });
    await table.getByText('Weekly digest').waitFor();

    await table.getByRole('button', { name: 'Edit Weekly digest' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Weekly digest' });
    await edit.getByLabel('Name').fill('Monday digest');
    await edit.getByRole('button', { name: 'Save agent' }).click();
    await table.getByText('Monday digest').waitFor();

    await table.getByRole('button', { name: 'Run Monday digest' }).click();
    const run = page.getByRole('dialog', { name: 'Run an agent' });
    expect(await run.getByLabel('Saved agent').inputValue()).toMatch(/^agt_/);
    await run.getByLabel('Task').fill('Write the digest of the week');
    await run.getByRole('button', { name: 'Start run' }).click();
    await page.waitForURL(/\/agents\/runs\/arun_/);
    await page.getByText('Succeeded', { exact: true }).waitFor();
    await page.getByRole('region', { name: 'Result' }).getByRole('link', { name: 'Open the report' }).waitFor();

    // A second, ad-hoc run, then the history: both, and a status filter kept in the URL.
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/agents/run`, { type: 'MARKET_ANALYST', task: 'Pipeline check', modelId: 'offline' });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
    const history = page.getByRole('table', { name: 'Agent runs' });
    await history.getByRole('link', { name: 'Write the digest of the week' }).waitFor();
    await history.getByRole('link', { name: 'Pipeline check' }).waitFor();
    await expect.poll(() => history.getByText('Succeeded').count(), { timeout: 30_000 }).toBe(2);
    await page.getByLabel('Type').selectOption('REPORT_WRITER');
    await expect.poll(() => new URL(page.url()).searchParams.get('type')).toBe('REPORT_WRITER');
    await expect.poll(() => history.locator('tbody tr').count()).toBe(1);
    await page.reload();
    await expect.poll(() => history.locator('tbody tr').count()).toBe(1);
    await history.getByRole('link', { name: 'Write the digest of the week' }).waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => history.locator('tbody tr').count()).toBe(2);
    await screenshot(page, 'agents');
  });

  it('shows the dashboard charts and the usage by group, and lets the owner set the monthly budget', async () => {
    const page = await e2e.page();
    const { orgId, accessToken } = await signUp(e2e, page);
    const leads = await arrangeLeads(accessToken, orgId);
    await apiCall(e2e, accessToken, 'PATCH', `/orgs/${orgId}/leads/${leads[0]}`, { status: 'QUALIFIED' });
    const ok = await apiCall<{ id: string }>(e2e, accessToken, 'POST', `/orgs/${orgId}/workflows`, {
      name: 'Mark',
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'set', type: 'data.set', params: { fields: { done: true } } },
      ],
      edges: [{ from: 'start', to: 'set' }],
    });
    const failing = await apiCall<{ id: string }>(e2e, accessToken, 'POST', `/orgs/${orgId}/workflows`, {
      name: 'Call a closed port',
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'call', type: 'utility.httpRequest', params: { method: 'GET', url: 'http://127.0.0.1:9/' } },
      ],
      edges: [{ from: 'start', to: 'call' }],
    });
    for (const wf of [ok, ok, failing]) {
      const r = await apiCall<{ id: string }>(e2e, accessToken, 'POST', `/orgs/${orgId}/workflows/${wf.id}/run`, { input: {} });
      await waitForRun(accessToken, orgId, r.id);
    }
    const agentRun = await apiCall<{ id: string }>(e2e, accessToken, 'POST', `/orgs/${orgId}/agents/run`, {
      type: 'MARKET_ANALYST',
      task: 'Pipeline check',
      modelId: 'offline',
    });
    await expect
      .poll(async () => (await apiCall<{ status: string }>(e2e, accessToken, 'GET', `/orgs/${orgId}/agent-runs/${agentRun.id}`)).status, { timeout: 30_000 })
      .toBe('succeeded');

    // The budget, set by the owner on the usage page.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
    await page.getByText('spent, no monthly budget').waitFor();
    await page.getByLabel('Monthly budget (USD)').fill('2.5');
    await page.getByRole('button', { name: 'Save budget' }).click();
    await page.getByText('Budget saved.').waitFor();
    await page.getByRole('meter', { name: 'Monthly budget used' }).waitFor();
    expect((await apiCall<{ monthlyLimitUsd: number }>(e2e, accessToken, 'GET', `/orgs/${orgId}/budget`)).monthlyLimitUsd).toBe(2.5);

    // Usage by model, then by agent type (in the URL).
    await page.getByRole('table', { name: 'Usage by model' }).getByText('offline').waitFor();
    await page.getByLabel('Group by').selectOption('agentType');
    await expect.poll(() => new URL(page.url()).searchParams.get('groupBy')).toBe('agentType');
    const byType = page.getByRole('table', { name: 'Usage by agent type' });
    await byType.getByText('Market analyst').waitFor();
    expect(await page.getByRole('figure', { name: 'Cost by agent type' }).locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    await screenshot(page, 'usage');

    // The dashboard: the figures as charts over the range in the URL.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dashboard' }).click();
    const totals = page.getByRole('region', { name: 'Totals' });
    const total = (label: string) => totals.getByText(label).locator('xpath=following-sibling::p[1]');
    await expect.poll(() => total('Leads created').innerText(), { timeout: 30_000 }).toBe('4');
    await expect.poll(() => total('Leads qualified').innerText(), { timeout: 30_000 }).toBe('1');
    await expect.poll(() => total('Runs succeeded').innerText(), { timeout: 30_000 }).toBe('2');
    await expect.poll(() => total('Runs failed').innerText(), { timeout: 30_000 }).toBe('1');
    expect(await total('AI cost').innerText()).toMatch(/^\$0\.\d*[1-9]/);
    for (const chart of ['Leads', 'Workflow runs']) {
      await expect.poll(() => page.getByRole('figure', { name: chart }).locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    }
    await expect.poll(() => page.getByRole('figure', { name: 'AI cost' }).locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    await page.getByRole('figure', { name: 'Posts published' }).getByText('Nothing in this range yet.').waitFor();
    await page.getByRole('meter', { name: 'Monthly budget used' }).waitFor();

    await page.getByRole('group', { name: 'Range' }).getByRole('button', { name: '7 days' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('range')).toBe('7d');
    await expect.poll(() => total('Leads created').innerText()).toBe('4');
    await page.reload();
    expect(await page.getByRole('group', { name: 'Range' }).getByRole('button', { name: '7 days' }).getAttribute('aria-pressed')).toBe('true');

    // A lead created now shows up without a reload (the organization stream).
    await apiCall(e2e, accessToken, 'POST', `/orgs/${orgId}/leads`, { name: 'Barbara Liskov', email: 'barbara@example.com' });
    await expect.poll(() => total('Leads created').innerText(), { timeout: 15_000 }).toBe('5');
    await screenshot(page, 'dashboard');
  });
});
