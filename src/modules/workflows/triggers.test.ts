import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { api } from '../../../test/workflows.ts';
import { eventually } from '../../../test/helpers.ts';

let t: TestApp;
let w: ReturnType<typeof api>;

beforeAll(async () => {
  t = await buildTestApp({ env: { WORKFLOW_POLL_MS: '100' } });
  w = api(t);
});
afterAll(async () => {
  await t.close();
});

async function runsOf(workflowId: string, org = t.orgA) {
  const res = await t.call({ method: 'GET', url: `/api/v1/orgs/${org.orgId}/runs`, query: { workflowId, sort: 'createdAt' }, auth: { token: org.token } });
  return res.json().items as { id: string; status: string; input: Record<string, unknown>; trigger: Record<string, unknown> }[];
}

describe('trigger.event', () => {
  it('platform events of the organization start active workflows listening for them, with the envelope as input', async () => {
    const wf = await w.create(
      [
        { id: 'on', type: 'trigger.event', params: { events: ['lead.created'] } },
        { id: 'tag', type: 'leads.update', params: { leadId: '{{ payload.lead.id }}', tags: ['welcomed'] } },
      ],
      [{ from: 'on', to: 'tag' }],
    );
    const inactive = await w.create([{ id: 'on', type: 'trigger.event', params: { events: ['lead.created'] } }], [], { active: false });
    const otherProject = (await t.call({ method: 'POST', url: `${w.base}/projects`, auth: w.auth, payload: { name: 'Elsewhere' } })).json();
    const scoped = await w.create([{ id: 'on', type: 'trigger.event', params: { events: ['lead.created'] } }], [], { projectId: otherProject.id });
    const inB = await t.call({
      method: 'POST',
      url: `/api/v1/orgs/${t.orgB.orgId}/workflows`,
      auth: { token: t.orgB.token },
      payload: { name: 'b', nodes: [{ id: 'on', type: 'trigger.event', params: { events: ['lead.created'] } }], edges: [] },
    });

    const lead = (await t.call({ method: 'POST', url: `${w.base}/leads`, auth: w.auth, payload: { name: 'Evt', email: 'evt@example.com' } })).json();
    const [run] = await eventually(async () => {
      const list = await runsOf(wf.id);
      return list.length && list[0]!.status === 'SUCCEEDED' ? list : null;
    });
    expect(run!.input).toMatchObject({ type: 'lead.created', organizationId: t.orgA.orgId, payload: { lead: { id: lead.id } } });
    expect(run!.trigger).toMatchObject({ type: 'event', eventType: 'lead.created' });
    const after = (await t.call({ method: 'GET', url: `${w.base}/leads/${lead.id}`, auth: w.auth })).json();
    expect(after.tags).toContain('welcomed');
    await new Promise((r) => setTimeout(r, 200));
    expect(await runsOf(inactive.id)).toHaveLength(0);
    expect(await runsOf(scoped.id)).toHaveLength(0);
    expect(await runsOf(inB.json().id, t.orgB)).toHaveLength(0);
    // The leads.update it made emitted lead.updated, not lead.created: exactly one run.
    expect(await runsOf(wf.id)).toHaveLength(1);
  });
});

describe('trigger.schedule', () => {
  it('fires on its cron in its time zone; deactivating stops it', async () => {
    const wf = await w.create([{ id: 'tick', type: 'trigger.schedule', params: { cron: '* * * * * *', timezone: 'Europe/Berlin' } }], []);
    expect(wf.trigger).toMatchObject({ type: 'trigger.schedule', cron: '* * * * * *', timezone: 'Europe/Berlin' });
    const [run] = await eventually(async () => {
      const list = await runsOf(wf.id);
      return list.length ? list : null;
    }, 5000);
    expect(run!.trigger).toMatchObject({ type: 'schedule' });
    expect(run!.input).toMatchObject({ cron: '* * * * * *', timezone: 'Europe/Berlin' });
    expect(new Date(run!.input.scheduledAt as string).getUTCMilliseconds()).toBe(0);
    expect((await t.call({ method: 'PATCH', url: `${w.base}/workflows/${wf.id}`, auth: w.auth, payload: { active: false } })).statusCode).toBe(200);
    const settled = (await runsOf(wf.id)).length;
    await new Promise((r) => setTimeout(r, 1100));
    expect((await runsOf(wf.id)).length).toBe(settled);
  });
});

