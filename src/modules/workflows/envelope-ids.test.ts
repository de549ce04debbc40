import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { freePort, ownerClient, startServer, stderrOf } from '../../../test/processes.ts';
import { Receiver, type Received } from '../../../test/receiver.ts';
import { api, manual, startWorkflowApp } from '../../../test/workflows.ts';
import { eventually } from '../../../test/helpers.ts';
import { embeddedDataDir } from '../../../test/embedded-template.ts';

type Envelope = { id: string; type: string; payload: { runId: string; nodeId?: string; to?: string; lead?: { id: string } } };
const ID_SHAPE = /^evt_[0-9a-hjkmnp-tv-z]{26}$/;
const envelopeOf = (r: Received) => r.json as Envelope;

describe('a retried sending step keeps its envelope id', () => {
  let t: TestApp;
  let receiver: Receiver;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ t, receiver, close } = await startWorkflowApp());
  });
  afterAll(() => close());

  it('webhookOut, leads.crmSync and messaging.send send the same id on every attempt, one id per item', async () => {
    const w = api(t);
    // Every path fails its first two POSTs: each step succeeds on its third attempt.
    const seen: Record<string, number> = {};
    receiver.behaviour = (req) => {
      seen[req.url] = (seen[req.url] ?? 0) + 1;
      return { status: seen[req.url]! <= 2 ? 503 : 200 };
    };
    const retry = { maxAttempts: 3 };
    const wf = await w.create(
      [
        manual,
        { id: 'lead', type: 'leads.upsert', params: { name: 'Envelope', email: 'envelope@example.com' } },
        { id: 'sync', type: 'leads.crmSync', params: { url: receiver.url('/sync') }, retry },
        { id: 'msg', type: 'messaging.send', params: { channel: 'webhook', url: receiver.url('/msg'), to: '+491510000001', text: 'Hello {{ name }}' }, retry },
        { id: 'out', type: 'utility.webhookOut', params: { url: receiver.url('/out') }, retry },
      ],
      [
        { from: 'start', to: 'lead' },
        { from: 'lead', to: 'sync' },
        { from: 'sync', to: 'msg' },
        { from: 'msg', to: 'out' },
      ],
    );
    const run = await w.run(wf.id);
    const done = await w.until(run.id);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');

    const byPath = (path: string) => receiver.received.filter((r) => r.url === path).map(envelopeOf);
    for (const path of ['/sync', '/msg', '/out']) {
      const sent = byPath(path);
      // One item reaches each sender here: three attempts, one id.
      expect(sent).toHaveLength(3);
      expect(new Set(sent.map((e) => e.id)).size).toBe(1);
      expect(sent[0]!.id).toMatch(ID_SHAPE);
      // The id keeps the time part of the run's id (a ULID-shaped id sorted by creation).
      expect(sent[0]!.id.slice(4, 14)).toBe(run.id.slice(4, 14));
    }
    expect(new Set(['/sync', '/msg', '/out'].map((p) => byPath(p)[0]!.id)).size).toBe(3);
    const out = w.step(done, 'out')!;
    expect(out.attempt).toBe(3);
    expect((out.items ?? out.outputs?.main)?.[0]?.eventId).toBe(byPath('/out')[0]!.id);
  });

  it('items of one step get distinct ids, stable across attempts', async () => {
    const w = api(t);
    receiver.received.length = 0;
    let n = 0;
    receiver.behaviour = (req) => (req.url === '/each' && ++n <= 2 ? { status: 500 } : { status: 200 });
    const wf = await w.create(
      [
        manual,
        { id: 'a', type: 'data.set', params: { fields: { to: 'a' } } },
        { id: 'b', type: 'data.set', params: { fields: { to: 'b' } } },
        {
          id: 'send',
          type: 'messaging.send',
          params: { channel: 'webhook', url: receiver.url('/each'), to: '{{ to }}', text: 'hi' },
          retry: { maxAttempts: 3 },
        },
      ],
      [
        { from: 'start', to: 'a' },
        { from: 'start', to: 'b' },
        { from: 'a', to: 'send' },
        { from: 'b', to: 'send' },
      ],
    );
    const run = await w.run(wf.id);
    expect((await w.until(run.id)).status).toBe('SUCCEEDED');
    const sent = receiver.received.filter((r) => r.url === '/each').map(envelopeOf);
    // Attempt 1: item a fails; attempt 2: item a fails; attempt 3: a and b go through.
    expect(sent.map((e) => e.payload.to)).toEqual(['a', 'a', 'a', 'b']);
    expect(new Set(sent.slice(0, 3).map((e) => e.id)).size).toBe(1);
    expect(sent[3]!.id).not.toBe(sent[0]!.id);
  });
});

