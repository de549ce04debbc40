/**
 * Agent runs: the service's own overhead around the model. A REPORT_WRITER run against a loopback
 * OpenAI-compatible model (its own process, answering at once, streamed) makes two model calls
 * (one `lead_stats` tool call, then the answer) and stores four steps. Prints, on PostgreSQL and on
 * the embedded store:
 *  - step store + stream p50/p99: storing one step and publishing it on the run's stream and the
 *    organization stream (StepStore.write);
 *  - overhead per model call p50/p99: a run's wall time outside the model calls (claim, budget
 *    checks, usage rows, steps, tools, finish), divided by its model calls;
 *  - agent runs/s: BENCH_AGENT_RUNS runs queued at once until all are final (AGENT_CONCURRENCY);
 *    also with the `offline` model (no HTTP at all).
 *
 *   npm run bench -- agents
 *
 * Environment: BENCH_PG_URL, BENCH_STORES (postgres,embedded), BENCH_AGENT_RUNS (300), BENCH_SEQUENTIAL (100), AGENT_CONCURRENCY (16).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { agentRuns } from '../src/modules/agents/tables.ts';
import { AgentEngine } from '../src/modules/agents/engine.ts';
import { StepStore } from '../src/modules/agents/steps.ts';
import { openStore, percentile, postgresReachable, printTable, type BenchStore } from './_stores.ts';

const RUNS = Number(process.env.BENCH_AGENT_RUNS ?? 300);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 100);
const FINAL = ['succeeded', 'failed', 'budget_exceeded', 'max_steps', 'canceled'];

// Timing probes around our own functions (the measured code runs unchanged inside them).
const stepTimes: number[] = [];
const writeStep = StepStore.prototype.write;
StepStore.prototype.write = async function (this: StepStore, ...args: Parameters<StepStore['write']>) {
  const started = performance.now();
  try {
    return await writeStep.apply(this, args);
  } finally {
    stepTimes.push(performance.now() - started);
  }
};
const modelTime = new Map<string, number>();
const engineProto = AgentEngine.prototype as unknown as { callModel: (...args: unknown[]) => Promise<unknown> };
const callModel = engineProto.callModel;
engineProto.callModel = async function (this: unknown, ...args: unknown[]) {
  const started = performance.now();
  try {
    return await callModel.apply(this, args);
  } finally {
    const runId = (args[1] as { id: string }).id;
    modelTime.set(runId, (modelTime.get(runId) ?? 0) + performance.now() - started);
  }
};

async function run(store: BenchStore, modelPort: number) {
  const config = loadConfig({
    DATA_DIR: store.dataDir,
    APP_SECRET: 'bench-secret-long-enough',
    LOG_LEVEL: 'silent',
    OPENAI_COMPATIBLE_BASE_URL: `http://127.0.0.1:${modelPort}/v1`,
    AGENT_CONCURRENCY: process.env.AGENT_CONCURRENCY ?? '16',
  });
  const app = await buildApp({ config, database: store.database, logger: false });
  await app.ready();
  const { auth, agents, db, leads } = app.services;
  const { user, organization } = await auth.createUserWithOrg({ email: `bench-${Date.now()}@example.com`, password: 'bench-password' });
  const scope = { orgId: organization.id, projectId: null, actor: { type: 'user' as const, id: user.id } };
  for (let i = 0; i < 20; i++) await leads.create(scope, { name: `Lead ${i}`, email: `lead${i}@bench.example`, source: i % 2 ? 'ads' : 'referral' });

  const finished = async (ids: string[]) => {
    const [row] = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(agentRuns)
      .where(and(eq(agentRuns.orgId, organization.id), inArray(agentRuns.id, ids), inArray(agentRuns.status, FINAL)));
    return row?.n ?? 0;
  };
  const waitAll = async (ids: string[]) => {
    while ((await finished(ids)) < ids.length) await new Promise((r) => setTimeout(r, 5));
  };

  // 1. Sequential runs: step and per-call overhead of an idle service.
  stepTimes.length = 0;
  modelTime.clear();
  const sequential: string[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const r = await agents.startRun(scope, { type: 'REPORT_WRITER', task: `Digest ${i}`, modelId: 'openai-compatible:bench' });
    sequential.push(r.id as string);
    await waitAll([r.id as string]);
  }
  const steps = [...stepTimes].sort((a, b) => a - b);
  const rows = await db.select().from(agentRuns).where(inArray(agentRuns.id, sequential));
  const bad = rows.filter((r) => r.status !== 'succeeded');
  if (bad.length) throw new Error(`${bad.length} runs did not succeed: ${bad[0]!.status} ${bad[0]!.error}`);
  const perCall = rows.map((r) => (r.finishedAt!.getTime() - r.startedAt!.getTime() - (modelTime.get(r.id) ?? 0)) / r.modelCalls).sort((a, b) => a - b);
  const stepsPerRun = rows.reduce((n, r) => n + r.stepCount, 0) / rows.length;

  // 2. Throughput: RUNS runs queued at once, loopback model and offline model.
  const throughput = async (modelId: string) => {
    const started = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++) ids.push((await agents.startRun(scope, { type: 'REPORT_WRITER', task: `Load ${i}`, modelId })).id as string);
    await waitAll(ids);
    return RUNS / ((Date.now() - started) / 1000);
  };
  const loopback = await throughput('openai-compatible:bench');
  const offline = await throughput('offline');
  await app.close();
  const f = (v: number) => v.toFixed(2);
  return {
    store: store.name,
    'steps/run': stepsPerRun.toFixed(1),
    'step store+stream p50/p99 ms': `${f(percentile(steps, 50))} / ${f(percentile(steps, 99))}`,
    'overhead/model call p50/p99 ms': `${f(percentile(perCall, 50))} / ${f(percentile(perCall, 99))}`,
    'runs/s (loopback model)': Math.round(loopback),
    'runs/s (offline model)': Math.round(offline),
  };
}

export async function main(): Promise<void> {
  const model = fork(fileURLToPath(new URL('./_model-server.ts', import.meta.url)));
  const port = await new Promise<number>((resolve) => model.once('message', (m: { port: number }) => resolve(m.port)));
  const rows = [];
  try {
    const wanted = (process.env.BENCH_STORES ?? 'postgres,embedded').split(',') as BenchStore['name'][];
    const stores = (await postgresReachable()) ? wanted : wanted.filter((s) => s === 'embedded');
    for (const name of stores) {
      const store = await openStore(name, 'agents');
      try {
        rows.push(await run(store, port));
      } finally {
        await store.dispose();
      }
    }
  } finally {
    model.kill();
  }
  console.log(
    `\nAgent runs: REPORT_WRITER, 2 model calls (loopback OpenAI-compatible server in its own process, streamed) and 4 steps; ${SEQUENTIAL} sequential runs, then ${RUNS} queued at once\n`,
  );
  printTable(rows);
  console.log('\nGoal: step overhead (store + stream) p50 < 5 ms.');
}
