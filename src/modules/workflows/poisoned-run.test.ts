import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../../test/harness.ts';
import { Receiver } from '../../../test/receiver.ts';
import { childEnv, freePort } from '../../../test/processes.ts';
import { workflowRuns } from './tables.ts';
import { api, manual } from '../../../test/workflows.ts';
import { eventually } from '../../../test/helpers.ts';
import { embeddedDataDir } from '../../../test/embedded-template.ts';

/**
 * A run whose execution keeps taking its process down must not take every restart down with it:
 * `node src/main.ts` on a temporary DATA_DIR, killed with SIGKILL three times while the same run
 * executes. Each start answers /healthz before it resumes stored work; after the third crash the
 * run is failed with RUN_CRASHED, and other runs go on.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const dir = embeddedDataDir('svc-poisoned-');
const children = new Set<ChildProcess>();
const EMAIL = 'owner@poisoned.example';
const PASSWORD = 'a long enough password';

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  listeningAt: () => number | undefined;
}

/** Starts the server; resolves once /healthz answers. `listeningAt`: the time of its "listening on" log line. */
async function start(port: number): Promise<Started> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: ROOT,
    env: childEnv({
      LOG_LEVEL: 'info',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dir,
      BOOTSTRAP_EMAIL: EMAIL,
      BOOTSTRAP_PASSWORD: PASSWORD,
      WORKFLOW_LEASE_MS: '1500',
      WORKFLOW_POLL_MS: '100',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let listeningAt: number | undefined;
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    const lines = stdout.split('\n');
    stdout = lines.pop()!;
    for (const line of lines) {
      const entry = JSON.parse(line) as { msg?: string; time?: number };
      if (entry.msg?.startsWith('listening on')) listeningAt = entry.time;
    }
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await eventually(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, 60_000, 20).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; exit ${child.exitCode}; stderr: ${stderr.slice(-2000)}`);
  });
  return { child, listeningAt: () => listeningAt };
}

async function kill(child: ChildProcess): Promise<void> {
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

type Rec = {
  id: string;
  status: string;
  error: { code: string; message: string; nodeId?: string } | null;
  steps: { nodeId: string; attempt: number; status: string; error: { code: string } | null }[];
};

describe('a run that crashes its process', () => {
  it('is resumed only after the server listens, and after 3 crashes ends FAILED with RUN_CRASHED while another run completes', async () => {
    const receiver = await new Receiver().start();
    // Every call of /poison hangs: the process is killed while the run waits on it.
    receiver.behaviour = (req) =>
      req.url === '/poison' ? { status: 200, delayMs: 120_000 } : { status: 200, body: '{}', headers: { 'content-type': 'application/json' } };
    const poisonCalls = () => receiver.received.filter((r) => r.url === '/poison');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}/api/v1`;
    let server = await start(port);

    const session = async () => {
      const login = (await (
        await fetch(`${base}/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
        })
      ).json()) as { tokens: { accessToken: string } };
      const token = login.tokens.accessToken;
      const me = (await (await fetch(`${base}/auth/me`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
        memberships: { organizationId: string }[];
      };
      const org = `${base}/orgs/${me.memberships[0]!.organizationId}`;
      const raw = (method: string, path: string, body?: unknown) =>
        fetch(`${org}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
      return { raw, call: async <T = Rec>(method: string, path: string, body?: unknown) => (await raw(method, path, body)).json() as Promise<T> };
    };
    let { call } = await session();

    const poison = await call('POST', '/workflows', {
      name: 'poison',
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'hang', name: 'Hang', type: 'utility.httpRequest', params: { method: 'GET', url: receiver.url('/poison'), timeoutMs: 30000 } },
      ],
      edges: [{ from: 'start', to: 'hang' }],
    });
    const healthy = await call('POST', '/workflows', {
      name: 'healthy',
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'ping', type: 'utility.httpRequest', params: { method: 'POST', url: receiver.url('/ok'), body: { n: 1 } } },
      ],
      edges: [{ from: 'start', to: 'ping' }],
    });
    expect(poison.id && healthy.id, JSON.stringify(poison)).toBeTruthy();
    const run = await call('POST', `/workflows/${poison.id}/run`, {});

    for (let crash = 1; crash <= 3; crash++) {
      await eventually(() => poisonCalls().length === crash, 30_000, 20).catch(async (error: unknown) => {
        throw new Error(
          `crash ${crash}: ${(error as Error).message}; calls ${poisonCalls().length}; run ${JSON.stringify(await call('GET', `/runs/${run.id}`))}`,
        );
      });
      if (crash > 1) {
        // The resumed attempt went out only once this start listened.
        expect(server.listeningAt()).toBeDefined();
        expect(poisonCalls()[crash - 1]!.at).toBeGreaterThanOrEqual(server.listeningAt()!);
      }
      await kill(server.child);
      server = await start(port);
    }

    const again = await session();
    call = again.call;
    const ended = await eventually(
      async () => {
        const r = await call('GET', `/runs/${run.id}`);
        return r.status === 'FAILED' || r.status === 'SUCCEEDED' ? r : null;
      },
      20_000,
      100,
    );
    expect(ended.status).toBe('FAILED');
    expect(ended.error).toMatchObject({ code: 'RUN_CRASHED', nodeId: 'hang' });
    expect(ended.error!.message).toContain('recovered 3 times');
    expect(ended.error!.message).toContain('"Hang"');
    // Not executed a fourth time.
    expect(poisonCalls()).toHaveLength(3);
    expect(ended.steps.map((s) => [s.nodeId, s.attempt, s.status, s.error?.code ?? null])).toEqual([
      ['start', 1, 'SUCCEEDED', null],
      ['hang', 1, 'FAILED', 'INTERRUPTED'],
      ['hang', 2, 'FAILED', 'INTERRUPTED'],
      ['hang', 3, 'FAILED', 'RUN_CRASHED'],
    ]);

    // Its event stream ends as any failed run's does.
    const stream = await again.raw('GET', `/runs/${run.id}/events`);
    const frames = (await stream.text())
      .trimEnd()
      .split('\n\n')
      .filter((f) => f.includes('event: '));
    expect(frames.at(-2)).toContain('event: node.failed');
    expect(frames.at(-1)).toContain('event: run.finished');
    expect(frames.at(-1)).toContain('"FAILED"');

    // The instance goes on with other work.
    const other = await call('POST', `/workflows/${healthy.id}/run`, {});
    const done = await eventually(
      async () => {
        const r = await call('GET', `/runs/${other.id}`);
        return r.status === 'SUCCEEDED' || r.status === 'FAILED' ? r : null;
      },
      20_000,
      100,
    );
    expect(done.status).toBe('SUCCEEDED');
    await kill(server.child);
    await receiver.stop();
  }, 240_000);
});

