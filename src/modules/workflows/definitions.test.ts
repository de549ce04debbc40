import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { TEMPLATES } from './templates/index.ts';
import { api, manual } from '../../../test/workflows.ts';

// CONTRACT §4: a template with its definition, and the size and shape of a workflow definition.
let t: TestApp;
let w: ReturnType<typeof api>;
beforeAll(async () => {
  t = await buildTestApp({ workers: false });
  w = api(t);
});
afterAll(async () => {
  await t.close();
});

describe('GET …/templates/:id', () => {
  it('gives every listed template with its nodes and edges, the graph "use" creates', async () => {
    const list = (await t.call({ method: 'GET', url: `${w.base}/templates`, auth: w.auth })).json() as { id: string }[];
    expect(list.length).toBe(TEMPLATES.length);
    for (const { id } of list) {
      const res = await t.call({ method: 'GET', url: `${w.base}/templates/${id}`, auth: w.auth });
      expect(res.statusCode, res.body).toBe(200);
      const template = TEMPLATES.find((x) => x.id === id)!;
      expect(res.json()).toMatchObject({
        ...list.find((x) => x.id === id),
        nodes: template.workflow.nodes,
        edges: template.workflow.edges,
        active: template.workflow.active ?? true,
      });
    }
    const detail = (await t.call({ method: 'GET', url: `${w.base}/templates/qualify-new-leads-with-ai`, auth: w.auth })).json();
    const used = await t.call({ method: 'POST', url: `${w.base}/templates/qualify-new-leads-with-ai/use`, auth: w.auth, payload: { name: 'from template' } });
    expect(used.statusCode, used.body).toBe(201);
    expect(used.json().nodes).toEqual(detail.nodes);
    expect(used.json().edges.map((e: { from: string; to: string }) => [e.from, e.to])).toEqual(
      detail.edges.map((e: { from: string; to: string }) => [e.from, e.to]),
    );
  });

  it('404 NOT_FOUND for an unknown template; an API key with workflows:read may read it', async () => {
    const missing = await t.call({ method: 'GET', url: `${w.base}/templates/no-such-template`, auth: w.auth });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ statusCode: 404, code: 'NOT_FOUND', message: 'Template not found' });
    const key = await t.key(t.orgA.orgId, ['workflows:read']);
    expect((await t.call({ method: 'GET', url: `${w.base}/templates/weekly-report-digest`, auth: { apiKey: key } })).statusCode).toBe(200);
    // Another organization's key under this organization's path.
    expect((await t.call({ method: 'GET', url: `${w.base}/templates/weekly-report-digest`, auth: { apiKey: t.orgB.apiKey } })).statusCode).toBe(404);
  });
});

describe('workflow definitions', () => {
  const chain = (n: number) => ({
    nodes: [manual, ...Array.from({ length: n - 1 }, (_, i) => ({ id: `n${i}`, type: 'data.set', params: { fields: { i } } }))],
    edges: Array.from({ length: n - 1 }, (_, i) => ({ from: i === 0 ? 'start' : `n${i - 1}`, to: `n${i}` })),
  });

  it('hold up to 500 nodes; 501 is 400 naming the limit', async () => {
    const ok = await t.call({ method: 'POST', url: `${w.base}/workflows`, auth: w.auth, payload: { name: 'big', ...chain(500) } });
    expect(ok.statusCode, ok.body.slice(0, 300)).toBe(201);
    expect(ok.json().nodes).toHaveLength(500);
    const tooMany = await t.call({ method: 'POST', url: `${w.base}/workflows`, auth: w.auth, payload: { name: 'too big', ...chain(501) } });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.body).toMatch(/nodes/);
    expect(tooMany.body).toMatch(/500/);
  });

  it("keep a node's position for editors", async () => {
    const res = await t.call({
      method: 'POST',
      url: `${w.base}/workflows`,
      auth: w.auth,
      payload: { name: 'laid out', nodes: [{ ...manual, position: { x: 120, y: -40.5 } }], edges: [] },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().nodes[0].position).toEqual({ x: 120, y: -40.5 });
  });
});
