/**
 * `npm run chaos`: the service's promises checked under faults and load (issue 31). Starts its own
 * PostgreSQL cluster, N instances of the service on it, the loopback stand-ins, and a mixed load at
 * a steady rate; injects faults on a seeded schedule (kill -9, SIGTERM, PostgreSQL fast restart,
 * stand-ins that hang or fail); then stops the load, lets the system finish what it accepted, and
 * checks every promise against the stand-ins' records and the database. `--no-faults` with a long
 * `--duration` is the soak: latency per route class and memory per time window, which must stay
 * flat. Exits 1 when a promise was broken. `node chaos/run.ts --help` lists the flags.
 */
import { randomInt } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ModelServer } from '../test/model-server.ts';
import { freePort } from '../test/processes.ts';
import { SmtpStandIn } from '../test/smtp.ts';
import { ChaosApi, Recorder } from './client.ts';
import { Cluster } from './cluster.ts';
import { inject, schedule, type FaultRecord } from './faults.ts';
import { Instance } from './instances.ts';
import { printReport, type Report } from './report.ts';
import { fork } from './rng.ts';
import { LoopbackStandIn } from './standin.ts';
import type { Check, Load, World } from './world.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const LOADS = ['leads', 'workflows', 'conversations', 'agents', 'campaigns', 'webhooks'] as const;

const HELP = `npm run chaos -- [flags]

  --duration <t>     how long the load runs: 90s, 10m, 1h (default 10m)
  --instances <n>    instances of the service on the one database (default 3)
  --seed <n>         the seed of the load's choices and the fault schedule (default random; printed)
  --rate <x>         load multiplier; 1 fits a 2-core machine (default 1)
  --no-faults        no faults: the soak (latency and memory per window must stay flat)
  --only <a,b>       only these loads (${LOADS.join(', ')})
  --settle <t>       how long the system may take to finish after the load (default 10% of the duration, at least 90s)
  --window <t>       the report's time window (default 5m, or a sixth of a shorter run)
  --warmup <t>       memory baseline taken this long after an instance starts (default 20% of the duration, at most 5m)
  --rss-growth <x>   an instance's RSS at the end may be at most x times its baseline, plus 64 MB (default 1.5)
  --out <dir>        where logs and the JSON report go (default chaos-out/<time>)
  --keep             keep the database directory (the server is stopped)
  --help`;

