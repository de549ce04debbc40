import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { runAgent, waitForRun, type Auth } from '../../../test/agents.ts';

let t: TestApp;
let base: string;
const owner = (): Auth => ({ token: t.orgA.token });

beforeAll(async () => {
  t = await buildTestApp();
  base = `/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  await t.close();
});

async function lead(payload: Record<string, unknown>) {
  return (await t.call({ method: 'POST', url: `${base}/leads`, auth: owner(), payload })).json();
}
const getLead = async (id: string) => (await t.call({ method: 'GET', url: `${base}/leads/${id}`, auth: owner() })).json();
const apply = (reportId: string, index: number, auth: Auth = owner(), orgBase = base) =>
  t.call({ method: 'POST', url: `${orgBase}/reports/${reportId}/apply-recommendation`, auth, payload: { index } });

describe('reports from agents', () => {
  let reportId: string;
  let strongId: string;
  let weakId: string;

  beforeAll(async () => {
    strongId = (await lead({ name: 'Strong', email: 'boss@bigco.example', phone: '+14155550199', company: 'BigCo', website: 'bigco.example', source: 'demo' }))
      .id;
    weakId = (await lead({ email: 'someone@gmail.com' })).id;
    const run = await runAgent(t, t.orgA.orgId, owner(), { type: 'LEAD_QUALIFIER', task: 'Qualify', projectId: t.orgA.projectId });
    reportId = run.reportId;
  });

  it('lists with type and projectId filters, sorts and pages; gets one with its recommendations', async () => {
    await runAgent(t, t.orgA.orgId, owner(), { type: 'REPORT_WRITER', task: 'Digest' });
    const all = (await t.call({ method: 'GET', url: `${base}/reports`, auth: owner() })).json();
    expect(all.total).toBe(2);
    expect(all.items[0].type).toBe('WEEKLY_DIGEST'); // newest first
    const byType = (await t.call({ method: 'GET', url: `${base}/reports`, auth: owner(), query: { type: 'LEAD_QUALIFICATION' } })).json();
    expect(byType.items.map((r: { id: string }) => r.id)).toEqual([reportId]);
    const byProject = (await t.call({ method: 'GET', url: `${base}/reports`, auth: owner(), query: { projectId: t.orgA.projectId } })).json();
    expect(byProject.items.map((r: { id: string }) => r.id)).toEqual([reportId]);
    const paged = (await t.call({ method: 'GET', url: `${base}/reports`, auth: owner(), query: { sort: 'createdAt', pageSize: '1', page: '2' } })).json();
    expect(paged).toMatchObject({ total: 2, page: 2, pageSize: 1 });
    expect(paged.items[0].type).toBe('WEEKLY_DIGEST');
    expect((await t.call({ method: 'GET', url: `${base}/reports`, auth: owner(), query: { type: 'NOPE' } })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: `${base}/reports`, auth: owner(), query: { sort: 'body' } })).statusCode).toBe(400);
    const report = (await t.call({ method: 'GET', url: `${base}/reports/${reportId}`, auth: owner() })).json();
    expect(report).toMatchObject({
      id: reportId,
      type: 'LEAD_QUALIFICATION',
      projectId: t.orgA.projectId,
      agentType: 'LEAD_QUALIFIER',
      title: expect.any(String),
      summary: expect.any(String),
      metrics: { evaluated: 2 },
    });
    expect(report.recommendations.map((r: { index: number }) => r.index)).toEqual([0, 1, 2]);
    for (const r of report.recommendations) expect(r.appliedAt).toBeUndefined();
  });

  it('applies tag_leads for real; a second apply is 409; an index out of range is 404', async () => {
    const res = await apply(reportId, 0);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.recommendation).toMatchObject({ index: 0, action: { type: 'tag_leads' }, appliedAt: expect.any(String) });
    expect(body.result).toEqual({ action: 'tag', matched: 1, updated: 1 });
    expect(body.report.recommendations[0].appliedAt).toBe(body.recommendation.appliedAt);
    expect((await getLead(strongId)).tags).toContain('hot');
    const again = await apply(reportId, 0);
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('CONFLICT');
    expect((await apply(reportId, 3)).statusCode).toBe(404);
    expect((await t.call({ method: 'POST', url: `${base}/reports/${reportId}/apply-recommendation`, auth: owner(), payload: { index: -1 } })).statusCode).toBe(
      400,
    );
  });

  it('applies set_lead_status and tag_leads on the weak leads', async () => {
    expect((await apply(reportId, 1)).json().result).toEqual({ action: 'setStatus', matched: 1, updated: 1 });
    expect((await getLead(strongId)).status).toBe('CONTACTED');
    await apply(reportId, 2);
    expect((await getLead(weakId)).tags).toContain('needs-enrichment');
  });

  it('applies run_agent: a new agent run starts', async () => {
    await lead({ name: 'Fresh', email: 'fresh@newco.example', company: 'NewCo' });
    const research = await runAgent(t, t.orgA.orgId, owner(), { type: 'MARKET_ANALYST', task: 'Market' });
    const report = (await t.call({ method: 'GET', url: `${base}/reports/${research.reportId}`, auth: owner() })).json();
    const index = report.recommendations.findIndex((r: { action: { type: string } }) => r.action.type === 'run_agent');
    expect(index).toBeGreaterThanOrEqual(0);
    const res = await apply(research.reportId, index);
    expect(res.statusCode).toBe(200);
    const started = res.json().result;
    expect(started).toMatchObject({ id: expect.stringMatching(/^arun_/), type: 'LEAD_QUALIFIER' });
    expect((await waitForRun(t, t.orgA.orgId, started.id, owner())).status).toBe('succeeded');
  });

  it('applies create_draft (content module) and start_workflow (workflow engine)', async () => {
    const plan = await runAgent(t, t.orgA.orgId, owner(), {
      type: 'CONTENT_WRITER',
      task: 'Plan only',
      input: { topic: 'customer stories', platforms: ['LINKEDIN'], draft: false },
    });
    const report = (await t.call({ method: 'GET', url: `${base}/reports/${plan.reportId}`, auth: owner() })).json();
    expect(report.recommendations[0].action).toMatchObject({ type: 'create_draft', params: { platform: 'LINKEDIN' } });
    const drafted = (await apply(plan.reportId, 0)).json();
    expect(drafted.result).toMatchObject({ id: expect.stringMatching(/^post_/), status: 'DRAFT', platform: 'LINKEDIN' });
    expect((await t.call({ method: 'GET', url: `${base}/content/${drafted.result.id}`, auth: owner() })).statusCode).toBe(200);

    const workflow = await t.call({
      method: 'POST',
      url: `${base}/workflows`,
      auth: owner(),
      payload: { name: 'Follow up', nodes: [{ id: 'start', type: 'trigger.manual' }], edges: [] },
    });
    expect(workflow.statusCode).toBe(201);
    const saved = await t.app.services.reports.create({
      orgId: t.orgA.orgId,
      projectId: null,
      type: 'CAMPAIGN_PLAN',
      title: 'Campaign',
      summary: 'Start the follow-up',
      recommendations: [
        { title: 'Start the follow-up workflow', action: { type: 'start_workflow', params: { workflowId: workflow.json().id, input: { reason: 'report' } } } },
      ],
    });
    const started = (await apply(saved.id, 0)).json();
    expect(started.result).toMatchObject({ id: expect.stringMatching(/^run_/), workflowId: workflow.json().id });
    const run = (await t.call({ method: 'GET', url: `${base}/runs/${started.result.id}`, auth: owner() })).json();
    expect(run.input).toEqual({ reason: 'report' });
  });

  it('a failing action leaves the recommendation applicable', async () => {
    const saved = await t.app.services.reports.create({
      orgId: t.orgA.orgId,
      projectId: null,
      type: 'GENERAL',
      title: 'Broken',
      summary: 'Points at a missing workflow',
      recommendations: [{ title: 'Start', action: { type: 'start_workflow', params: { workflowId: 'wf_missing' } } }],
    });
    expect((await apply(saved.id, 0)).statusCode).toBe(404);
    const report = (await t.call({ method: 'GET', url: `${base}/reports/${saved.id}`, auth: owner() })).json();
    expect(report.recommendations[0].appliedAt).toBeUndefined();
  });

  it('refuses reports with actions that cannot be executed', async () => {
    await expect(
      t.app.services.reports.create({
        orgId: t.orgA.orgId,
        projectId: null,
        type: 'GENERAL',
        title: 'Bad',
        summary: 'x',
        recommendations: [{ title: 'Launch rockets', action: { type: 'launch_rockets', params: {} } }],
      }),
    ).rejects.toThrow(/Unknown action type/);
    await expect(
      t.app.services.reports.create({
        orgId: t.orgA.orgId,
        projectId: null,
        type: 'GENERAL',
        title: 'Bad',
        summary: 'x',
        recommendations: [{ title: 'Tag', action: { type: 'tag_leads', params: { leadIds: [] } } }],
      }),
    ).rejects.toThrow(/tag_leads/);
  });

  it("another organization's reports are 404; scopes and roles are enforced", async () => {
    const asB = { token: t.orgB.token };
    expect((await t.call({ method: 'GET', url: `${base}/reports/${reportId}`, auth: asB })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/reports/${reportId}`, auth: asB })).statusCode).toBe(404);
    expect((await apply(reportId, 2, asB, `/api/v1/orgs/${t.orgB.orgId}`)).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/reports`, auth: asB })).json().total).toBe(0);
    const reader = await t.key(t.orgA.orgId, ['reports:read']);
    expect((await t.call({ method: 'GET', url: `${base}/reports/${reportId}`, auth: { apiKey: reader } })).statusCode).toBe(200);
    const denied = await apply(reportId, 2, { apiKey: reader });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('INSUFFICIENT_SCOPE');
    const agentsOnly = await t.key(t.orgA.orgId, ['agents:read']);
    expect((await t.call({ method: 'GET', url: `${base}/reports`, auth: { apiKey: agentsOnly } })).statusCode).toBe(403);
    const viewer = await t.member(t.orgA.orgId, 'viewer');
    expect((await t.call({ method: 'GET', url: `${base}/reports`, auth: { token: viewer.token } })).statusCode).toBe(200);
    expect((await apply(reportId, 2, { token: viewer.token })).statusCode).toBe(403);
  });
});
