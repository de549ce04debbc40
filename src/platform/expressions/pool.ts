import { Piscina } from 'piscina';
import { ExpressionError, ExpressionLimitError, shown } from './compiled.ts';
import { STARTED, type EvaluationAnswer, type EvaluationTask } from './worker.ts';
import { expressionLimits } from './limits.ts';

/**
 * Where user expressions that are not provably cheap (analysis.ts) are evaluated: a pool of worker
 * threads (piscina), shared by every caller of the process — workflow steps, the editor's preview,
 * campaign rendering. On the server's own thread one expression held every request: JSONata checks
 * its time limit between evaluation steps, so a recursion cost a second of the event loop per
 * evaluation, and one built-in call is one step (`$sort([1..10000])` ran 3.2 s, `[1..20000]` 8 s and
 * 420 MB, past any limit). A worker that overruns is terminated and replaced; its heap is capped.
 *
 * Organizations share the threads fairly. Each has its own queue; a free thread goes to the waiting
 * organization that used the least worker time lately (decayed with a 10 s half-life) — start-time
 * fair queueing by measured cost, as Linux's CFS picks the task with the least virtual runtime and
 * Kubernetes' API Priority and Fairness queues each flow apart — and no organization runs more than
 * `perOrg` evaluations at once (by default one thread fewer than the pool). So an organization that
 * floods the pool holds at most its share, while another's evaluation takes the next free thread,
 * ahead of the flood: queued work waits (callers are bounded: the run driver's concurrency, one
 * campaign batch at a time, the rate limit) instead of being refused, and no thread is kept idle
 * while work waits, which a fixed token bucket per organization would do.
 */

export interface ExpressionPoolOptions {
  /** Worker threads. */
  threads: number;
  /** Evaluations of one organization running at once. */
  perOrg: number;
}

/** Half-life of an organization's remembered worker time. */
const HALF_LIFE_MS = 10_000;
/** A worker is terminated this long after the evaluation's own time limit: JSONata's limit, checked between steps, speaks first when it can. */
const GRACE_MS = 100;
/** A worker that has not started a task this long after it was handed (its thread never came up) is terminated too. */
const START_MS = 30_000;
/** A worker's heap: an evaluation that outgrows it ends in EXPRESSION_LIMIT, not in the process's out-of-memory crash. */
const HEAP_MB = 256;
/**
 * The workers' threads run at a lower CPU priority (nice +10, through piscina's @napi-rs/nice) than
 * the server's thread: on a machine whose cores the workers keep busy, requests still get the CPU
 * first. On 2 cores, with one organization's recursions keeping a worker busy, the other's /healthz
 * p50 went 0.9 → 4.1 ms and its lead list p99 51 → 560 ms at the same priority, 0.9 → 0.9 ms and
 * 98 → 33 ms niced (bench/expressions, embedded store, 5 s phases).
 */
const NICE = 10;

type Task = Omit<EvaluationTask, 'id' | 'limits'>;

interface Job {
  task: Task;
  queuedAt: number;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface OrgState {
  queue: Job[];
  running: number;
  /** Worker milliseconds used, as of `at` (decayed). */
  usedMs: number;
  at: number;
}

function decayed(org: OrgState, now: number): number {
  return org.usedMs * 2 ** (-(now - org.at) / HALF_LIFE_MS);
}

export class ExpressionPool {
  private piscina: Piscina | null = null;
  private readonly orgs = new Map<string, OrgState>();
  private running = 0;
  private nextId = 0;
  /** Called when the worker tells that task `id` started. */
  private readonly started = new Map<number, () => void>();
  /** Terminated workers' slots, held until piscina has a replacement up. */
  private readonly replacing: { org: OrgState; timer: NodeJS.Timeout }[] = [];
  private closed = false;
  private drained: (() => void) | null = null;

  readonly options: ExpressionPoolOptions;

  constructor(options: ExpressionPoolOptions) {
    this.options = options;
  }

  /** Evaluates in a worker, in `orgId`'s turn; a failure rejects with the ExpressionError it would have raised inline. */
  evaluate(orgId: string, task: Task): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the expression pool is closed'));
    return new Promise((resolve, reject) => {
      let org = this.orgs.get(orgId);
      if (!org) this.orgs.set(orgId, (org = { queue: [], running: 0, usedMs: 0, at: performance.now() }));
      org.queue.push({ task, queuedAt: performance.now(), resolve, reject });
      this.pump();
    });
  }

  /** What waits and runs, per organization (tests, metrics). */
  load(orgId: string): { queued: number; running: number } {
    const org = this.orgs.get(orgId);
    return { queued: org?.queue.length ?? 0, running: org?.running ?? 0 };
  }

  /** Finishes what was handed in, then stops the threads. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.running > 0 || [...this.orgs.values()].some((o) => o.queue.length))
      await new Promise<void>((resolve) => {
        this.drained = resolve;
      });
    await this.piscina?.destroy();
    this.piscina = null;
  }

  /** Starts the threads now rather than at the first evaluation that needs them. */
  start(): void {
    if (!this.closed) this.threads();
  }