export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new Error(`not a duration: ${text} (90s, 10m, 1h)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 's']!;
  return Math.round(Number(match[1]) * unit);
}

export interface Options {
  durationMs: number;
  instances: number;
  seed: number;
  rate: number;
  faults: boolean;
  only: string[];
  settleMs: number;
  windowMs: number;
  warmupMs: number;
  rssGrowth: number;
  out: string;
  keep: boolean;
}

export function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '10m' },
      instances: { type: 'string', default: '3' },
      seed: { type: 'string' },
      rate: { type: 'string', default: '1' },
      faults: { type: 'boolean', default: true },
      'no-faults': { type: 'boolean', default: false },
      only: { type: 'string' },
      settle: { type: 'string' },
      window: { type: 'string' },
      warmup: { type: 'string' },
      'rss-growth': { type: 'string', default: '1.5' },
      out: { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return null;
  const durationMs = parseDuration(values.duration);
  const only = values.only ? values.only.split(',').map((s) => s.trim()) : [...LOADS];
  for (const name of only) if (!(LOADS as readonly string[]).includes(name)) throw new Error(`unknown load ${name} (${LOADS.join(', ')})`);
  return {
    durationMs,
    instances: Math.max(1, Number(values.instances)),
    seed: values.seed ? Number(values.seed) : randomInt(1, 2 ** 31),
    rate: Number(values.rate),
    faults: values.faults && !values['no-faults'],
    only,
    settleMs: values.settle ? parseDuration(values.settle) : Math.max(90_000, durationMs * 0.1),
    windowMs: values.window ? parseDuration(values.window) : Math.min(300_000, Math.max(10_000, Math.round(durationMs / 6))),
    warmupMs: values.warmup ? parseDuration(values.warmup) : Math.min(300_000, Math.round(durationMs * 0.2)),
    rssGrowth: Number(values['rss-growth']),
    out: values.out ?? join(ROOT, 'chaos-out', new Date().toISOString().replace(/[:.]/g, '-')),
    keep: values.keep,
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function chaos(options: Options): Promise<Report> {
  mkdirSync(options.out, { recursive: true });
  const started = Date.now();
  const log = (message: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(7)} s] ${message}`);
  log(`seed ${options.seed}, ${options.instances} instances, ${options.durationMs / 1000} s, rate ${options.rate}, faults ${options.faults ? 'on' : 'off'}`);
  log(`logs in ${options.out}`);

  const cluster = new Cluster(await freePort());
  await cluster.init();
  log(`postgres on :${cluster.port} in ${cluster.dir}`);
  const pool = new pg.Pool({ connectionString: cluster.url, max: 4 });
  pool.on('error', () => undefined);

  const standIns: LoopbackStandIn[] = [];
  const newStandIn = async (name: string, faults = true) => {
    const standIn = await new LoopbackStandIn(name, faults).start();
    standIns.push(standIn);
    return standIn;
  };
  const smtp = await new SmtpStandIn().start();
  const model = new ModelServer();
  const modelUrl = await model.start();
  model.script = () => ({ content: 'Thanks for your message — a colleague will follow up.' });
  const whatsapp = await newStandIn('whatsapp-api');
  const telegram = await newStandIn('telegram-api');

  const owner = { email: 'owner@chaos.example', password: 'chaos owner password' };
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    NODE_ENV: 'development',
    DATABASE_URL: cluster.url,
    DATA_DIR: join(options.out, 'data'),
    APP_SECRET: 'chaos-run-secret-that-is-long-enough',
    BOOTSTRAP_EMAIL: owner.email,
    BOOTSTRAP_PASSWORD: owner.password,
    BOOTSTRAP_ORG: 'Chaos Inc',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    ACCESS_TOKEN_TTL_S: String(Math.ceil((options.durationMs + options.settleMs) / 1000) + 7200),
    RATE_LIMIT_MAX: '100000000',
    AUTH_RATE_LIMIT_MAX: '100000',
    PROVIDER_WEBHOOK_RATE_LIMIT_MAX: '100000000',
    SSE_MAX_PER_CREDENTIAL: '2000',
    // Five attempts over 110 s: a receiver (or a stand-in fault) down for a minute is outlasted.
    WEBHOOK_RETRY_DELAYS_S: '5,15,30,60',
    WEBHOOK_TIMEOUT_MS: '5000',
    OPENAI_COMPATIBLE_BASE_URL: modelUrl,
    OPENAI_COMPATIBLE_API_KEY: 'chaos',
    DEFAULT_MODEL: 'openai-compatible:chaos-model',
    MODEL_PRICES: JSON.stringify({ 'openai-compatible:chaos-model': { inputPerMTok: 0.1, outputPerMTok: 0.1 } }),
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    SMTP_FROM: 'Chaos <team@chaos.example>',
    WHATSAPP_API_BASE_URL: whatsapp.url('').replace(/\/$/, ''),
    TELEGRAM_API_BASE_URL: telegram.url('').replace(/\/$/, ''),
  };
  const instances = Array.from({ length: options.instances }, (_, i) => new Instance(i, env, options.out));
  for (const instance of instances) {
    instance.onCrash = (crashed) => {
      log(`instance ${crashed.index} exited on its own (see instance-${crashed.index}.log): restarting it`);
      setTimeout(() => void crashed.start().catch((e: Error) => log(`instance ${crashed.index} did not restart: ${e.message}`)), 1000);
    };
  }
  const recorder = new Recorder(options.windowMs);
  const api = new ChaosApi(instances, recorder, owner);
  const counters = new Map<string, number>();
  const abort = new AbortController();
  const faultRecords: FaultRecord[] = [];
  const loads: Load[] = [];
  const report: Report = {
    seed: options.seed,
    options,
    startedAt: new Date(started).toISOString(),
    checks: [],
    faults: faultRecords,
    counters,
    recorder,
    instances,
    cluster,
    loads: [],
    errors: [],
    queueDepths: [],
  };

  // The harness must outlive what it tests: an error of a stand-in's connection (a killed instance
  // dropped it) is recorded, not fatal; Ctrl-C stops the instances and the cluster before leaving.
  const stray = (error: unknown) => report.errors.push(`harness: ${(error as Error)?.stack ?? error}`);
  process.on('uncaughtException', stray);
  process.on('unhandledRejection', stray);
  const interrupted = async () => {
    log('interrupted: stopping the instances and the cluster');
    await Promise.all(instances.map((i) => i.kill().catch(() => undefined)));
    await cluster.destroy(options.keep);
    process.exit(130);
  };
  process.once('SIGINT', () => void interrupted());
  process.once('SIGTERM', () => void interrupted());

  try {
    // The first instance migrates the new database; the others start together after it.
    await instances[0]!.start();
    await Promise.all(instances.slice(1).map((i) => i.start()));
    log(`${instances.length} instances up: ${instances.map((i) => `:${i.port}`).join(' ')}`);
    await api.signIn();

    const world: World = {
      api,
      rng: fork(options.seed, 'world'),
      sql: async <T>(text: string, params?: unknown[]) => (await pool.query(text, params)).rows as T[],
      standIn: async (name, opts) => newStandIn(name, opts?.faults ?? true),
      smtp,
      model,
      whatsapp,
      telegram,
      env,
      scale: options.rate,
      durationMs: options.durationMs,
      signal: abort.signal,
      log,
      count: (name, by = 1) => counters.set(name, (counters.get(name) ?? 0) + by),
    };

    for (const name of options.only) {
      const file = join(ROOT, 'chaos', 'loads', `${name}.ts`);
      let load: Load;
      try {
        load = ((await import(file)) as { load: Load }).load;
      } catch (error) {
        report.errors.push(`load ${name} could not be loaded: ${(error as Error).message}`);
        log(`load ${name}: not loaded (${(error as Error).message.split('\n')[0]})`);
        continue;
      }
      const loadWorld: World = { ...world, rng: fork(options.seed, name) };
      log(`setup ${name}`);
      await load.setup(loadWorld);
      loads.push(load);
      report.loads.push(name);
      worlds.set(load, loadWorld);
    }

    // Load, background work, memory samples, queue depths, faults.
    const running: Promise<unknown>[] = [];
    const loadStart = Date.now();
    recorder.started = loadStart;
    const loadEnd = loadStart + options.durationMs;
    for (const load of loads) {
      const w = worlds.get(load)!;
      if (load.background) running.push(load.background(w).catch((e: Error) => report.errors.push(`${load.name} background: ${e.stack ?? e.message}`)));
      running.push(drive(load, w, loadEnd, abort.signal, report));
    }
    const sampler = setInterval(() => {
      for (const i of instances) i.sampleRss();
      // No load reads the model stand-in's request log: an hour of it is memory for nothing.
      model.requests.length = 0;
    }, 5000);
    const depthTimer = setInterval(() => void sampleQueues(instances, recorder, report), options.windowMs);
    const faultsDone = options.faults
      ? runFaults(options, loadStart, { instances, cluster, standIns: () => standIns, rng: fork(options.seed, 'faults'), log }, faultRecords)
      : Promise.resolve();
    const progress = setInterval(() => log(progressLine(recorder, counters, instances)), Math.min(60_000, options.windowMs));

    await pause(Math.max(0, loadEnd - Date.now()));
    log('load ends');
    abort.abort();
    await faultsDone;
    clearInterval(progress);
    await Promise.race([Promise.all(running), pause(30_000)]);
    for (const i of instances) if (i.state === 'down') await i.start();
    await sampleQueues(instances, recorder, report);

    // Every promise, with a deadline for the system to finish what it accepted.
    const deadline = Date.now() + options.settleMs;
    log(`settling and checking (up to ${Math.round(options.settleMs / 1000)} s)`);
    const results = await Promise.all(
      loads.map(async (load) => {
        try {
          return (await load.check(worlds.get(load)!, deadline)).map((c) => ({ ...c, promise: `${load.name}: ${c.promise}` }));
        } catch (error) {
          return [{ promise: `${load.name}: checks ran`, count: 1, violations: [`the check threw: ${(error as Error).stack ?? error}`] }] satisfies Check[];
        }
      }),
    );
    report.checks.push(...results.flat());
    for (const i of instances) i.sampleRss();
    clearInterval(sampler);
    clearInterval(depthTimer);
    report.checks.push(...platformChecks(report, options));
  } catch (error) {
    report.errors.push(`the run failed: ${(error as Error).stack ?? error}`);
  } finally {
    abort.abort();
    await Promise.all(instances.map((i) => i.stopAtEnd().catch(() => undefined)));
    for (const i of instances) i.close();
    await pool.end().catch(() => undefined);
    await Promise.all(standIns.map((s) => s.stop()));
    await smtp.close();
    await model.stop();
    await cluster.destroy(options.keep);
  }
  printReport(report);
  writeFileSync(join(options.out, 'report.json'), JSON.stringify(toJson(report), null, 2));
  return report;
}

