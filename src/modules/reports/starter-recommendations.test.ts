import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type OrgFixture, type TestApp } from '../../../test/harness.ts';
import { ModelServer, type ChatRequest, type Reply } from '../../../test/model-server.ts';
import { runAgent, waitForRun, type Auth } from '../../../test/agents.ts';
import { eventually } from '../../../test/helpers.ts';

const MODEL = 'openai-compatible:scripted';

/** A model that writes the digest and recommends nothing, as one did on an organization with little data. */
function terseDigest(request: ChatRequest): Reply {
  const names = ModelServer.toolResults(request).map((r) => r.name);
  if (!names.includes('lead_stats')) return { toolCalls: [{ name: 'lead_stats', arguments: {} }] };
  if (!names.includes('create_report')) {
    return {
      toolCalls: [{ name: 'create_report', arguments: { type: 'WEEKLY_DIGEST', title: 'Quiet week', summary: 'No leads yet, nothing to follow up.' } }],
    };
  }
  return { content: 'Digest written.' };
}

let server: ModelServer;
let t: TestApp;

beforeAll(async () => {
  server = new ModelServer();
  server.script = terseDigest;
  t = await buildTestApp({
    env: { OPENAI_COMPATIBLE_BASE_URL: await server.start(), MODEL_PRICES: JSON.stringify({ [MODEL]: { inputPerMTok: 0, outputPerMTok: 0 } }) },
  });
});
afterAll(async () => {
  await t.close();
  await server.stop();
});

const auth = (org: OrgFixture): Auth => ({ token: org.token });
const orgBase = (org: OrgFixture) => `/api/v1/orgs/${org.orgId}`;
const getReport = async (org: OrgFixture, id: string) => (await t.call({ method: 'GET', url: `${orgBase(org)}/reports/${id}`, auth: auth(org) })).json();
const apply = (org: OrgFixture, reportId: string, index: number) =>
  t.call({ method: 'POST', url: `${orgBase(org)}/reports/${reportId}/apply-recommendation`, auth: auth(org), payload: { index } });
type Rec = { index: number; title: string; action: { type: string; params: Record<string, unknown> } };

describe('a report on an organization with little data still has a recommendation to apply', () => {
  it('model path: the model recommends nothing; the report carries first steps, and capturing leads works end to end', async () => {
    const org = t.orgB;
    const run = await runAgent(t, org.orgId, auth(org), { type: 'REPORT_WRITER', task: 'Weekly digest', modelId: MODEL });
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    const report = await getReport(org, run.reportId);
    expect(report.title).toBe('Quiet week');
    expect(report.recommendations.length).toBeGreaterThanOrEqual(1);
    const capture = (report.recommendations as Rec[]).find(
      (r) => r.action.type === 'use_template' && r.action.params.templateId === 'capture-leads-from-webhook',
    );
    expect(capture, JSON.stringify(report.recommendations)).toBeDefined();

    const applied = await apply(org, report.id, capture!.index);
    expect(applied.statusCode, applied.body).toBe(200);
    const workflow = applied.json().result;
    expect(workflow).toMatchObject({
      id: expect.stringMatching(/^wf_/),
      templateId: 'capture-leads-from-webhook',
      active: true,
      webhookUrl: expect.any(String),
    });
    // The secret URL goes to the caller once, not into the stored report.
    expect(applied.json().recommendation.result).not.toHaveProperty('webhookUrl');
    expect(JSON.stringify(await getReport(org, report.id))).not.toContain(workflow.webhookToken);

    // A form submission through the new workflow becomes the lead the next report can talk about.
    const hook = await t.call({
      method: 'POST',
      url: new URL(workflow.webhookUrl).pathname,
      payload: { name: 'Ada', email: 'ada@firstlead.example', company: 'First Lead' },
    });
    expect(hook.statusCode).toBe(202);
    const leads = await eventually(async () => {
      const list = (await t.call({ method: 'GET', url: `${orgBase(org)}/leads`, auth: auth(org) })).json();
      // Items, not the total: the list counts and reads in two statements.
      return list.items?.length === 1 ? list : undefined;
    });
    expect(leads.items[0]).toMatchObject({ email: 'ada@firstlead.example', source: 'webhook', tags: ['inbound'] });

    // The next quiet report does not recommend capturing again; it moves on to the new lead.
    const next = await getReport(org, (await runAgent(t, org.orgId, auth(org), { type: 'REPORT_WRITER', task: 'Weekly digest', modelId: MODEL })).reportId);
    const types = (next.recommendations as Rec[]).map((r) => `${r.action.type}:${r.action.params.templateId ?? r.action.params.type}`);
    expect(types).not.toContain('use_template:capture-leads-from-webhook');
    expect(types).toContain('run_agent:LEAD_QUALIFIER');
  });

  it("deterministic path: an empty organization's digest has recommendations, and each one applies", async () => {
    const org = t.orgA;
    const run = await runAgent(t, org.orgId, auth(org), { type: 'REPORT_WRITER', task: 'Weekly digest', projectId: org.projectId });
    expect(run.status).toBe('succeeded');
    const report = await getReport(org, run.reportId);
    expect(report.metrics).toMatchObject({ totalLeads: 0 });
    const recs = report.recommendations as Rec[];
    expect(recs.length).toBeGreaterThanOrEqual(1);
    for (const rec of recs) {
      const res = await apply(org, report.id, rec.index);
      expect(res.statusCode, `${rec.title}: ${res.body}`).toBe(200);
      expect(res.json().recommendation.appliedAt).toEqual(expect.any(String));
      if (rec.action.type === 'use_template') {
        const wf = (await t.call({ method: 'GET', url: `${orgBase(org)}/workflows/${res.json().result.id}`, auth: auth(org) })).json();
        expect(wf).toMatchObject({ templateId: rec.action.params.templateId, projectId: org.projectId });
      }
      if (rec.action.type === 'run_agent') expect((await waitForRun(t, org.orgId, res.json().result.id, auth(org))).status).toBe('succeeded');
    }
  });

  it('a recommendation to use an unknown template is refused when the report is saved', async () => {
    await expect(
      t.app.services.reports.create({
        orgId: t.orgA.orgId,
        projectId: null,
        type: 'GENERAL',
        title: 'Bad',
        summary: 'x',
        recommendations: [{ title: 'Use it', action: { type: 'use_template', params: { templateId: 'no-such-template' } } }],
      }),
    ).rejects.toThrow(/no template "no-such-template"/);
  });
});
