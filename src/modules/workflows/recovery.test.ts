import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Receiver } from '../../../test/receiver.ts';
import { freePort, ownerClient, startServer } from '../../../test/processes.ts';
import { eventually } from '../../../test/helpers.ts';
import { embeddedDataDir } from '../../../test/embedded-template.ts';

/**
 * Durability with real processes: `node src/main.ts` on a temporary DATA_DIR (embedded PGlite on
 * disk), killed with SIGKILL in the middle of a run, then started again.
 */

const dir = embeddedDataDir('svc-recovery-');
const children = new Set<ChildProcess>();
type Rec = { id: string; status: string; steps: unknown[] };

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function start(port: number): Promise<ChildProcess> {
  return startServer(
    port,
    {
      DATA_DIR: dir,
      BOOTSTRAP_EMAIL: 'owner@recovery.example',
      BOOTSTRAP_PASSWORD: 'a long enough password',
      WORKFLOW_LEASE_MS: '1500',
      WORKFLOW_POLL_MS: '100',
    },
    children,
  );
}

describe('SIGKILL in the middle of a run', () => {
  it('another start finishes the run; a node that had finished is not executed again; a delayed run resumes', async () => {
    const receiver = await new Receiver().start();
    const counts: Record<string, number> = {};
    receiver.behaviour = (req) => {
      counts[req.url] = (counts[req.url] ?? 0) + 1;
      // The first call of /slow hangs: the process is killed while it waits.
      if (req.url === '/slow' && counts[req.url] === 1) return { status: 200, delayMs: 60_000 };
      return { status: 200, body: '{}', headers: { 'content-type': 'application/json' } };
    };
    const port = await freePort();
    const first = await start(port);
    const owner = await ownerClient(port, 'owner@recovery.example', 'a long enough password');
    const call = owner.call as (method: string, path: string, body?: unknown) => Promise<Rec>;

    const wf = await call('POST', '/workflows', {
      name: 'durable',
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'count', type: 'utility.httpRequest', params: { method: 'POST', url: receiver.url('/count'), body: { n: 1 } } },
        { id: 'slow', type: 'utility.httpRequest', params: { method: 'GET', url: receiver.url('/slow'), timeoutMs: 30000 } },
        { id: 'end', type: 'utility.webhookOut', params: { url: receiver.url('/end') } },
      ],
      edges: [
        { from: 'start', to: 'count' },
        { from: 'count', to: 'slow' },
        { from: 'slow', to: 'end' },
      ],
    });
    const delayed = await call('POST', '/workflows', {
      name: 'delayed',
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'wait', type: 'flow.delay', params: { seconds: 8 } },
        { id: 'after', type: 'utility.webhookOut', params: { url: receiver.url('/after-delay') } },
      ],
      edges: [
        { from: 'start', to: 'wait' },
        { from: 'wait', to: 'after' },
      ],
    });
    const run = await call('POST', `/workflows/${wf.id}/run`, {});
    const waitingRun = await call('POST', `/workflows/${delayed.id}/run`, {});
    await eventually(() => counts['/slow'] === 1, 15_000).catch(async (e: Error) => {
      throw new Error(
        `${e.message}: the receiver got ${JSON.stringify(counts)}; the run is ${JSON.stringify(await call('GET', `/runs/${run.id}`)).slice(0, 2000)}`,
      );
    });
    // The delay is long enough to be still waiting when the process is killed on a busy machine (a
    // one-second delay had ended before the slow node was reached in one CI run).
    await eventually(async () => (await call('GET', `/runs/${waitingRun.id}`)).status === 'WAITING', 15_000).catch(async (e: Error) => {
      throw new Error(`${e.message}: the delayed run is ${JSON.stringify(await call('GET', `/runs/${waitingRun.id}`)).slice(0, 2000)}`);
    });

    const gone = new Promise((r) => first.once('exit', r));
    first.kill('SIGKILL');
    await gone;

    await start(port);
    await owner.signIn();
    const get = (id: string) => call('GET', `/runs/${id}`);
    const done = await eventually(
      async () => {
        const r = await get(run.id);
        return r.status === 'SUCCEEDED' || r.status === 'FAILED' ? r : null;
      },
      20_000,
      100,
    );
    expect(done.status).toBe('SUCCEEDED');
    expect(counts['/count']).toBe(1);
    expect(counts['/slow']).toBe(2);
    expect(counts['/end']).toBe(1);
    const steps = (done.steps as { nodeId: string; attempt: number; status: string; error: { code: string } | null }[]).map((s) => [
      s.nodeId,
      s.attempt,
      s.status,
      s.error?.code ?? null,
    ]);
    expect(steps).toEqual([
      ['start', 1, 'SUCCEEDED', null],
      ['count', 1, 'SUCCEEDED', null],
      ['slow', 1, 'FAILED', 'INTERRUPTED'],
      ['slow', 2, 'SUCCEEDED', null],
      ['end', 1, 'SUCCEEDED', null],
    ]);
    const resumed = await eventually(
      async () => {
        const r = await get(waitingRun.id);
        return r.status === 'SUCCEEDED' ? r : null;
      },
      20_000,
      100,
    );
    expect(resumed.status).toBe('SUCCEEDED');
    expect(counts['/after-delay']).toBe(1);
    await receiver.stop();
  }, 90_000);
});