describe('recoveries are counted at the claim (on either store)', () => {
  it('a run taken over three times from a holder that is gone is failed with RUN_CRASHED, not resumed a fourth time', async () => {
    const t = await buildTestApp({ env: { WORKFLOW_POLL_MS: '50', WORKFLOW_LEASE_MS: '600' } });
    const w = api(t);
    const receiver = await new Receiver().start();
    receiver.behaviour = () => ({ status: 200, delayMs: 20_000 });
    try {
      const wf = await w.create(
        [manual, { id: 'hang', type: 'utility.httpRequest', params: { method: 'GET', url: receiver.url('/hang'), timeoutMs: 30000 } }],
        [{ from: 'start', to: 'hang' }],
      );
      const run = await w.run(wf.id);
      for (let crash = 1; crash <= 3; crash++) {
        await eventually(() => receiver.received.length === crash, 15_000, 20).catch(async (error: unknown) => {
          const [row] = await t.database.db.select().from(workflowRuns).where(eq(workflowRuns.id, run.id));
          throw new Error(
            `crash ${crash}: ${(error as Error).message}; calls ${receiver.received.length}; ${JSON.stringify({ ...row, definition: undefined })}; ${JSON.stringify((await w.get(run.id)).steps)}`,
          );
        });
        // As after kill -9 of its holder: the claim names an instance that no longer runs (this driver,
        // failing to renew it, lets go of the run) and the lease ends soon after.
        const soon = new Date(Date.now() + 1000);
        await t.database.db
          .update(workflowRuns)
          .set({ lockedBy: `gone-${crash}`, lockedUntil: soon, wakeAt: soon })
          .where(eq(workflowRuns.id, run.id));
      }
      const ended = await w.until(run.id, ['FAILED', 'SUCCEEDED'], 15_000);
      expect(ended.error).toMatchObject({ code: 'RUN_CRASHED', nodeId: 'hang' });
      expect(receiver.received).toHaveLength(3);
      const [row] = await t.database.db.select().from(workflowRuns).where(eq(workflowRuns.id, run.id));
      expect(row!.recoveries).toBe(3);
      expect(row!.lockedBy).toBeNull();
      const events = await w.events(run.id);
      expect(events.at(-1)).toMatchObject({ type: 'run.finished', status: 'FAILED' });
    } finally {
      await receiver.stop();
      await t.close();
    }
  }, 60_000);
});