describe('trigger.webhook', () => {
  it('a public URL with a secret token starts a run with the body as input; wrong token, inactive → 404', async () => {
    const wf = await w.create(
      [
        { id: 'hook', type: 'trigger.webhook' },
        { id: 'up', type: 'leads.upsert', params: { name: '{{ name }}', email: '{{ email }}', source: 'webhook' } },
      ],
      [{ from: 'hook', to: 'up' }],
    );
    expect(wf.webhookUrl).toMatch(new RegExp(`/api/v1/hooks/${wf.id}/[A-Za-z0-9_-]{20,}$`));
    const path = new URL(wf.webhookUrl!).pathname;
    const res = await t.call({ method: 'POST', url: path, payload: { name: 'Hooked', email: 'hook@example.com' } });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ status: 'QUEUED' });
    const run = await w.until(res.json().runId);
    expect(run.input).toEqual({ name: 'Hooked', email: 'hook@example.com' });
    expect(w.step(run, 'up')!.items![0]).toMatchObject({ name: 'Hooked', source: 'webhook' });

    expect((await t.call({ method: 'POST', url: `/api/v1/hooks/${wf.id}/${'x'.repeat(32)}`, payload: {} })).statusCode).toBe(404);
    expect((await t.call({ method: 'POST', url: `/api/v1/hooks/wf_unknown/${wf.webhookToken}`, payload: {} })).statusCode).toBe(404);
    // The token is not shown again, and can be rotated.
    const got = (await t.call({ method: 'GET', url: `${w.base}/workflows/${wf.id}`, auth: w.auth })).json();
    expect(JSON.stringify(got)).not.toContain(wf.webhookToken!);
    const rotated = (await t.call({ method: 'POST', url: `${w.base}/workflows/${wf.id}/webhook-token`, auth: w.auth })).json();
    expect((await t.call({ method: 'POST', url: path, payload: {} })).statusCode).toBe(404);
    expect((await t.call({ method: 'POST', url: new URL(rotated.webhookUrl).pathname, payload: {} })).statusCode).toBe(202);
    const wrongToken = (await t.call({ method: 'POST', url: `/api/v1/hooks/${wf.id}/${'y'.repeat(32)}`, payload: {} })).json();
    const runsBefore = (await t.call({ method: 'GET', url: `${w.base}/runs?workflowId=${wf.id}`, auth: w.auth })).json().total;
    await t.call({ method: 'PATCH', url: `${w.base}/workflows/${wf.id}`, auth: w.auth, payload: { active: false } });
    // The same refusal as a wrong token, though this instance had just verified that token; nothing stored.
    const inactive = await t.call({ method: 'POST', url: new URL(rotated.webhookUrl).pathname, payload: {} });
    expect(inactive.statusCode).toBe(404);
    expect(inactive.json().error).toEqual(wrongToken.error);
    expect((await t.call({ method: 'GET', url: `${w.base}/runs?workflowId=${wf.id}`, auth: w.auth })).json().total).toBe(runsBefore);
    await t.call({ method: 'PATCH', url: `${w.base}/workflows/${wf.id}`, auth: w.auth, payload: { active: true } });
    expect((await t.call({ method: 'POST', url: new URL(rotated.webhookUrl).pathname, payload: {} })).statusCode).toBe(202);
  });
});

describe('startRun for other modules', () => {
  it('services.workflows.startRun starts a run (e.g. from a report recommendation)', async () => {
    const wf = await w.create(
      [
        { id: 'm', type: 'trigger.manual' },
        { id: 's', type: 'data.set', params: { fields: { seen: '{{ reason }}' } } },
      ],
      [{ from: 'm', to: 's' }],
    );
    const run = await t.app.services.workflows.startRun(t.orgA.orgId, wf.id, {
      input: { reason: 'recommendation' },
      trigger: { type: 'recommendation', reportId: 'rep_x' },
    });
    expect(run.status).toBe('QUEUED');
    const done = await w.until(run.id);
    expect(w.step(done, 's')!.items).toEqual([{ reason: 'recommendation', seen: 'recommendation' }]);
    await expect(t.app.services.workflows.startRun(t.orgB.orgId, wf.id, {})).rejects.toMatchObject({ statusCode: 404 });
  });
});
