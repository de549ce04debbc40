import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { api, manual } from '../../../test/workflows.ts';

let t: TestApp;
let w: ReturnType<typeof api>;
let ids: { workflowId: string; runId: string; approvalId: string };

beforeAll(async () => {
  t = await buildTestApp({ env: { WORKFLOW_POLL_MS: '100' } });
  w = api(t);
  const wf = await w.create([manual, { id: 'ask', type: 'flow.approval', params: { title: 'ok?' } }], [{ from: 'start', to: 'ask' }]);
  const run = await w.run(wf.id);
  await w.until(run.id, ['WAITING']);
  const approval = (await t.call({ method: 'GET', url: `${w.base}/approvals`, query: { runId: run.id }, auth: w.auth })).json().items[0];
  ids = { workflowId: wf.id, runId: run.id, approvalId: approval.id };
});
afterAll(async () => {
  await t.close();
});

type Route = {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: () => string;
  scope: 'workflows:read' | 'workflows:write';
  payload?: Record<string, unknown>;
  own?: boolean;
};
const routes: Route[] = [
  { method: 'GET', path: () => '/workflows', scope: 'workflows:read' },
  { method: 'POST', path: () => '/workflows', scope: 'workflows:write', payload: { name: 'n', nodes: [manual], edges: [] } },
  { method: 'GET', path: () => `/workflows/${ids.workflowId}`, scope: 'workflows:read', own: true },
  { method: 'PATCH', path: () => `/workflows/${ids.workflowId}`, scope: 'workflows:write', payload: { name: 'renamed' }, own: true },
  { method: 'POST', path: () => `/workflows/${ids.workflowId}/run`, scope: 'workflows:write', payload: {}, own: true },
  { method: 'POST', path: () => `/workflows/${ids.workflowId}/webhook-token`, scope: 'workflows:write', own: true },
  { method: 'GET', path: () => '/node-types', scope: 'workflows:read' },
  { method: 'GET', path: () => '/runs', scope: 'workflows:read' },
  { method: 'GET', path: () => `/runs/${ids.runId}`, scope: 'workflows:read', own: true },
  { method: 'POST', path: () => `/runs/${ids.runId}/cancel`, scope: 'workflows:write', own: true },
  { method: 'GET', path: () => `/runs/${ids.runId}/events`, scope: 'workflows:read', own: true },
  { method: 'GET', path: () => '/approvals', scope: 'workflows:read' },
  { method: 'GET', path: () => `/approvals/${ids.approvalId}`, scope: 'workflows:read', own: true },
  { method: 'POST', path: () => `/approvals/${ids.approvalId}/approve`, scope: 'workflows:write', payload: {}, own: true },
  { method: 'POST', path: () => `/approvals/${ids.approvalId}/reject`, scope: 'workflows:write', payload: {}, own: true },
  { method: 'GET', path: () => '/templates', scope: 'workflows:read' },
  { method: 'GET', path: () => '/templates/qualify-new-leads-with-ai', scope: 'workflows:read' },
  { method: 'POST', path: () => '/templates/sync-qualified-leads-to-crm/use', scope: 'workflows:write', payload: { name: 'x' } },
  { method: 'DELETE', path: () => `/workflows/${ids.workflowId}`, scope: 'workflows:write', own: true },
];

