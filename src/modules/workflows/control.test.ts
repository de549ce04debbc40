import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { Type } from 'typebox';
import type { TestApp } from '../../../test/harness.ts';
import type { Receiver } from '../../../test/receiver.ts';
import { events } from '../events/tables.ts';
import { registerNode } from './nodes/registry.ts';
import { main } from './nodes/types.ts';
import { api, manual, startWorkflowApp } from '../../../test/workflows.ts';
import { eventually } from '../../../test/helpers.ts';

// A node that spends money, as ai.agent will: a test fixture registered like any node file.
const unregisterSpend = registerNode({
  type: 'test.spend',
  category: 'test',
  description: 'adds a cost',
  params: Type.Object({ usd: Type.Number() }),
  outputs: ['main'],
  async execute(ctx, exec) {
    const { usd } = await exec.params();
    await ctx.log('info', `spending ${usd}`);
    await ctx.addCost(usd);
    return main(exec.items);
  },
});

let t: TestApp;
let w: ReturnType<typeof api>;
let receiver: Receiver;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ t, w, receiver, close } = await startWorkflowApp({ WORKFLOW_POLL_MS: '100' }));
});
afterAll(async () => {
  await close();
  unregisterSpend();
});

describe('validation', () => {
  const post = (payload: Record<string, unknown>) => t.call({ method: 'POST', url: `${w.base}/workflows`, auth: w.auth, payload: { name: 'x', ...payload } });
  it.each([
    [
      'unknown node type',
      { nodes: [manual, { id: 'n', type: 'nope.nothing' }], edges: [{ from: 'start', to: 'n' }] },
      /unknown node type "nope.nothing"/,
      { nodeId: 'n' },
    ],
    [
      'params not matching the schema',
      { nodes: [manual, { id: 'n', type: 'utility.httpRequest', params: { method: 'FETCH', url: 'http://x' } }], edges: [] },
      /Node "n" \(utility.httpRequest\) has invalid params: method/,
      { nodeId: 'n', param: 'method' },
    ],
    [
      'unknown param',
      { nodes: [manual, { id: 'n', type: 'data.set', params: { fields: {}, extra: 1 } }], edges: [] },
      /has invalid params: unknown property 'extra'$/,
      { nodeId: 'n' },
    ],
    [
      'broken expression',
      { nodes: [manual, { id: 'n', type: 'data.set', params: { fields: { a: '{{ $$$( }}' } } }], edges: [] },
      /invalid expression/,
      { nodeId: 'n', param: 'fields.a' },
    ],
    [
      'a cycle',
      {
        nodes: [manual, { id: 'a', type: 'data.set', params: { fields: {} } }, { id: 'b', type: 'data.set', params: { fields: {} } }],
        edges: [
          { from: 'start', to: 'a' },
          { from: 'a', to: 'b' },
          { from: 'b', to: 'a' },
        ],
      },
      /cycle: a → b → a/,
      { nodeId: 'a', edge: { from: 'b', to: 'a' } },
    ],
    ['a dangling edge', { nodes: [manual], edges: [{ from: 'start', to: 'ghost' }] }, /missing node "ghost"/, { edge: { from: 'start', to: 'ghost' } }],
    ['no trigger', { nodes: [{ id: 'a', type: 'data.set', params: { fields: {} } }], edges: [] }, /no trigger node/, undefined],
    ['two triggers', { nodes: [manual, { id: 'other', type: 'trigger.manual' }], edges: [] }, /2 trigger nodes/, { nodeId: 'other' }],
    [
      'an unknown output',
      { nodes: [manual, { id: 'a', type: 'data.set', params: { fields: {} } }], edges: [{ from: 'start', to: 'a', output: 'true' }] },
      /has no output "true"/,
      { nodeId: 'start', edge: { from: 'start', to: 'a', output: 'true' } },
    ],
    [
      'a bad cron',
      { nodes: [{ id: 's', type: 'trigger.schedule', params: { cron: 'every tuesday' } }], edges: [] },
      /invalid cron/,
      { nodeId: 's', param: 'cron' },
    ],
    [
      'a bad time zone',
      { nodes: [{ id: 's', type: 'trigger.schedule', params: { cron: '0 9 * * *', timezone: 'Mars/Olympus' } }], edges: [] },
      /invalid cron|time zone/,
      { nodeId: 's' },
    ],
  ])('422 WORKFLOW_INVALID for %s, its details naming the node, edge or param (CONTRACT §4)', async (_name, payload, message, details) => {
    const res = await post(payload);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ statusCode: 422, code: 'WORKFLOW_INVALID' });
    expect(res.json().message).toMatch(message);
    if (details) expect(res.json().details).toMatchObject(details);
    else expect(res.json().details).toBeUndefined();
  });

  it('a workflow carries its version; a PATCH on a stale version is 409 CONFLICT and changes nothing', async () => {
    const wf = await w.create([manual, { id: 'a', type: 'data.set', params: { fields: { n: 1 } } }], [{ from: 'start', to: 'a' }]);
    expect(wf.version).toBe(1);
    const patch = (payload: Record<string, unknown>) => t.call({ method: 'PATCH', url: `${w.base}/workflows/${wf.id}`, auth: w.auth, payload });
    const first = await patch({ name: 'Renamed', version: 1 });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().version).toBe(2);
    // Another editor still holding version 1.
    const stale = await patch({ nodes: [manual], edges: [], version: 1 });
    expect(stale.statusCode).toBe(409);
    expect(stale.json()).toMatchObject({ code: 'CONFLICT' });
    expect(stale.json().message).toContain('version 2');
    const stored = (await t.call({ method: 'GET', url: `${w.base}/workflows/${wf.id}`, auth: w.auth })).json();
    expect(stored).toMatchObject({ name: 'Renamed', version: 2 });
    expect(stored.nodes).toHaveLength(2);
    // Without a version the change is made (last write wins), and counted.
    expect((await patch({ active: false })).json().version).toBe(3);
  });

  it("evaluates an editor's expression against an item or the last run's input item of a node, under the run limits; $secrets never", async () => {
    const wf = await w.create(
      [manual, { id: 'a', type: 'data.set', params: { fields: { doubled: '{{ n * 2 }}' } } }, { id: 'b', type: 'data.set', params: { fields: { x: 1 } } }],
      [
        { from: 'start', to: 'a' },
        { from: 'a', to: 'b' },
      ],
    );
    const evaluate = (payload: Record<string, unknown>, id = wf.id) =>
      t.call({ method: 'POST', url: `${w.base}/workflows/${id}/expressions/evaluate`, auth: w.auth, payload });
    expect((await evaluate({ expression: 'Hello {{ name }}!', item: { name: 'Ann' } })).json()).toEqual({ value: 'Hello Ann!', item: { name: 'Ann' } });
    expect((await evaluate({ expression: 'score > 50', item: { score: 70 } })).json().value).toBe(true);
    expect((await evaluate({ expression: '{{ missing }}' })).json().value).toBeNull();

    const run = await w.run(wf.id, { input: { n: 21 } });
    const finished = await w.until(run.id);
    expect(finished.status).toBe('SUCCEEDED');
    const atB = await evaluate({ expression: '{{ doubled + 1 }} from {{ $input.n }}; a gave {{ $count($node("a")) }}', runId: run.id, nodeId: 'b' });
    expect(atB.statusCode, atB.body).toBe(200);
    expect(atB.json()).toMatchObject({ value: '43 from 21; a gave 1', item: { n: 21, doubled: 42 } });

    const broken = await evaluate({ expression: '{{ $$$( }}' });
    expect(broken.statusCode).toBe(422);
    expect(broken.json()).toMatchObject({ code: 'EXPRESSION_ERROR' });
    const endless = await evaluate({ expression: '($f := function($x) { $f($x + 1) }; $f(0))' });
    expect(endless.statusCode).toBe(422);
    expect(endless.json()).toMatchObject({ code: 'EXPRESSION_LIMIT' });
    const secret = await evaluate({ expression: '{{ $secrets.API_KEY }}' });
    expect(secret.statusCode).toBe(400);
    expect((await evaluate({ expression: '1', runId: 'run_unknown' })).statusCode).toBe(404);
    expect((await evaluate({ expression: '1' }, 'wf_unknown')).statusCode).toBe(404);
  });

  it('PATCH validates too, and keeps stored secrets when the mask is sent back', async () => {
    const wf = await w.create(
      [manual, { id: 'out', type: 'utility.webhookOut', params: { url: receiver.url('/p'), secret: 'original-secret' } }],
      [{ from: 'start', to: 'out' }],
    );
    const bad = await t.call({ method: 'PATCH', url: `${w.base}/workflows/${wf.id}`, auth: w.auth, payload: { edges: [{ from: 'out', to: 'start' }] } });
    expect(bad.statusCode).toBe(422);
    const ok = await t.call({ method: 'PATCH', url: `${w.base}/workflows/${wf.id}`, auth: w.auth, payload: { name: 'renamed', nodes: wf.nodes as object[] } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ name: 'renamed' });
    const run = await w.until((await w.run(wf.id)).id);
    expect(run.status).toBe('SUCCEEDED');
    const got = receiver.received.find((r) => r.url === '/p')!;
    const { sign } = await import('../webhooks/signer.ts');
    expect(got.headers['x-service-signature']).toBe(sign('original-secret', Number(got.headers['x-service-timestamp']), got.raw));
    // Stored sealed, not in plain text.
    const { workflows } = await import('./tables.ts');
    const [row] = await t.database.db.select().from(workflows).where(eq(workflows.id, wf.id));
    expect(JSON.stringify(row!.nodes)).not.toContain('original-secret');
  });

  it('PATCH moves a workflow to a project, or answers 404 for an unknown one (on the embedded store too, whose one connection the change holds)', async () => {
    const wf = await w.create([manual], []);
    const patch = (projectId: string) => t.call({ method: 'PATCH', url: `${w.base}/workflows/${wf.id}`, auth: w.auth, payload: { projectId } });
    expect((await patch('')).statusCode).toBe(404);
    expect((await patch('prj_nope')).statusCode).toBe(404);
    const moved = await patch(t.orgA.projectId);
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().projectId).toBe(t.orgA.projectId);
  });

  it('GET node-types comes from the executing definitions', async () => {
    const res = await t.call({ method: 'GET', url: `${w.base}/node-types`, auth: w.auth });
    expect(res.statusCode).toBe(200);
    const types = res.json() as { type: string; params: { type: string }; outputs: string[]; category: string }[];
    for (const name of [
      'trigger.manual',
      'trigger.event',
      'trigger.schedule',
      'trigger.webhook',
      'flow.if',
      'flow.delay',
      'flow.approval',
      'data.set',
      'leads.upsert',
      'leads.update',
      'leads.crmSync',
      'messaging.send',
      'utility.httpRequest',
      'utility.webhookOut',
    ]) {
      expect(
        types.find((x) => x.type === name),
        name,
      ).toBeDefined();
    }
    expect(types.find((x) => x.type === 'flow.if')).toMatchObject({ category: 'flow', outputs: ['true', 'false'], params: { type: 'object' } });
    expect(types.find((x) => x.type === 'flow.approval')!.outputs).toEqual(['approved', 'rejected']);
  });
});

