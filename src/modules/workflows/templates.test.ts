import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { api } from '../../../test/workflows.ts';

// Built-in templates are real workflows: used as they ship, they run on the offline model.
let t: TestApp;
let w: ReturnType<typeof api>;
beforeAll(async () => {
  t = await buildTestApp();
  w = api(t);
});
afterAll(async () => {
  await t.close();
});

async function use(templateId: string) {
  const res = await t.call({
    method: 'POST',
    url: `${w.base}/templates/${templateId}/use`,
    auth: w.auth,
    payload: { name: templateId, projectId: t.orgA.projectId },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string };
}

describe('templates run as shipped', () => {
  it('approve-then-publish: the agent drafts, a person approves, the drafted post is published (dry run in test mode)', async () => {
    const wf = await use('approve-then-publish-linkedin');
    const integration = await t.call({
      method: 'POST',
      url: `${w.base}/integrations`,
      auth: w.auth,
      payload: { provider: 'linkedin', name: 'Company page', credentials: { accessToken: 'token-123', author: 'urn:li:organization:1' } },
    });
    expect(integration.statusCode, integration.body).toBe(201);
    const run = await w.run(wf.id, { input: { topic: 'Spring webinar on lead scoring', integrationId: integration.json().id }, testMode: true });
    const waiting = await w.until(run.id, ['WAITING', 'FAILED'], 30_000);
    expect(waiting.status, JSON.stringify(waiting.error)).toBe('WAITING');
    const draftItem = w.step(waiting, 'draft')!.items![0] as { postIds: string[] };
    expect(draftItem.postIds.length).toBeGreaterThan(0);
    const post = (await t.call({ method: 'GET', url: `${w.base}/content/${draftItem.postIds[0]}`, auth: w.auth })).json();
    expect(post).toMatchObject({ platform: 'LINKEDIN', status: 'DRAFT' });
    const approvals = (await t.call({ method: 'GET', url: `${w.base}/approvals`, auth: w.auth, query: { status: 'PENDING' } })).json();
    const approval = approvals.items.find((a: { runId: string }) => a.runId === run.id);
    expect(approval).toMatchObject({ title: 'Publish this LinkedIn post?', status: 'PENDING' });
    expect((await t.call({ method: 'POST', url: `${w.base}/approvals/${approval.id}/approve`, auth: w.auth, payload: {} })).statusCode).toBe(200);
    const done = await w.until(run.id, undefined, 30_000);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(w.step(done, 'publish')!.items![0]).toMatchObject({
      dryRun: true,
      platform: 'LINKEDIN',
      provider: 'linkedin',
      integrationId: integration.json().id,
    });
    // Test mode changed nothing: the draft is still a draft.
    expect((await t.call({ method: 'GET', url: `${w.base}/content/${draftItem.postIds[0]}`, auth: w.auth })).json().status).toBe('DRAFT');
  });

  it('qualify-new-leads-with-ai: a new lead is scored and re-statused by the event-triggered workflow', async () => {
    await use('qualify-new-leads-with-ai');
    const lead = (
      await t.call({
        method: 'POST',
        url: `${w.base}/leads`,
        auth: w.auth,
        payload: { name: 'Template Lead', email: 'cto@bigcorp.example', company: 'BigCorp', website: 'bigcorp.example', phone: '+14155550111' },
      })
    ).json();
    const { eventually } = await import('../../../test/helpers.ts');
    const updated = await eventually(async () => {
      const got = (await t.call({ method: 'GET', url: `${w.base}/leads/${lead.id}`, auth: w.auth })).json();
      return ['QUALIFIED', 'UNQUALIFIED'].includes(got.status) ? got : null;
    }, 30_000);
    expect(typeof updated.score).toBe('number');
  });
});