  private threads(): Piscina {
    if (!this.piscina) {
      this.piscina = new Piscina({
        filename: new URL('./worker.ts', import.meta.url).href,
        minThreads: this.options.threads,
        maxThreads: this.options.threads,
        resourceLimits: { maxOldGenerationSizeMb: HEAP_MB },
        niceIncrement: NICE,
      });
      this.piscina.on('message', (message: Record<string, unknown> | null) => {
        const id = message?.[STARTED];
        if (typeof id === 'number') this.started.get(id)?.();
      });
      this.piscina.on('workerCreate', () => this.replaced());
      // A worker that fails with no task in hand (its task's failure reaches the task): piscina replaces it.
      this.piscina.on('error', () => {});
    }
    return this.piscina;
  }

  /** Hands tasks to free threads, each to the waiting organization with the least recent worker time. */
  private pump(): void {
    while (this.running < this.options.threads) {
      const now = performance.now();
      let best: OrgState | null = null;
      let bestUsed = Infinity;
      for (const org of this.orgs.values()) {
        if (!org.queue.length || org.running >= this.options.perOrg) continue;
        const used = decayed(org, now);
        if (used < bestUsed || (used === bestUsed && org.queue[0]!.queuedAt < best!.queue[0]!.queuedAt)) {
          best = org;
          bestUsed = used;
        }
      }
      if (!best) return;
      const job = best.queue.shift()!;
      best.running++;
      this.running++;
      void this.run(best, job);
    }
  }

  private async run(org: OrgState, job: Job): Promise<void> {
    const id = ++this.nextId;
    const limits = { ...expressionLimits() };
    const controller = new AbortController();
    let killed = false;
    const kill = () => {
      killed = true;
      controller.abort();
    };
    let startedAt: number | null = null;
    let deadline = setTimeout(kill, limits.timeoutMs + START_MS).unref();
    this.started.set(id, () => {
      startedAt = performance.now();
      clearTimeout(deadline);
      deadline = setTimeout(kill, limits.timeoutMs + GRACE_MS).unref();
    });
    let terminated = false;
    try {
      const answer = (await this.threads().run({ ...job.task, id, limits } satisfies EvaluationTask, { signal: controller.signal })) as EvaluationAnswer;
      if ('value' in answer) job.resolve(answer.value);
      else job.reject(answer.error.code === 'EXPRESSION_LIMIT' ? new ExpressionLimitError(answer.error.message) : new ExpressionError(answer.error.message));
    } catch (error) {
      // Terminated at its deadline, or its heap ran out (the worker exits; piscina starts another).
      const stopped = (what: string) => new ExpressionLimitError(`expression "${shown(job.task.text)}" stopped: it ${what}`);
      terminated = killed || (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      if (killed) job.reject(stopped(`ran longer than ${limits.timeoutMs} ms`));
      else if (terminated) job.reject(stopped(`ran out of room (more than ${HEAP_MB} MB)`));
      else job.reject(error);
    } finally {
      clearTimeout(deadline);
      this.started.delete(id);
      const now = performance.now();
      org.usedMs = decayed(org, now) + (startedAt === null ? 0 : now - startedAt);
      org.at = now;
      // The thread it ended is the organization's until its replacement is up, so that the
      // replacement's start delays that organization's next evaluation, not another's.
      if (terminated) this.holdUntilReplaced(org);
      else this.release(org);
    }
  }

  private release(org: OrgState): void {
    org.running--;
    this.running--;
    this.forgetIdle(performance.now());
    this.pump();
    if (this.drained && this.running === 0) this.drained();
  }

  private holdUntilReplaced(org: OrgState): void {
    const hold = { org, timer: setTimeout(() => this.replaced(hold), START_MS).unref() };
    this.replacing.push(hold);
  }

  /** A worker came up (piscina's workerCreate, after its module loaded): it replaces the oldest terminated one. */
  private replaced(hold = this.replacing[0]): void {
    if (!hold || !this.replacing.includes(hold)) return;
    this.replacing.splice(this.replacing.indexOf(hold), 1);
    clearTimeout(hold.timer);
    this.release(hold.org);
  }

  /** Organizations with nothing waiting or running and little remembered time are forgotten. */
  private forgetIdle(now: number): void {
    if (this.orgs.size < 64) return;
    for (const [orgId, org] of this.orgs) {
      if (!org.queue.length && !org.running && decayed(org, now) < 1) this.orgs.delete(orgId);
    }
  }
}

let options: ExpressionPoolOptions = { threads: 2, perOrg: 1 };
let shared: ExpressionPool | null = null;

/**
 * The process's pool takes these options (from the configuration, when services are built). Like
 * the limits, the pool is process-wide: an app built again in the same process (the tests) keeps
 * it; other options replace it, the old one finishing what it was handed.
 */
export function configureExpressionPool(next: ExpressionPoolOptions): void {
  if (next.threads === options.threads && next.perOrg === options.perOrg) return;
  options = { ...next };
  const old = shared;
  shared = null;
  void old?.close();
}

/** The process's pool, started at its first use. Its threads do not keep the process alive while idle. */
export function expressionPool(): ExpressionPool {
  return (shared ??= new ExpressionPool(options));
}

/** Stops the process's pool (at shutdown, once the server and its workers have stopped). */
export async function closeExpressionPool(): Promise<void> {
  const old = shared;
  shared = null;
  await old?.close();
}