describe('cancel', () => {
  it('cancels a RUNNING run: the node in flight is aborted, no later node runs, final → 409', async () => {
    let hits = 0;
    receiver.behaviour = (req) => (req.url === '/slow' ? (hits++, { status: 200, delayMs: 5000 }) : { status: 200 });
    const wf = await w.create(
      [
        manual,
        { id: 'slow', type: 'utility.httpRequest', params: { method: 'GET', url: receiver.url('/slow'), timeoutMs: 20000 } },
        { id: 'after', type: 'utility.webhookOut', params: { url: receiver.url('/after-cancel') } },
      ],
      [
        { from: 'start', to: 'slow' },
        { from: 'slow', to: 'after' },
      ],
    );
    const queued = await w.run(wf.id);
    await eventually(() => hits > 0);
    const res = await t.call({ method: 'POST', url: `${w.base}/runs/${queued.id}/cancel`, auth: w.auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: queued.id, status: 'CANCELED' });
    expect(w.step(res.json(), 'slow')!.status).toBe('CANCELED');
    await new Promise((r) => setTimeout(r, 300));
    const run = await w.get(queued.id);
    expect(run.status).toBe('CANCELED');
    expect(receiver.received.some((r) => r.url === '/after-cancel')).toBe(false);
    const evs = await w.events(queued.id);
    expect(evs.at(-1)).toMatchObject({ type: 'run.finished', status: 'CANCELED' });
    expect(evs.filter((e) => e.type === 'run.finished')).toHaveLength(1);
    expect((await t.call({ method: 'POST', url: `${w.base}/runs/${queued.id}/cancel`, auth: w.auth })).statusCode).toBe(409);
    receiver.behaviour = () => ({ status: 200 });
  });

  it('cancels a WAITING run; its approval can no longer be decided', async () => {
    const wf = await w.create(
      [manual, { id: 'ok', type: 'flow.approval', params: { title: 'Go?' } }, { id: 'after', type: 'data.set', params: { fields: { x: 1 } } }],
      [
        { from: 'start', to: 'ok' },
        { from: 'ok', to: 'after', output: 'approved' },
      ],
    );
    const queued = await w.run(wf.id);
    await w.until(queued.id, ['WAITING']);
    const approvals = (await t.call({ method: 'GET', url: `${w.base}/approvals`, query: { runId: queued.id }, auth: w.auth })).json().items;
    const res = await t.call({ method: 'POST', url: `${w.base}/runs/${queued.id}/cancel`, auth: w.auth });
    expect(res.json().status).toBe('CANCELED');
    const approve = await t.call({ method: 'POST', url: `${w.base}/approvals/${approvals[0].id}/approve`, auth: w.auth, payload: {} });
    expect(approve.statusCode).toBe(409);
    await new Promise((r) => setTimeout(r, 200));
    expect((await w.get(queued.id)).status).toBe('CANCELED');
  });

  it('cancels a QUEUED run before it starts', async () => {
    await t.app.workers!.loops.runs!.stop();
    try {
      const wf = await w.create([manual], []);
      const queued = await w.run(wf.id);
      const res = await t.call({ method: 'POST', url: `${w.base}/runs/${queued.id}/cancel`, auth: w.auth });
      expect(res.json()).toMatchObject({ status: 'CANCELED', steps: [] });
    } finally {
      t.app.workers!.loops.runs!.start();
    }
  });
});