const worlds = new Map<Load, World>();

/** Calls tick at the load's rate until the end, with at most 32 ticks of one load in flight. */
async function drive(load: Load, world: World, until: number, signal: AbortSignal, report: Report): Promise<void> {
  const perSecond = load.ratePerSecond * world.scale;
  if (perSecond <= 0) return;
  const interval = 1000 / perSecond;
  let inFlight = 0;
  let next = Date.now();
  const errors = new Set<string>();
  while (!signal.aborted && Date.now() < until) {
    next += interval;
    if (inFlight < 32) {
      inFlight++;
      void load
        .tick(world)
        .catch((error: Error) => {
          world.count(`${load.name} tick errors`);
          const first = (error.message ?? String(error)).split('\n')[0]!;
          if (errors.size < 10 && !errors.has(first)) {
            errors.add(first);
            report.errors.push(`${load.name} tick: ${first}`);
          }
        })
        .finally(() => inFlight--);
    } else world.count(`${load.name} ticks skipped (32 in flight)`);
    await pause(Math.max(0, next - Date.now()));
  }
  const drained = Date.now() + 30_000;
  while (inFlight > 0 && Date.now() < drained) await pause(100);
}

async function runFaults(options: Options, loadStart: number, targets: Parameters<typeof inject>[1], records: FaultRecord[]): Promise<void> {
  for (const fault of schedule(targets.rng, options.durationMs)) {
    await pause(Math.max(0, loadStart + fault.at - Date.now()));
    try {
      records.push(await inject(fault, targets));
    } catch (error) {
      records.push({ ...fault, target: '?', outcome: `failed: ${(error as Error).message}`, startedAt: Date.now() });
    }
  }
}

