import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, asc, eq } from 'drizzle-orm';
import { buildTestApp, type TestApp } from '../../../../test/harness.ts';
import { Receiver, eventually } from '../../../../test/receiver.ts';
import { sign } from '../../webhooks/signer.ts';
import { events } from '../../events/tables.ts';
import { api, manual } from './helpers.ts';

let t: TestApp;
let w: ReturnType<typeof api>;
let receiver: Receiver;

beforeAll(async () => {
  t = await buildTestApp({ env: { WORKFLOW_POLL_MS: '100' } });
  w = api(t);
  receiver = await new Receiver().start();
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

describe('runs', () => {
  it('runs trigger → data.set → webhookOut: QUEUED, then SUCCEEDED with step items, events in order and a signed delivery', async () => {
    const wf = await w.create([
      manual,
      { id: 'set', type: 'data.set', params: { fields: { greeting: 'Hello {{ name }}', double: '{{ n * 2 }}', runId: '{{ $run.id }}' } } },
      { id: 'out', type: 'utility.webhookOut', params: { url: receiver.url('/out'), secret: 'shh-secret', event: 'greeting.ready' } },
    ], [{ from: 'start', to: 'set' }, { from: 'set', to: 'out' }]);
    expect(wf.nodes).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'out', params: expect.objectContaining({ secret: '********' }) })]));
    const before = receiver.received.length;
    const queued = await w.run(wf.id, { input: { name: 'Ada', n: 21 } });
    expect(queued.status).toBe('QUEUED');
    const run = await w.until(queued.id);
    expect(run.status).toBe('SUCCEEDED');
    expect(w.step(run, 'set')!.items).toEqual([{ name: 'Ada', n: 21, greeting: 'Hello Ada', double: 42, runId: run.id }]);
    expect(w.step(run, 'out')!.items![0]).toMatchObject({ delivered: true, statusCode: 200, event: 'greeting.ready', itemCount: 1 });
    const got = receiver.received[before]!;
    expect(got.headers['x-service-event']).toBe('greeting.ready');
    expect(got.headers['x-service-signature']).toBe(sign('shh-secret', Number(got.headers['x-service-timestamp']), got.raw));
    expect(got.json).toMatchObject({ type: 'greeting.ready', organizationId: t.orgA.orgId, payload: { runId: run.id, workflowId: wf.id, nodeId: 'out', items: [{ greeting: 'Hello Ada' }] } });

    const list = await w.events(run.id);
    expect(list.map((e) => `${e.type}${e.nodeId ? ':' + e.nodeId : ''}`)).toEqual([
      'run.started', 'node.started:start', 'node.finished:start', 'node.started:set', 'node.finished:set',
      'node.started:out', 'node.finished:out', 'run.finished',
    ]);
    expect(list.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(list.at(-1)).toMatchObject({ status: 'SUCCEEDED', costUsd: 0, runId: run.id });
    expect(list.find((e) => e.type === 'node.finished' && e.nodeId === 'set')).toMatchObject({ itemCount: 1 });
    // Items never travel in execution events.
    expect(JSON.stringify(list)).not.toContain('Hello Ada');

    await eventually(async () => {
      const rows = await t.database.db.select().from(events).where(and(eq(events.orgId, t.orgA.orgId), eq(events.type, 'workflow.run.finished'))).orderBy(asc(events.id));
      return rows.some((r) => (r.payload as { runId: string }).runId === run.id);
    });
    const [started] = (await t.database.db.select().from(events).where(and(eq(events.orgId, t.orgA.orgId), eq(events.type, 'workflow.run.started'))))
      .filter((r) => (r.payload as { runId: string }).runId === run.id);
    expect(started!.payload).toMatchObject({ runId: run.id, workflowId: wf.id, workflowName: 'wf', triggerType: 'manual' });
    const [finished] = (await t.database.db.select().from(events).where(and(eq(events.orgId, t.orgA.orgId), eq(events.type, 'workflow.run.finished'))))
      .filter((r) => (r.payload as { runId: string }).runId === run.id);
    expect(finished!.payload).toMatchObject({ runId: run.id, status: 'SUCCEEDED', costUsd: 0, itemCount: 1 });
    expect(typeof (finished!.payload as { durationMs: number }).durationMs).toBe('number');
  });
});
