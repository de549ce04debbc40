/**
 * Workflow engine: a trigger.manual → data.set → utility.webhookOut workflow, its webhook receiver
 * in its own process. Prints, on PostgreSQL and on the embedded store:
 *  - runs/s: BENCH_RUNS runs started at once (8 concurrent starters) until all are SUCCEEDED;
 *  - start latency (run created by POST …/run → run.started) p50/p99, measured on runs started one
 *    at a time (the latency a user sees) and under the throughput load;
 *  - step overhead: node.finished → next node.started (event times) p50/p99, and the run's wall
 *    time not spent inside nodes, per node (claims, commits, wake-ups) p50/p99.
 *
 *   npm run bench -- workflows
 *
 *  - CPU per run in the throughput phase: this process's (the service; on the embedded store also its
 *    database) and PostgreSQL's (its processes on this machine), in ms.
 *
 * Environment: BENCH_PG_URL, BENCH_STORES (postgres,embedded), BENCH_RUNS (2000), BENCH_SEQUENTIAL (200), WORKFLOW_CONCURRENCY.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { runEvents, runSteps, workflowRuns } from '../src/modules/workflows/tables.ts';
import { cpuMeter, openStore, percentile, postgresReachable, printTable, type BenchStore } from './_stores.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 2000);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 200);
const STARTERS = 8;

const ms = (v: unknown) => new Date(v as string).getTime();

async function run(store: BenchStore) {
  const config = loadConfig({
    DATA_DIR: store.dataDir,
    APP_SECRET: 'bench-secret-long-enough',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'silent',
    WORKFLOW_CONCURRENCY: process.env.WORKFLOW_CONCURRENCY ?? '32',
  });
  const app = await buildApp({ config, database: store.database, logger: false });
  await app.ready();
  const { auth, workflows, db } = app.services;
  const { organization } = await auth.createUserWithOrg({ email: `bench-${Date.now()}@example.com`, password: 'bench-password' });
  const orgId = organization.id;
  const scope = { orgId, projectId: null, actor: { type: 'system' as const, id: 'bench' } };

  const receiver = fork(fileURLToPath(new URL('./_receiver.ts', import.meta.url)), [String(RUNS + SEQUENTIAL)]);
  const port = await new Promise<number>((resolve) => receiver.once('message', (m: { port: number }) => resolve(m.port)));
  const received = new Promise<void>((resolve) => receiver.on('message', (m: { samples?: unknown }) => m.samples && resolve()));
  const wf = await workflows.create(scope, {
    name: 'bench',
    nodes: [
      { id: 'start', type: 'trigger.manual' },
      { id: 'set', type: 'data.set', params: { fields: { greeting: 'Hello {{ name }}', n: '{{ i * 2 }}' } } },
      { id: 'out', type: 'utility.webhookOut', params: { url: `http://127.0.0.1:${port}/out` } },
    ],
    edges: [
      { from: 'start', to: 'set' },
      { from: 'set', to: 'out' },
    ],
  });

  const succeeded = async (ids: string[]) => {
    const [row] = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(workflowRuns)
      .where(and(eq(workflowRuns.orgId, orgId), inArray(workflowRuns.id, ids), eq(workflowRuns.status, 'SUCCEEDED')));
    return row?.n ?? 0;
  };

  // 1. Sequential: one run at a time, the start latency of an idle engine.
  const sequentialIds: string[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const r = await workflows.startForScope(scope, wf.id, { input: { name: `s${i}`, i } });
    sequentialIds.push(r.id);
    for (;;) {
      const [row] = await db.select({ status: workflowRuns.status }).from(workflowRuns).where(eq(workflowRuns.id, r.id));
      if (row?.status === 'SUCCEEDED') break;
      await new Promise((res) => setTimeout(res, 1));
    }
  }

  // 2. Throughput: RUNS runs started at once.
  const ids: string[] = [];
  const cpu = cpuMeter();
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: STARTERS }, async () => {
      while (next < RUNS) {
        const i = next++;
        ids.push((await workflows.startForScope(scope, wf.id, { input: { name: `r${i}`, i } })).id);
      }
    }),
  );
  const startedIn = Date.now() - started;
  for (;;) {
    if ((await succeeded(ids)) === RUNS) break;
    await new Promise((res) => setTimeout(res, 20));
  }
  const elapsed = (Date.now() - started) / 1000;
  const cost = cpu.stop(RUNS);
  await received;
  receiver.kill();

  const measure = async (runIds: string[]) => {
    const starts: number[] = [];
    const gaps: number[] = [];
    const overheads: number[] = [];
    for (let i = 0; i < runIds.length; i += 500) {
      const chunk = runIds.slice(i, i + 500);
      const runs = await db.select().from(workflowRuns).where(inArray(workflowRuns.id, chunk));
      const events = await db.select().from(runEvents).where(inArray(runEvents.runId, chunk)).orderBy(asc(runEvents.runId), asc(runEvents.seq));
      const steps = await db.select().from(runSteps).where(inArray(runSteps.runId, chunk));
      const byRun = new Map<string, typeof events>();
      for (const e of events) byRun.set(e.runId, [...(byRun.get(e.runId) ?? []), e]);
      for (const r of runs) {
        const list = byRun.get(r.id) ?? [];
        const runStarted = list.find((e) => e.type === 'run.started');
        if (runStarted) starts.push(ms((runStarted.data as { at: string }).at) - r.createdAt.getTime());
        for (let k = 0; k < list.length - 1; k++) {
          if (list[k]!.type === 'node.finished' && list[k + 1]!.type === 'node.started')
            gaps.push(ms((list[k + 1]!.data as { at: string }).at) - ms((list[k]!.data as { at: string }).at));
        }
        const inside = steps.filter((s) => s.runId === r.id).reduce((n, s) => n + (s.durationMs ?? 0), 0);
        if (r.finishedAt) overheads.push((r.finishedAt.getTime() - r.createdAt.getTime() - inside) / 3);
      }
    }
    const sort = (a: number[]) => a.sort((x, y) => x - y);
    return { starts: sort(starts), gaps: sort(gaps), overheads: sort(overheads) };
  };
  const seq = await measure(sequentialIds);
  const load = await measure(ids);
  await app.close();
  return {
    store: store.name,
    runs: RUNS,
    'runs/s': Math.round(RUNS / elapsed),
    'starts/s': Math.round(RUNS / (startedIn / 1000)),
    'CPU ms/run (ours)': cost.ownMsPer.toFixed(2),
    'CPU ms/run (PostgreSQL)': store.name === 'postgres' && cost.postgresMsPer !== null ? cost.postgresMsPer.toFixed(2) : '-',
    'start p50/p99 ms (idle)': `${percentile(seq.starts, 50)} / ${percentile(seq.starts, 99)}`,
    'start p50/p99 ms (load)': `${percentile(load.starts, 50)} / ${percentile(load.starts, 99)}`,
    'step gap p50/p99 ms': `${percentile(seq.gaps, 50)} / ${percentile(seq.gaps, 99)}`,
    'overhead/node p50/p99 ms (idle)': `${percentile(seq.overheads, 50).toFixed(1)} / ${percentile(seq.overheads, 99).toFixed(1)}`,
    'overhead/node p50/p99 ms (load)': `${percentile(load.overheads, 50).toFixed(1)} / ${percentile(load.overheads, 99).toFixed(1)}`,
  };
}

export async function main(): Promise<void> {
  const rows = [];
  const wanted = (process.env.BENCH_STORES ?? 'postgres,embedded').split(',') as BenchStore['name'][];
  const stores = (await postgresReachable()) ? wanted : wanted.filter((s) => s === 'embedded');
  for (const name of stores) {
    const store = await openStore(name, 'workflows');
    try {
      rows.push(await run(store));
    } finally {
      await store.dispose();
    }
  }
  console.log(
    `\nWorkflow runs: trigger.manual → data.set → utility.webhookOut (receiver in its own process); ${SEQUENTIAL} sequential runs, then ${RUNS} at once\n`,
  );
  printTable(rows);
  console.log('\nGoals: ≥ 250 runs/s on PostgreSQL (n8n: 220 executions/s on 2 vCPU), step overhead p50 < 5 ms and p99 < 50 ms, start latency p99 < 100 ms.');
}
