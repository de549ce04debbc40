import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { startSocialStandIn, type StandIn } from '../../../test/social-stand-in.ts';
import { api as workflowApi } from '../../../test/workflows.ts';
import { eventually } from '../../../test/helpers.ts';

let t: TestApp;
let social: StandIn;
let w: ReturnType<typeof workflowApi>;

beforeAll(async () => {
  social = await startSocialStandIn();
  t = await buildTestApp({ env: { LINKEDIN_API_URL: social.url, X_API_URL: social.url, PUBLISH_RETRY_DELAYS_S: '0.05', PUBLISHER_POLL_MS: '50' } });
  w = workflowApi(t);
});
afterAll(async () => {
  await t.close();
  await social.close();
});

describe('content workflow steps', () => {
  it('content.createDraft then content.publish: a dry run in test mode, a real publish otherwise', async () => {
    const integration = (
      await t.call({
        method: 'POST',
        url: `${w.base}/integrations`,
        auth: w.auth,
        payload: { provider: 'x', name: 'X', credentials: { accessToken: 'ok-wf' } },
      })
    ).json();
    const wf = await w.create(
      [
        { id: 'start', type: 'trigger.manual' },
        { id: 'draft', type: 'content.createDraft', params: { platform: 'X', body: '{{ $input.text }}', hashtags: ['#auto'], integrationId: integration.id } },
        { id: 'publish', type: 'content.publish' },
      ],
      [
        { from: 'start', to: 'draft' },
        { from: 'draft', to: 'publish' },
      ],
    );

    const dry = await w.until((await w.run(wf.id, { input: { text: 'From a workflow' }, testMode: true })).id);
    expect(dry.status).toBe('SUCCEEDED');
    const drafted = w.step(dry, 'draft')!.items![0] as { id: string; status: string; createdBy: unknown };
    expect(drafted).toMatchObject({ status: 'DRAFT', createdBy: { type: 'workflow', id: wf.id } });
    expect(w.step(dry, 'publish')!.items![0]).toMatchObject({
      dryRun: true,
      postId: drafted.id,
      platform: 'X',
      provider: 'x',
      text: 'From a workflow\n\n#auto',
      request: { method: 'POST', url: `${social.url}/2/tweets`, body: { text: 'From a workflow\n\n#auto' } },
    });
    expect(JSON.stringify(w.step(dry, 'publish')!.items)).not.toContain('ok-wf');
    const untouched = (await t.call({ method: 'GET', url: `${w.base}/content/${drafted.id}`, auth: w.auth })).json();
    expect(untouched.status).toBe('DRAFT');
    expect(social.postCalls('ok-wf')).toHaveLength(0);

    const real = await w.until((await w.run(wf.id, { input: { text: 'For real' } })).id);
    expect(real.status).toBe('SUCCEEDED');
    const sent = w.step(real, 'publish')!.items![0] as { id: string; status: string; approvedBy: unknown };
    expect(sent).toMatchObject({ status: 'PUBLISHING', approvedBy: { type: 'workflow', id: wf.id } });
    const published = await eventually(async () => {
      const post = (await t.call({ method: 'GET', url: `${w.base}/content/${sent.id}`, auth: w.auth })).json();
      return post.status === 'PUBLISHED' ? post : undefined;
    });
    expect(published.externalId).toBeTruthy();
    expect(social.postCalls('ok-wf')).toHaveLength(1);
  });

  it('content.publish without an integration fails the step with INTEGRATION_MISSING', async () => {
    const wf = await w.create(
      [
        { id: 'start', type: 'trigger.manual' },
        { id: 'draft', type: 'content.createDraft', params: { platform: 'LINKEDIN', body: 'nowhere to go' } },
        { id: 'publish', type: 'content.publish' },
      ],
      [
        { from: 'start', to: 'draft' },
        { from: 'draft', to: 'publish' },
      ],
    );
    const run = await w.until((await w.run(wf.id)).id);
    expect(run.status).toBe('FAILED');
    expect(JSON.stringify(run.error)).toContain('INTEGRATION_MISSING');
  });

  it('the node catalog lists both content steps', async () => {
    const types = (await t.call({ method: 'GET', url: `${w.base}/node-types`, auth: w.auth })).json() as { type: string }[];
    expect(types.map((n) => n.type)).toEqual(expect.arrayContaining(['content.createDraft', 'content.publish']));
  });
});
