import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../platform/errors.ts';
import { RunBacklog } from './backlog.ts';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { api } from '../../../test/workflows.ts';

/**
 * Backpressure at the triggers (RUN_QUEUE_MAX_*): with the run loop stopped, runs stay queued, so
 * each bound can be reached exactly. The queue is read at most every 100 ms of the app's clock:
 * the test moves its clock past that between starts.
 */
let now = Date.parse('2026-11-23T10:00:00.000Z');
const clock = { now: () => new Date(now) };
const later = (ms = 101) => {
  now += ms;
};

const manual = [
  { id: 'start', type: 'trigger.manual' },
  { id: 'set', type: 'data.set', params: { fields: { ok: true } } },
];
const hooked = [
  { id: 'hook', type: 'trigger.webhook' },
  { id: 'set', type: 'data.set', params: { fields: { ok: true } } },
];
const edges = [{ from: 'start', to: 'set' }];

describe('bounded run queues per workflow and per organization', () => {
  let t: TestApp;
  let w: ReturnType<typeof api>;
  beforeAll(async () => {
    t = await buildTestApp({ workers: false, clock, env: { RUN_QUEUE_MAX_PER_WORKFLOW: '3', RUN_QUEUE_MAX_PER_ORG: '5', RUN_QUEUE_MAX_AGE_MS: '0' } });
    w = api(t);
  });
  afterAll(() => t.close());

  const start = async (workflowId: string, org = t.orgA) => {
    later();
    return t.call({ method: 'POST', url: `/api/v1/orgs/${org.orgId}/workflows/${workflowId}/run`, auth: { token: org.token }, payload: { input: {} } });
  };

  it('refuses a start past a bound with 429 RATE_LIMIT and Retry-After, storing nothing; other organizations are not held back', async () => {
    const a = await w.create(manual, edges);
    const b = await w.create(manual, edges);
    const c = await w.create(hooked, [{ from: 'hook', to: 'set' }]);
    for (let i = 0; i < 3; i++) expect((await start(a.id)).statusCode).toBe(201);
    const full = await start(a.id);
    expect(full.statusCode).toBe(429);
    expect(full.headers['retry-after']).toBe('1');
    expect(full.json()).toMatchObject({ code: 'RATE_LIMIT', details: { queue: 'workflow', queued: 3, limit: 3 } });
    expect(full.json().message).toMatch(/3 runs waiting to start/);

    // The workflow's bound reached, the organization still has room: another workflow starts.
    for (let i = 0; i < 2; i++) expect((await start(b.id)).statusCode).toBe(201);
    const orgFull = await start(b.id);
    expect(orgFull.statusCode).toBe(429);
    expect(orgFull.json().details).toMatchObject({ queue: 'organization', queued: 5, limit: 5 });

    // The public webhook trigger says the same to whoever calls it.
    later();
    const hook = await t.call({ method: 'POST', url: new URL(c.webhookUrl!).pathname, payload: { n: 1 } });
    expect(hook.statusCode).toBe(429);
    expect(hook.headers['retry-after']).toBe('1');

    const runs = (await t.call({ method: 'GET', url: `${w.base}/runs`, auth: w.auth, query: { pageSize: '50' } })).json();
    expect(runs.total).toBe(5);

    // Another organization's queue is its own.
    const other = await t.call({
      method: 'POST',
      url: `/api/v1/orgs/${t.orgB.orgId}/workflows`,
      auth: { token: t.orgB.token },
      payload: { name: 'b', nodes: manual, edges },
    });
    expect((await start(other.json().id, t.orgB)).statusCode).toBe(201);

    // Runs leaving the queue make room again.
    const queued = runs.items as { id: string; workflowId: string }[];
    for (const run of queued.filter((r) => r.workflowId === a.id)) {
      expect((await t.call({ method: 'POST', url: `${w.base}/runs/${run.id}/cancel`, auth: w.auth })).statusCode).toBe(200);
    }
    expect((await start(a.id)).statusCode).toBe(201);
  });
});