/**
 * kill -9 while each step's POST is in flight (the receiver got it and holds the answer), twice per
 * run: the restarted server sends the step again, and the receiver sees the same envelope id.
 */
describe('kill -9 during the sends', () => {
  const dir = embeddedDataDir('svc-envelope-ids-');
  const children = new Set<ChildProcess>();
  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  // Generous: three boots of the server on a busy machine.
  const start = (port: number) =>
    startServer(
      port,
      {
        DATA_DIR: dir,
        BOOTSTRAP_EMAIL: 'owner@envelopes.example',
        BOOTSTRAP_PASSWORD: 'a long enough password',
        WORKFLOW_LEASE_MS: '3000',
        WORKFLOW_POLL_MS: '100',
        WEBHOOK_TIMEOUT_MS: '60000',
      },
      children,
      90_000,
    );

  async function kill(child: ChildProcess): Promise<void> {
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }

  it('every POST of one (run, node, item) carries one id: unique ids == sends', async () => {
    const receiver = await new Receiver().start();
    // The first POST of each (path, run) is held unanswered until the server is killed.
    const firsts = new Set<string>();
    receiver.behaviour = (req) => {
      const key = `${req.url}|${envelopeOf(req).payload.runId}`;
      if (firsts.has(key)) return { status: 200 };
      firsts.add(key);
      return { status: 200, delayMs: 120_000 };
    };
    const port = await freePort();
    let child = await start(port);
    const owner = await ownerClient(port, 'owner@envelopes.example', 'a long enough password');
    const call = owner.call as (method: string, path: string, body?: unknown) => Promise<{ id: string; status: string }>;

    const webhookThenMessage = await call('POST', '/workflows', {
      name: 'webhook then message',
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'out', type: 'utility.webhookOut', params: { url: receiver.url('/out') } },
        {
          id: 'msg',
          type: 'messaging.send',
          params: { channel: 'webhook', url: receiver.url('/msg'), to: '+491510000000', text: 'sent {{ $string(itemCount) }}' },
        },
      ],
      edges: [
        { from: 'start', to: 'out' },
        { from: 'out', to: 'msg' },
      ],
    });
    const syncThenWebhook = await call('POST', '/workflows', {
      name: 'sync then webhook',
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'lead', type: 'leads.upsert', params: { name: '{{ name }}', email: '{{ email }}' } },
        { id: 'sync', type: 'leads.crmSync', params: { url: receiver.url('/sync') } },
        { id: 'out', type: 'utility.webhookOut', params: { url: receiver.url('/out2') } },
      ],
      edges: [
        { from: 'start', to: 'lead' },
        { from: 'lead', to: 'sync' },
        { from: 'sync', to: 'out' },
      ],
    });
    const runs: string[] = [];
    for (let i = 0; i < 4; i++) {
      runs.push((await call('POST', `/workflows/${webhookThenMessage.id}/run`, { input: { i } })).id);
      runs.push((await call('POST', `/workflows/${syncThenWebhook.id}/run`, { input: { name: `Crash ${i}`, email: `crash${i}@example.com` } })).id);
    }

    // Two rounds: every run is held in its first send, kill; then in its second send, kill.
    for (const round of [1, 2]) {
      await eventually(() => firsts.size === runs.length * round, 90_000, 50).catch(async (e: Error) => {
        const states = await Promise.all(runs.map(async (id) => JSON.stringify(await call('GET', `/runs/${id}`)).slice(0, 600)));
        throw new Error(
          `round ${round}: ${firsts.size} of ${runs.length * round} sends held (${e.message}); held: ${[...firsts].join(', ')}; runs: ${states.join('\n')}; server stderr: ${stderrOf(child)}`,
        );
      });
      await kill(child);
      child = await start(port);
      await owner.signIn();
    }
    const finished = await eventually(
      async () => {
        const all = await Promise.all(runs.map((id) => call('GET', `/runs/${id}`)));
        return all.every((r) => r.status === 'SUCCEEDED' || r.status === 'FAILED') ? all : null;
      },
      90_000,
      200,
    );
    expect(finished.map((r) => r.status)).toEqual(runs.map(() => 'SUCCEEDED'));

    // 8 runs × 2 sends, each sent twice (held, then again after the kill).
    const sends = new Map<string, Set<string>>();
    for (const req of receiver.received) {
      const key = `${req.url}|${envelopeOf(req).payload.runId}`;
      sends.set(key, (sends.get(key) ?? new Set()).add(envelopeOf(req).id));
    }
    expect(receiver.received).toHaveLength(32);
    expect(sends.size).toBe(16);
    for (const [key, ids] of sends) expect([key, ids.size]).toEqual([key, 1]);
    expect(new Set(receiver.received.map((r) => envelopeOf(r).id)).size).toBe(16);
    await kill(child);
    await receiver.stop();
  }, 300_000);
});