describe('cost and budget', () => {
  it('a run sums its costs; over budgetUsd it FAILS with BUDGET_EXCEEDED (no retry) and emits budget.exceeded', async () => {
    const wf = await w.create(
      [manual, { id: 'a', type: 'test.spend', params: { usd: 0.02 } }, { id: 'b', type: 'test.spend', params: { usd: 0.03 } }],
      [
        { from: 'start', to: 'a' },
        { from: 'a', to: 'b' },
      ],
    );
    const ok = await w.until((await w.run(wf.id)).id);
    expect(ok.status).toBe('SUCCEEDED');
    expect(ok.costUsd).toBeCloseTo(0.05);
    expect((await w.events(ok.id)).find((e) => e.type === 'log')).toMatchObject({ nodeId: 'a', level: 'info', message: 'spending 0.02' });

    const limited = await w.create(
      [
        manual,
        { id: 'a', type: 'test.spend', params: { usd: 0.02 } },
        { id: 'b', type: 'test.spend', params: { usd: 0.03 }, retry: { maxAttempts: 3 } },
        { id: 'c', type: 'data.set', params: { fields: {} } },
      ],
      [
        { from: 'start', to: 'a' },
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
      ],
      { budgetUsd: 0.04 },
    );
    const failed = await w.until((await w.run(limited.id)).id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toMatchObject({ code: 'BUDGET_EXCEEDED', nodeId: 'b' });
    expect(failed.steps.filter((s) => s.nodeId === 'b')).toHaveLength(1);
    expect(failed.steps.find((s) => s.nodeId === 'c')).toBeUndefined();
    const evs = await w.events(failed.id);
    expect(evs.at(-1)).toMatchObject({ type: 'run.finished', status: 'FAILED', costUsd: expect.closeTo(0.05, 5) });
    await eventually(async () =>
      (
        await t.database.db
          .select()
          .from(events)
          .where(and(eq(events.orgId, t.orgA.orgId), eq(events.type, 'budget.exceeded')))
      ).find((r) => (r.payload as { runId: string }).runId === failed.id),
    );
  });
});

describe('runs list', () => {
  it('filters by workflowId and status; bad status → 400', async () => {
    const wf = await w.create([manual], []);
    const r1 = await w.until((await w.run(wf.id)).id);
    const list = await t.call({ method: 'GET', url: `${w.base}/runs`, query: { workflowId: wf.id, status: 'SUCCEEDED' }, auth: w.auth });
    expect(list.json()).toMatchObject({ total: 1, items: [{ id: r1.id, status: 'SUCCEEDED' }], page: 1, pageSize: 20 });
    expect(list.json().items[0].steps).toBeUndefined();
    expect((await t.call({ method: 'GET', url: `${w.base}/runs`, query: { status: 'DONE' }, auth: w.auth })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: `${w.base}/runs`, query: { sort: 'nope' }, auth: w.auth })).statusCode).toBe(400);
  });
});