describe('the age of the oldest waiting run', () => {
  let t: TestApp;
  let w: ReturnType<typeof api>;
  beforeAll(async () => {
    // An instance that runs two at once: a queue of one is what its next claim takes.
    t = await buildTestApp({
      workers: false,
      clock,
      env: { RUN_QUEUE_MAX_PER_WORKFLOW: '0', RUN_QUEUE_MAX_PER_ORG: '0', RUN_QUEUE_MAX_AGE_MS: '500', WORKFLOW_CONCURRENCY: '2' },
    });
    w = api(t);
  });
  afterAll(() => t.close());

  it("refuses starts while the organization's oldest queued run has waited past RUN_QUEUE_MAX_AGE_MS (in a queue no shorter than one claim), and takes them again once it started", async () => {
    const wf = await w.create(manual, edges);
    const start = () => t.call({ method: 'POST', url: `${w.base}/workflows/${wf.id}/run`, auth: w.auth, payload: { input: {} } });
    const first = await start();
    expect(first.statusCode).toBe(201);
    later(400);
    expect((await start()).statusCode).toBe(201);
    later(200);
    const refused = await start();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json().details).toMatchObject({ queue: 'organization', queued: 2, oldestWaitMs: 600, limit: 500 });

    // The run loop takes the queued runs: the queue is young again.
    while (await t.app.services.runDriver.round());
    later();
    expect((await start()).statusCode).toBe(201);
    // That one run waiting 600 ms: fewer runs than the instance claims at once, so not a backlog.
    later(600);
    expect((await start()).statusCode).toBe(201);
  });
});

describe('triggers waiting in the instance', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ workers: false });
  });
  afterAll(() => t.close());

  it('refuses a trigger past RUN_TRIGGERS_IN_FLIGHT at once, and one that waited past RUN_QUEUE_MAX_AGE_MS before its admission', async () => {
    const backlog = new RunBacklog(t.database, { now: () => new Date() }, { perWorkflow: 0, perOrg: 0, maxAgeMs: 100, inFlight: 1, agedFrom: 1 });
    let finish!: () => void;
    const first = backlog.gate(
      () =>
        new Promise<string>((resolve) => {
          finish = () => resolve('done');
        }),
    );
    // One trigger in hand: the next is refused without any database work.
    const second = await backlog.gate(async () => 'ran').catch((error: unknown) => error);
    expect(second).toBeInstanceOf(AppError);
    expect(second).toMatchObject({ statusCode: 429, code: 'RATE_LIMIT', details: { queue: 'instance', inFlight: 1, limit: 1 } });
    finish();
    expect(await first).toBe('done');
    expect(await backlog.gate(async () => 'ran')).toBe('ran');

    // A request that has been in the instance for 300 ms by its admission, alone: a slow one, not a queue.
    await expect(backlog.gate(() => backlog.admit(t.orgA.orgId, 'wf_none', performance.now() - 300))).resolves.toBeUndefined();
    // The same while another trigger is in flight (both waiting for the database): refused.
    const wide = new RunBacklog(t.database, { now: () => new Date() }, { perWorkflow: 0, perOrg: 0, maxAgeMs: 100, inFlight: 0, agedFrom: 1 });
    let release!: () => void;
    const held = wide.gate(
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    const late = await wide.gate(() => wide.admit(t.orgA.orgId, 'wf_none', performance.now() - 300)).catch((error: unknown) => error);
    expect(late).toMatchObject({ statusCode: 429, code: 'RATE_LIMIT', details: { queue: 'instance', limit: 100 } });
    expect(((late as AppError).details as { waitedMs: number }).waitedMs).toBeGreaterThanOrEqual(300);
    await expect(wide.gate(() => wide.admit(t.orgA.orgId, 'wf_none', performance.now()))).resolves.toBeUndefined();
    release();
    await held;
  });
});