describe('access', () => {
  it.each(
    routes.map(
      (r) =>
        [
          `${r.method} ${r.path
            .toString()
            .match(/`(.*)`|'(.*)'/)
            ?.slice(1)
            .find(Boolean)}`,
          r,
        ] as const,
    ),
  )('%s: 401 without credentials, 403 without its scope, 403 for a viewer on writes', async (_name, route) => {
    const url = `${w.base}${route.path()}`;
    expect((await t.call({ method: route.method, url, payload: route.payload })).statusCode).toBe(401);
    const wrongScope = await t.key(t.orgA.orgId, ['leads:read', 'leads:write']);
    const res = await t.call({ method: route.method, url, payload: route.payload, auth: { apiKey: wrongScope } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    if (route.scope === 'workflows:write') {
      const readOnly = await t.key(t.orgA.orgId, ['workflows:read']);
      expect((await t.call({ method: route.method, url, payload: route.payload, auth: { apiKey: readOnly } })).statusCode).toBe(403);
      const viewer = await t.member(t.orgA.orgId, 'viewer');
      expect((await t.call({ method: route.method, url, payload: route.payload, auth: { token: viewer.token } })).statusCode).toBe(403);
    }
  });

  it.each(routes.filter((r) => r.own).map((r) => [`${r.method} ${r.path.toString().match(/`(.*)`/)?.[1]}`, r] as const))(
    '%s: another organization gets 404',
    async (_name, route) => {
      // Org B's owner, under org B's path, addressing org A's resource.
      const res = await t.call({
        method: route.method,
        url: `/api/v1/orgs/${t.orgB.orgId}${route.path()}`,
        payload: route.payload,
        auth: { token: t.orgB.token },
      });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'NOT_FOUND' });
      // And org B's key under org A's path.
      const cross = await t.call({ method: route.method, url: `${w.base}${route.path()}`, payload: route.payload, auth: { apiKey: t.orgB.apiKey } });
      expect(cross.statusCode).toBe(404);
    },
  );

  it('a key bound to another project does not see the workflow', async () => {
    const other = (await t.call({ method: 'POST', url: `${w.base}/projects`, auth: w.auth, payload: { name: 'P2' } })).json();
    const key = await t.key(t.orgA.orgId, ['workflows:read', 'workflows:write'], other.id);
    expect((await t.call({ method: 'GET', url: `${w.base}/runs/${ids.runId}`, auth: { apiKey: key } })).statusCode).toBe(404);
    const created = await t.call({ method: 'POST', url: `${w.base}/workflows`, auth: { apiKey: key }, payload: { name: 'p', nodes: [manual], edges: [] } });
    expect(created.json().projectId).toBe(other.id);
    const list = (await t.call({ method: 'GET', url: `${w.base}/workflows`, auth: { apiKey: key } })).json();
    expect(list.items.map((x: { id: string }) => x.id)).toEqual([created.json().id]);
  });

  it('a member (not viewer) may run and approve', async () => {
    const member = await t.member(t.orgA.orgId, 'member');
    const res = await t.call({ method: 'POST', url: `${w.base}/workflows/${ids.workflowId}/run`, auth: { token: member.token }, payload: {} });
    expect(res.statusCode).toBe(201);
  });
});

describe('templates', () => {
  it('lists at least five templates and creates workflows from the available ones; unavailable node types give a clear 422', async () => {
    const list = (await t.call({ method: 'GET', url: `${w.base}/templates`, auth: w.auth })).json() as {
      id: string;
      name: string;
      category: string;
      description: string;
      available: boolean;
    }[];
    expect(list.length).toBeGreaterThanOrEqual(5);
    for (const id of [
      'qualify-new-leads-with-ai',
      'approve-then-publish-linkedin',
      'weekly-report-digest',
      'sync-qualified-leads-to-crm',
      'welcome-new-leads',
    ]) {
      expect(
        list.find((x) => x.id === id),
        id,
      ).toMatchObject({ name: expect.any(String), category: expect.any(String), description: expect.any(String) });
    }
    for (const template of list) {
      const res = await t.call({
        method: 'POST',
        url: `${w.base}/templates/${template.id}/use`,
        auth: w.auth,
        payload: { name: `From ${template.id}`, projectId: t.orgA.projectId },
      });
      if (template.available) {
        expect(res.statusCode, `${template.id}: ${res.body}`).toBe(201);
        expect(res.json()).toMatchObject({ name: `From ${template.id}`, projectId: t.orgA.projectId, templateId: template.id });
      } else {
        expect(res.statusCode).toBe(422);
        expect(res.json()).toMatchObject({ code: 'WORKFLOW_INVALID' });
        expect(res.json().message).toMatch(/not available/);
      }
    }
    expect((await t.call({ method: 'POST', url: `${w.base}/templates/nope/use`, auth: w.auth, payload: { name: 'x' } })).statusCode).toBe(404);
  });
});
