import { randomBytes } from 'node:crypto';
import { and, asc, eq, inArray, lt, notInArray } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { transaction } from '../../platform/db.ts';
import type { Bus } from '../../platform/bus.ts';
import type { EventsPort } from './ports.ts';
import { finishedEvent, publishDone, SHUTDOWN, type AgentEngine, type RunRow } from './engine.ts';
import { publicStep, runChannel, type RunMessage, type StepStore } from './steps.ts';
import { agentRuns, agentSteps } from './tables.ts';
import { CONVERSATIONAL_TYPES } from './catalog.ts';

/** Bus channel that wakes the agent runners of every instance (a run was queued). */
export const AGENTS_WAKE = 'wake:agents';
/** Bus channel carrying `{ runId }` of a canceled run to the instance executing it. */
export const AGENT_CANCEL = 'agent-cancel';

interface Active {
  controller: AbortController;
  done: Promise<unknown>;
}

/**
 * Executes agent runs on this instance: claims QUEUED runs (SKIP LOCKED) up to AGENT_CONCURRENCY,
 * keeps the lease of every run it executes fresh, aborts a run when its cancel arrives on the bus,
 * and ends runs whose lease expired (their instance died) as failed — never RUNNING forever.
 */
export class AgentRunner {
  readonly owner = randomBytes(6).toString('hex');
  private readonly deps: Deps;
  private readonly engine: AgentEngine;
  private readonly events: EventsPort;
  private readonly steps: StepStore;
  private readonly bus: Bus;
  private readonly active = new Map<string, Active>();
  private heartbeat: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(deps: Deps, engine: AgentEngine, events: EventsPort, steps: StepStore, bus: Bus) {
    this.deps = deps;
    this.engine = engine;
    this.events = events;
    this.steps = steps;
    this.bus = bus;
    bus.subscribe(AGENT_CANCEL, (message) => this.abort((message as { runId?: string })?.runId ?? ''));
  }

  get leaseMs(): number {
    return this.deps.config.agentLeaseMs;
  }

  leaseUntil(): Date {
    return new Date(this.deps.clock.now().getTime() + this.leaseMs);
  }

  get activeCount(): number {
    return this.active.size;
  }

  abort(runId: string): void {
    this.active.get(runId)?.controller.abort(new Error('canceled'));
  }

  /** One worker round: end expired runs, then claim what fits. */
  async round(): Promise<boolean> {
    await this.recover();
    if (this.stopped) return false;
    const free = this.deps.config.agentConcurrency - this.active.size;
    if (free <= 0) return false;
    const claimed = await this.claim(free);
    for (const row of claimed) this.launch(row);
    return false;
  }

  private async claim(limit: number): Promise<RunRow[]> {
    return transaction(this.deps.db, async (tx) => {
      // A conversation's turns are taken by the conversations bot's loop (one at a time per conversation).
      const queued = await tx
        .select({ id: agentRuns.id })
        .from(agentRuns)
        .where(and(eq(agentRuns.status, 'QUEUED'), notInArray(agentRuns.type, CONVERSATIONAL_TYPES)))
        .orderBy(asc(agentRuns.id))
        .limit(limit)
        .for('update', { skipLocked: true });
      if (queued.length === 0) return [];
      const now = this.deps.clock.now();
      return tx
        .update(agentRuns)
        .set({ status: 'RUNNING', startedAt: now, leaseOwner: this.owner, leaseUntil: this.leaseUntil() })
        .where(
          inArray(
            agentRuns.id,
            queued.map((q) => q.id),
          ),
        )
        .returning();
    });
  }

  private launch(row: RunRow): void {
    void this.track(row, []).catch((error: unknown) => this.deps.log.error({ err: error, agentRunId: row.id }, 'agent run crashed'));
  }

  /** Executes a run this instance holds (claimed, or created RUNNING by runInline) to its end. */
  async track(row: RunRow, signals: AbortSignal[]): Promise<RunRow> {
    const controller = new AbortController();
    const signal = signals.length ? AbortSignal.any([controller.signal, ...signals]) : controller.signal;
    const done = this.engine.execute(row, signal);
    this.active.set(row.id, { controller, done });
    this.ensureHeartbeat();
    try {
      return await done;
    } finally {
      this.active.delete(row.id);
      if (this.active.size === 0 && this.heartbeat) {
        clearInterval(this.heartbeat);
        this.heartbeat = null;
      }
      // A slot is free: this instance's agents loop (src/workers.ts listens) claims again.
      if (!this.stopped) this.bus.emitLocal(AGENTS_WAKE, null);
    }
  }

  private ensureHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(
      () => void this.renew().catch((error: unknown) => this.deps.log.warn({ err: error }, 'agent lease renewal failed')),
      Math.max(50, Math.floor(this.leaseMs / 3)),
    );
    this.heartbeat.unref();
  }

  private async renew(): Promise<void> {
    const ids = [...this.active.keys()];
    if (ids.length === 0) return;
    await this.deps.db
      .update(agentRuns)
      .set({ leaseUntil: this.leaseUntil() })
      .where(and(inArray(agentRuns.id, ids), eq(agentRuns.status, 'RUNNING'), eq(agentRuns.leaseOwner, this.owner)));
  }

  /**
   * RUNNING runs whose lease expired lost their instance: they end `failed` with an error step. The
   * step goes on the run's stream before `done`, so a reader following it live sees every step.
   */
  async recover(): Promise<number> {
    const now = this.deps.clock.now();
    const errorSteps = new Map<string, typeof agentSteps.$inferSelect>();
    const ended = await transaction(this.deps.db, async (tx) => {
      errorSteps.clear();
      const rows = await tx
        .update(agentRuns)
        .set({
          status: 'failed',
          error: 'The run was interrupted: the instance executing it stopped (lease expired)',
          finishedAt: now,
          leaseOwner: null,
          leaseUntil: null,
        })
        .where(and(eq(agentRuns.status, 'RUNNING'), lt(agentRuns.leaseUntil, now)))
        .returning();
      for (const row of rows) {
        const index = await this.steps.nextIndex(tx, row.id);
        const [step] = await tx.insert(agentSteps).values({ runId: row.id, orgId: row.orgId, index, type: 'error', at: now, text: row.error }).returning();
        errorSteps.set(row.id, step!);
        await tx
          .update(agentRuns)
          .set({ stepCount: index + 1, summary: row.summary ?? 'Interrupted.' })
          .where(eq(agentRuns.id, row.id));
        await this.events.record(tx, finishedEvent({ ...row, summary: row.summary ?? 'Interrupted.' }));
      }
      return rows;
    });
    for (const row of ended) {
      const step = errorSteps.get(row.id);
      if (step) await this.bus.publish(runChannel(row.id), { kind: 'step', step: publicStep(step) } satisfies RunMessage);
      await publishDone(this.bus, { ...row, summary: row.summary ?? 'Interrupted.' });
    }
    return ended.length;
  }

  /** Shutdown: runs in flight are aborted (they end failed, "server shut down") and awaited. */
  async stop(): Promise<void> {
    this.stopped = true;
    const running = [...this.active.values()];
    for (const a of running) a.controller.abort(SHUTDOWN);
    await Promise.allSettled(running.map((a) => a.done));
  }
}