/** worker_queue_depth of every queue, read from one live instance's metrics. */
async function sampleQueues(instances: Instance[], recorder: Recorder, report: Report): Promise<void> {
  const live = instances.find((i) => i.state === 'up');
  if (!live) return;
  const text = await fetch(`http://127.0.0.1:${live.metricsPort}/metrics`, { signal: AbortSignal.timeout(5000) })
    .then((r) => r.text())
    .catch(() => '');
  const depths: Record<string, number> = {};
  for (const match of text.matchAll(/^worker_queue_depth\{queue="([^"]+)"\} (\S+)$/gm)) depths[match[1]!] = Number(match[2]);
  report.queueDepths.push({ window: recorder.window(Date.now()), at: Date.now(), depths });
}

function progressLine(recorder: Recorder, counters: Map<string, number>, instances: Instance[]): string {
  let answered = 0;
  for (const w of recorder.windows) for (const list of w.values()) answered += list.length;
  const unanswered = [...recorder.unanswered.values()].reduce((a, b) => a + b, 0);
  const up = instances.map((i) => `${i.index}:${i.state}`).join(' ');
  const extra = [...counters]
    .slice(0, 6)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return `requests ${answered} answered, ${unanswered} unanswered, ${recorder.serverErrors.length} 5xx; instances ${up}${extra ? `; ${extra}` : ''}`;
}

/**
 * The run's own promises: no 5xx but while PostgreSQL was down (and 15 s after, for pools to
 * reconnect), every SIGTERM a clean exit, and each instance's memory at the end within a bound of
 * its baseline after warm-up.
 */
function platformChecks(report: Report, options: Options): Check[] {
  const graceMs = 15_000;
  const downs = report.cluster.downtimes;
  const duringDown = (at: number) => downs.some((d) => at >= d.from - 1000 && at <= d.to + graceMs);
  const errors = report.recorder.serverErrors;
  const outside = errors.filter((e) => !duringDown(e.at));
  const checks: Check[] = [
    {
      promise: `no 5xx except while PostgreSQL was down (${errors.length - outside.length} while down)`,
      count: errors.length,
      violations: outside.map((e) => `${new Date(e.at).toISOString()} ${e.routeClass} ${e.status} on instance ${e.instance}: ${e.body}`),
    },
  ];
  const crashes = report.instances.flatMap((i) => i.lives.filter((l) => l.end === 'crashed').map((l) => ({ i, l })));
  checks.push({
    promise: 'no instance exits unless stopped',
    count: report.instances.reduce((n, i) => n + i.lives.length, 0),
    violations: crashes.map(
      ({ i, l }) =>
        `instance ${i.index} pid ${l.pid} exited ${l.exitCode} at +${Math.round((l.endedAt! - report.recorder.started) / 1000)} s (instance-${i.index}.log)`,
    ),
  });
  const terms = report.faults.filter((f) => f.kind === 'SIGTERM' && f.target !== 'none');
  // A graceful stop ends within SHUTDOWN_GRACE_MS (10 s) and a margin; past the grace the service
  // exits 1 by design (work in flight is left to its lease), which is counted, not a violation.
  const stopWithinMs = 10_000 + 5_000;
  const late = terms.filter((f) => !f.exit || f.exit.ms > stopWithinMs);
  checks.push({
    promise: `SIGTERM ends the process within the grace time (${terms.filter((f) => f.exit?.code === 0).length} exited 0, ${terms.filter((f) => f.exit && f.exit.code !== 0).length} at the grace's end)`,
    count: terms.length,
    violations: late.map((f) => `${f.target}: ${f.outcome}`),
  });
  const bounded: string[] = [];
  let measured = 0;
  for (const instance of report.instances) {
    for (const life of instance.lives) {
      const baseline = life.rss.find((s) => s.at >= life.startedAt + options.warmupMs);
      const last = life.rss.at(-1);
      if (!baseline || !last || last.at - baseline.at < options.warmupMs / 2) continue;
      measured++;
      const bound = baseline.bytes * options.rssGrowth + 64 * 1024 * 1024;
      if (last.bytes > bound)
        bounded.push(`instance ${instance.index} pid ${life.pid}: ${mb(baseline.bytes)} after warm-up, ${mb(last.bytes)} at the end (bound ${mb(bound)})`);
    }
  }
  checks.push({ promise: `memory at the end within ${options.rssGrowth}× its warm baseline + 64 MB`, count: measured, violations: bounded });
  return checks;
}

const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;

function toJson(report: Report) {
  return {
    seed: report.seed,
    options: report.options,
    startedAt: report.startedAt,
    loads: report.loads,
    checks: report.checks,
    faults: report.faults,
    counters: Object.fromEntries(report.counters),
    errors: report.errors,
    serverErrors: report.recorder.serverErrors,
    postgresDowntimes: report.cluster.downtimes,
    lives: report.instances.flatMap((i) => i.lives.map((l) => ({ ...l, rss: l.rss.filter((_, k) => k % 12 === 0 || k === l.rss.length - 1) }))),
    queueDepths: report.queueDepths,
  };
}

if (import.meta.main) {
  let options: Options | null;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    console.error(HELP);
    process.exit(2);
  }
  if (!options) {
    console.log(HELP);
    process.exit(0);
  }
  const report = await chaos(options);
  const broken = report.checks.some((c) => c.violations.length > 0) || report.errors.some((e) => e.startsWith('the run failed'));
  process.exit(broken ? 1 : 0);
}
