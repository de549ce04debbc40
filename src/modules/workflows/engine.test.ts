import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, asc, eq } from 'drizzle-orm';
import type { TestApp } from '../../../test/harness.ts';
import type { Receiver } from '../../../test/receiver.ts';
import { sign } from '../webhooks/signer.ts';
import { events } from '../events/tables.ts';
import { MAX_RECOVERIES } from './engine/driver.ts';
import { workflowRuns } from './tables.ts';
import { api, manual, startWorkflowApp } from '../../../test/workflows.ts';
import { eventually } from '../../../test/helpers.ts';

let t: TestApp;
let w: ReturnType<typeof api>;
let receiver: Receiver;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ t, w, receiver, close } = await startWorkflowApp({ WORKFLOW_POLL_MS: '100' }));
});
afterAll(() => close());

describe('runs', () => {
  it('runs trigger → data.set → webhookOut: QUEUED, then SUCCEEDED with step items, events in order and a signed delivery', async () => {
    const wf = await w.create(
      [
        manual,
        { id: 'set', type: 'data.set', params: { fields: { greeting: 'Hello {{ name }}', double: '{{ n * 2 }}', runId: '{{ $run.id }}' } } },
        { id: 'out', type: 'utility.webhookOut', params: { url: receiver.url('/out'), secret: 'shh-secret', event: 'greeting.ready' } },
      ],
      [
        { from: 'start', to: 'set' },
        { from: 'set', to: 'out' },
      ],
    );
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
    expect(got.json).toMatchObject({
      type: 'greeting.ready',
      organizationId: t.orgA.orgId,
      payload: { runId: run.id, workflowId: wf.id, nodeId: 'out', items: [{ greeting: 'Hello Ada' }] },
    });

    const list = await w.events(run.id);
    expect(list.map((e) => `${e.type}${e.nodeId ? ':' + e.nodeId : ''}`)).toEqual([
      'run.started',
      'node.started:start',
      'node.finished:start',
      'node.started:set',
      'node.finished:set',
      'node.started:out',
      'node.finished:out',
      'run.finished',
    ]);
    expect(list.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(list.at(-1)).toMatchObject({ status: 'SUCCEEDED', costUsd: 0, runId: run.id });
    expect(list.find((e) => e.type === 'node.finished' && e.nodeId === 'set')).toMatchObject({ itemCount: 1 });
    // Items never travel in execution events.
    expect(JSON.stringify(list)).not.toContain('Hello Ada');

    await eventually(async () => {
      const rows = await t.database.db
        .select()
        .from(events)
        .where(and(eq(events.orgId, t.orgA.orgId), eq(events.type, 'workflow.run.finished')))
        .orderBy(asc(events.id));
      return rows.some((r) => (r.payload as { runId: string }).runId === run.id);
    });
    const [started] = (
      await t.database.db
        .select()
        .from(events)
        .where(and(eq(events.orgId, t.orgA.orgId), eq(events.type, 'workflow.run.started')))
    ).filter((r) => (r.payload as { runId: string }).runId === run.id);
    expect(started!.payload).toMatchObject({ runId: run.id, workflowId: wf.id, workflowName: 'wf', triggerType: 'manual' });
    const [finished] = (
      await t.database.db
        .select()
        .from(events)
        .where(and(eq(events.orgId, t.orgA.orgId), eq(events.type, 'workflow.run.finished')))
    ).filter((r) => (r.payload as { runId: string }).runId === run.id);
    expect(finished!.payload).toMatchObject({ runId: run.id, status: 'SUCCEEDED', costUsd: 0, itemCount: 1 });
    expect(typeof (finished!.payload as { durationMs: number }).durationMs).toBe('number');
  });
});

describe('nodes and branches', () => {
  it('flow.if sends items down true/false; a branch without items is SKIPPED', async () => {
    const wf = await w.create(
      [
        manual,
        { id: 'split', type: 'data.set', params: { fields: { list: '{{ [1,2,3] }}' } } },
        { id: 'check', type: 'flow.if', params: { condition: 'score >= 50' } },
        { id: 'hot', type: 'data.set', params: { fields: { label: 'hot' } } },
        { id: 'cold', type: 'data.set', params: { fields: { label: 'cold' } } },
      ],
      [
        { from: 'start', to: 'split' },
        { from: 'split', to: 'check' },
        { from: 'check', to: 'hot', output: 'true' },
        { from: 'check', to: 'cold', output: 'false' },
      ],
    );
    const run = await w.until((await w.run(wf.id, { input: { score: 80 } })).id);
    expect(run.status).toBe('SUCCEEDED');
    expect(w.step(run, 'check')!.outputs).toEqual({ true: [expect.objectContaining({ score: 80 })], false: [] });
    expect(w.step(run, 'hot')!.items).toEqual([expect.objectContaining({ label: 'hot', score: 80 })]);
    expect(w.step(run, 'cold')!.status).toBe('SKIPPED');
    const low = await w.until((await w.run(wf.id, { input: { score: 10 } })).id);
    expect(w.step(low, 'cold')!.items).toEqual([expect.objectContaining({ label: 'cold' })]);
    expect(w.step(low, 'hot')!.status).toBe('SKIPPED');
    // `{{ }}` and boolean conditions work too.
    const wf2 = await w.create([manual, { id: 'c', type: 'flow.if', params: { condition: '{{ $input.flag }}' } }], [{ from: 'start', to: 'c' }]);
    const r2 = await w.until((await w.run(wf2.id, { input: { flag: true } })).id);
    expect(w.step(r2, 'c')!.outputs!.true).toHaveLength(1);
  });

  it('expressions see $input, $run and $node("id"); a failing expression fails the node with EXPRESSION_ERROR', async () => {
    const wf = await w.create(
      [
        manual,
        { id: 'a', type: 'data.set', params: { fields: { x: 5 } } },
        {
          id: 'b',
          type: 'data.set',
          params: {
            fields: { fromA: '{{ $node("a").x }}', fromInput: '{{ $input.who }}', testMode: '{{ $run.testMode }}', text: 'x={{ $node("a").x }}!' },
            keepOnlySet: true,
          },
        },
      ],
      [
        { from: 'start', to: 'a' },
        { from: 'a', to: 'b' },
      ],
    );
    const run = await w.until((await w.run(wf.id, { input: { who: 'me' } })).id);
    expect(w.step(run, 'b')!.items).toEqual([{ fromA: 5, fromInput: 'me', testMode: false, text: 'x=5!' }]);

    const bad = await w.create([manual, { id: 'd', type: 'flow.delay', params: { seconds: '{{ "soon" }}' } }], [{ from: 'start', to: 'd' }]);
    const failed = await w.until((await w.run(bad.id)).id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toMatchObject({ code: 'EXPRESSION_ERROR', nodeId: 'd' });
  });

  it('utility.httpRequest returns status, headers and parsed JSON; a non-2xx answer fails the node and the run', async () => {
    receiver.behaviour = (req) =>
      req.url.startsWith('/api/fail')
        ? { status: 503, body: 'down' }
        : { status: 200, body: JSON.stringify({ ok: true, echo: req.json }), headers: { 'content-type': 'application/json' } };
    const wf = await w.create(
      [
        manual,
        {
          id: 'call',
          type: 'utility.httpRequest',
          params: { method: 'POST', url: receiver.url('/api/thing'), headers: { 'x-test': '{{ tag }}' }, body: { value: '{{ value }}' } },
        },
      ],
      [{ from: 'start', to: 'call' }],
    );
    const run = await w.until((await w.run(wf.id, { input: { tag: 'T1', value: 7 } })).id);
    expect(run.status).toBe('SUCCEEDED');
    expect(w.step(run, 'call')!.items![0]).toMatchObject({ statusCode: 200, body: { ok: true, echo: { value: 7 } } });
    const req = receiver.received.find((r) => r.url === '/api/thing')!;
    expect(req.headers['x-test']).toBe('T1');

    const failing = await w.create(
      [manual, { id: 'call', name: 'Call API', type: 'utility.httpRequest', params: { method: 'GET', url: receiver.url('/api/fail') } }],
      [{ from: 'start', to: 'call' }],
    );
    const failed = await w.until((await w.run(failing.id)).id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toMatchObject({ code: 'NODE_FAILED', nodeId: 'call', nodeName: 'Call API' });
    expect(failed.error!.message).toContain('503');
    const evs = await w.events(failed.id);
    expect(evs.find((e) => e.type === 'node.failed')).toMatchObject({ nodeId: 'call', willRetry: false });
    expect(evs.at(-1)).toMatchObject({ type: 'run.finished', status: 'FAILED' });
    await eventually(async () =>
      (await t.database.db.select().from(events).where(eq(events.type, 'workflow.run.failed'))).find(
        (r) =>
          (r.payload as { runId: string }).runId === failed.id &&
          (r.payload as { failedNodeId: string }).failedNodeId === 'call' &&
          (r.payload as { failedNodeName: string }).failedNodeName === 'Call API',
      ),
    );
    receiver.behaviour = () => ({ status: 200, body: 'ok' });
  });

  it('retries a failing node: node.failed willRetry, then node.started attempt 2 after the back-off', async () => {
    let calls = 0;
    receiver.behaviour = (req) => {
      if (req.url !== '/flaky') return { status: 200 };
      calls++;
      return calls < 3 ? { status: 500, body: 'boom' } : { status: 200, body: '{"fine":true}', headers: { 'content-type': 'application/json' } };
    };
    const wf = await w.create(
      [
        manual,
        { id: 'flaky', type: 'utility.httpRequest', params: { method: 'GET', url: receiver.url('/flaky') }, retry: { maxAttempts: 3, backoffSeconds: 0.1 } },
      ],
      [{ from: 'start', to: 'flaky' }],
    );
    const run = await w.until((await w.run(wf.id)).id);
    expect(run.status).toBe('SUCCEEDED');
    expect(run.steps.filter((s) => s.nodeId === 'flaky').map((s) => [s.attempt, s.status])).toEqual([
      [1, 'FAILED'],
      [2, 'FAILED'],
      [3, 'SUCCEEDED'],
    ]);
    const evs = (await w.events(run.id))
      .filter((e) => e.nodeId === 'flaky')
      .map((e) => `${e.type}:${e.attempt ?? ''}${e.willRetry === undefined ? '' : e.willRetry}`);
    expect(evs).toEqual(['node.started:1', 'node.failed:true', 'node.started:2', 'node.failed:true', 'node.started:3', 'node.finished:']);

    calls = -100;
    const exhausted = await w.create(
      [manual, { id: 'flaky', type: 'utility.httpRequest', params: { method: 'GET', url: receiver.url('/flaky') }, retry: { maxAttempts: 2 } }],
      [{ from: 'start', to: 'flaky' }],
    );
    const failed = await w.until((await w.run(exhausted.id)).id);
    expect(failed.status).toBe('FAILED');
    const fev = (await w.events(failed.id)).filter((e) => e.type === 'node.failed').map((e) => e.willRetry);
    expect(fev).toEqual([true, false]);
    receiver.behaviour = () => ({ status: 200, body: 'ok' });
  });

  it('pure nodes (trigger, data.set) committed with the next transition: a retry after a back-off keeps the run started, every step and every event in order', async () => {
    const wf = await w.create(
      [
        manual,
        { id: 'a', type: 'data.set', params: { fields: { x: 1 } } },
        { id: 'bad', type: 'data.set', params: { fields: { y: '{{ $error("nope") }}' } }, retry: { maxAttempts: 2, backoffSeconds: 0.1 } },
      ],
      [
        { from: 'start', to: 'a' },
        { from: 'a', to: 'bad' },
      ],
    );
    const run = await w.until((await w.run(wf.id)).id);
    expect(run.status).toBe('FAILED');
    expect(run.startedAt).toEqual(expect.any(String));
    expect(run.error).toMatchObject({ nodeId: 'bad' });
    expect(run.steps.map((s) => [s.nodeId, s.attempt, s.status])).toEqual([
      ['start', 1, 'SUCCEEDED'],
      ['a', 1, 'SUCCEEDED'],
      ['bad', 1, 'FAILED'],
      ['bad', 2, 'FAILED'],
    ]);
    expect(w.step(run, 'a')!.items).toEqual([{ x: 1 }]);
    const list = await w.events(run.id);
    expect(list.map((e) => `${e.type}${e.nodeId ? ':' + e.nodeId : ''}`)).toEqual([
      'run.started',
      'node.started:start',
      'node.finished:start',
      'node.started:a',
      'node.finished:a',
      'node.started:bad',
      'node.failed:bad',
      'node.started:bad',
      'node.failed:bad',
      'run.finished',
    ]);
    expect(list.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('a QUEUED run taken over from a holder that stopped counts as a recovery: one whose pure first nodes keep stopping their process ends FAILED with RUN_CRASHED', async () => {
    const wf = await w.create([manual, { id: 'a', type: 'data.set', params: { fields: { x: 1 } } }], [{ from: 'start', to: 'a' }]);
    const done = await w.until((await w.run(wf.id)).id);
    const [row] = await t.database.db.select().from(workflowRuns).where(eq(workflowRuns.id, done.id));
    // Copies of a run whose holder ('gone') died before committing anything, as the claim finds them.
    const held = (id: string, recoveries: number) => ({
      ...row!,
      id,
      status: 'QUEUED',
      eventSeq: 0,
      startedAt: null,
      finishedAt: null,
      error: null,
      costUsd: 0,
      lockedBy: 'gone',
      lockedUntil: new Date(Date.now() - 1000),
      wakeAt: new Date(Date.now() - 1000),
      recoveries,
    });
    const suffix = done.id.slice(-8);
    await t.database.db.insert(workflowRuns).values([held(`run_poisoned_${suffix}`, MAX_RECOVERIES - 1), held(`run_resumed_${suffix}`, 0)]);
    const poisoned = await w.until(`run_poisoned_${suffix}`);
    expect(poisoned.status).toBe('FAILED');
    expect(poisoned.error).toMatchObject({ code: 'RUN_CRASHED' });
    expect(poisoned.steps).toEqual([]);
    const resumed = await w.until(`run_resumed_${suffix}`);
    expect(resumed.status).toBe('SUCCEEDED');
    expect(w.step(resumed, 'a')!.items).toEqual([{ x: 1 }]);
  });

  it('flow.delay puts the run in WAITING with node.waiting until, then resumes on time', async () => {
    const wf = await w.create(
      [manual, { id: 'wait', type: 'flow.delay', params: { seconds: 0.4 } }, { id: 'after', type: 'data.set', params: { fields: { done: true } } }],
      [
        { from: 'start', to: 'wait' },
        { from: 'wait', to: 'after' },
      ],
    );
    const queued = await w.run(wf.id, { input: { a: 1 } });
    const waiting = await w.until(queued.id, ['WAITING']);
    expect(w.step(waiting, 'wait')!.status).toBe('WAITING');
    const ev = (await w.events(queued.id)).find((e) => e.type === 'node.waiting')!;
    expect(ev.nodeId).toBe('wait');
    expect(new Date(ev.until as string).getTime()).toBeGreaterThan(new Date(ev.at as string).getTime());
    const run = await w.until(queued.id);
    expect(run.status).toBe('SUCCEEDED');
    expect(w.step(run, 'after')!.items).toEqual([{ a: 1, done: true }]);
    expect(new Date(w.step(run, 'after')!.startedAt).getTime()).toBeGreaterThanOrEqual(new Date(ev.until as string).getTime());

    const until = await w.create([manual, { id: 'wait', type: 'flow.delay', params: { until: '{{ $input.at }}' } }], [{ from: 'start', to: 'wait' }]);
    const past = await w.until((await w.run(until.id, { input: { at: '2001-01-01T00:00:00Z' } })).id);
    expect(past.status).toBe('SUCCEEDED');
  });

  it('leads.upsert, leads.update and leads.crmSync (signed lead.synced) work on real leads', async () => {
    const wf = await w.create(
      [
        manual,
        { id: 'upsert', type: 'leads.upsert', params: { name: '{{ name }}', email: '{{ email }}', source: 'workflow', tags: ['wf'] } },
        { id: 'qualify', type: 'leads.update', params: { status: 'QUALIFIED', score: '{{ 90 }}' } },
        { id: 'sync', type: 'leads.crmSync', params: { url: receiver.url('/crm'), secret: 'crm-secret' } },
      ],
      [
        { from: 'start', to: 'upsert' },
        { from: 'upsert', to: 'qualify' },
        { from: 'qualify', to: 'sync' },
      ],
    );
    const run = await w.until((await w.run(wf.id, { input: { name: 'Lin', email: 'lin@example.com' } })).id);
    expect(run.status).toBe('SUCCEEDED');
    const lead = w.step(run, 'upsert')!.items![0] as { id: string };
    expect(lead).toMatchObject({ name: 'Lin', email: 'lin@example.com', source: 'workflow', created: true });
    expect(w.step(run, 'qualify')!.items![0]).toMatchObject({ id: lead.id, status: 'QUALIFIED', score: 90 });
    const res = await t.call({ method: 'GET', url: `${w.base}/leads/${lead.id}`, auth: w.auth });
    expect(res.json()).toMatchObject({ status: 'QUALIFIED', score: 90, tags: ['wf'] });
    const got = receiver.received.find((r) => r.url === '/crm')!;
    expect(got.headers['x-service-event']).toBe('lead.synced');
    expect(got.headers['x-service-signature']).toBe(sign('crm-secret', Number(got.headers['x-service-timestamp']), got.raw));
    expect(got.json).toMatchObject({ type: 'lead.synced', organizationId: t.orgA.orgId, payload: { lead: { id: lead.id, status: 'QUALIFIED' } } });
    // Running again de-duplicates on email.
    const again = await w.until((await w.run(wf.id, { input: { name: 'Lin L.', email: 'LIN@example.com' } })).id);
    expect(w.step(again, 'upsert')!.items![0]).toMatchObject({ id: lead.id, created: false, deduplicated: { matchedOn: 'email' } });
  });

  it('messaging.send posts a signed message.send; test mode dry-runs messaging, CRM sync and webhookOut', async () => {
    const wf = await w.create(
      [
        manual,
        { id: 'msg', type: 'messaging.send', params: { channel: 'webhook', url: receiver.url('/sms'), to: '{{ phone }}', text: 'Hi {{ name }}' } },
        { id: 'out', type: 'utility.webhookOut', params: { url: receiver.url('/dry-out') } },
      ],
      [
        { from: 'start', to: 'msg' },
        { from: 'msg', to: 'out' },
      ],
    );
    const run = await w.until((await w.run(wf.id, { input: { phone: '+15550100', name: 'Bo' } })).id);
    expect(w.step(run, 'msg')!.items![0]).toMatchObject({ channel: 'webhook', to: '+15550100', text: 'Hi Bo', sent: true });
    const sms = receiver.received.find((r) => r.url === '/sms')!;
    expect(sms.json).toMatchObject({ type: 'message.send', payload: { channel: 'webhook', to: '+15550100', text: 'Hi Bo' } });
    // Default secret: the organization's workflow signing secret.
    expect(sms.headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);

    const count = receiver.received.length;
    const dry = await w.until((await w.run(wf.id, { input: { phone: '+15550100', name: 'Bo' }, testMode: true })).id);
    expect(dry.status).toBe('SUCCEEDED');
    expect(dry.testMode).toBe(true);
    expect(w.step(dry, 'msg')!.items![0]).toMatchObject({ dryRun: true, to: '+15550100', text: 'Hi Bo', url: receiver.url('/sms') });
    expect(w.step(dry, 'out')!.items![0]).toMatchObject({
      dryRun: true,
      url: receiver.url('/dry-out'),
      event: 'workflow.output',
      body: { payload: { items: [expect.objectContaining({ dryRun: true })] } },
    });

    const crm = await w.create(
      [
        manual,
        { id: 'up', type: 'leads.upsert', params: { email: 'dry@example.com' } },
        { id: 'sync', type: 'leads.crmSync', params: { url: receiver.url('/crm-dry') } },
      ],
      [
        { from: 'start', to: 'up' },
        { from: 'up', to: 'sync' },
      ],
    );
    const dryCrm = await w.until((await w.run(crm.id, { testMode: true })).id);
    expect(w.step(dryCrm, 'sync')!.items![0]).toMatchObject({ dryRun: true, event: 'lead.synced', body: { payload: { lead: { email: 'dry@example.com' } } } });
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received.length).toBe(count);
  });
});
