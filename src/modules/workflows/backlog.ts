import type { Clock } from '../../platform/clock.ts';
import type { Database } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';

export interface BacklogLimits {
  /** Queued runs of one workflow past which its triggers are refused (0: no bound). */
  perWorkflow: number;
  /** Queued runs of one organization past which its triggers are refused (0: no bound). */
  perOrg: number;
  /** Refuse while the organization's oldest queued run has waited longer than this (0: no bound). */
  maxAgeMs: number;
  /** Trigger requests one instance handles at once, past which it refuses more at once (0: no bound). */
  inFlight: number;
  /**
   * Queued runs of the organization below which their age refuses nothing (the instance's
   * WORKFLOW_CONCURRENCY): a queue that one claim empties is the wait for the next claim, not a
   * backlog. Past capacity the queue outgrows it at once.
   */
  agedFrom: number;
}

interface Reading {
  at: number;
  /** Queued runs by workflow (counted up to perOrg in all). */
  byWorkflow: Map<string, number>;
  total: number;
  oldest: number | null;
}

/** How long one reading of an organization's queue answers its triggers. */
const READING_MS = 100;

/**
 * Backpressure at the triggers that can say no (the webhook trigger, POST …/run): a run is queued
 * only while its workflow's and its organization's queues are within their bounds, and the
 * organization's oldest queued run has not waited past RUN_QUEUE_MAX_AGE_MS. Past capacity, the
 * queue's age is what grows: that bound keeps the accepted work's wait short and refuses the excess
 * with 429 RATE_LIMIT and Retry-After, instead of a backlog that takes minutes to drain. Runs that
 * events and schedules start are never refused here (nobody could be told to retry).
 *
 * The queue is read from the database (one bounded index scan per organization and READING_MS,
 * shared by the concurrent triggers of that moment), so the bounds hold for all instances
 * together, give or take the triggers of one reading.
 */
export class RunBacklog {
  private readonly readings = new Map<string, Promise<Reading>>();
  private readonly database: Database;
  private readonly clock: Clock;
  private readonly limits: BacklogLimits;
  private triggersInFlight = 0;

  constructor(database: Database, clock: Clock, limits: BacklogLimits) {
    this.database = database;
    this.clock = clock;
    this.limits = limits;
  }

  /**
   * Runs `handle` (a trigger's whole handling: finding the workflow, admission, queueing) while
   * this instance handles fewer than RUN_TRIGGERS_IN_FLIGHT triggers; past that, 429 at once,
   * before any database work. Requests beyond what the database can answer would otherwise wait
   * for its connections in front of the runs' own statements (on the embedded store, for its one
   * connection), slowing every run under way.
   */
  async gate<T>(handle: () => Promise<T>): Promise<T> {
    const max = this.limits.inFlight;
    if (max > 0 && this.triggersInFlight >= max) {
      throw refusal(`This instance is handling ${this.triggersInFlight} triggers at once (at most ${max}); retry shortly`, {
        queue: 'instance',
        inFlight: this.triggersInFlight,
        limit: max,
      });
    }
    this.triggersInFlight++;
    try {
      return await handle();
    } finally {
      this.triggersInFlight--;
    }
  }

  private get enabled(): boolean {
    return this.limits.perWorkflow > 0 || this.limits.perOrg > 0 || this.limits.maxAgeMs > 0;
  }

  /**
   * Throws 429 RATE_LIMIT (Retry-After) when a run of this workflow should not be queued now.
   * `arrivedAt` (performance.now() when the trigger's request arrived): a request that has been in
   * this instance longer than RUN_QUEUE_MAX_AGE_MS by the time it is admitted, while other triggers
   * are in flight here, is refused too. The instance itself is the queue then (its database
   * connections busy; on the embedded store, its one connection), and a run accepted now would
   * start later than the bound allows. A lone request that was slow (a cold start, a pause) queues
   * nothing behind it, and neither does a queue shorter than `agedFrom`: those are not refused.
   */
  async admit(orgId: string, workflowId: string, arrivedAt?: number): Promise<void> {
    if (!this.enabled) return;
    const { perWorkflow, perOrg, maxAgeMs, agedFrom } = this.limits;
    const reading = await this.read(orgId);
    const inInstance = arrivedAt === undefined ? 0 : performance.now() - arrivedAt;
    if (maxAgeMs > 0 && inInstance > maxAgeMs && this.triggersInFlight > 1) {
      const ms = Math.round(inInstance);
      throw refusal(`This trigger waited ${ms} ms in the service before it could queue a run (at most ${maxAgeMs}); retry shortly`, {
        queue: 'instance',
        waitedMs: ms,
        limit: maxAgeMs,
      });
    }
    const queued = reading.byWorkflow.get(workflowId) ?? 0;
    if (perWorkflow > 0 && queued >= perWorkflow) {
      throw refusal(`This workflow has ${queued} runs waiting to start (at most ${perWorkflow}); retry shortly`, {
        queue: 'workflow',
        queued,
        limit: perWorkflow,
      });
    }
    if (perOrg > 0 && reading.total >= perOrg) {
      throw refusal(`This organization has ${reading.total} runs waiting to start (at most ${perOrg}); retry shortly`, {
        queue: 'organization',
        queued: reading.total,
        limit: perOrg,
      });
    }
    const waited = reading.oldest === null ? 0 : this.clock.now().getTime() - reading.oldest;
    if (maxAgeMs > 0 && waited > maxAgeMs && reading.total >= agedFrom) {
      throw refusal(`Runs of this organization are waiting ${waited} ms to start (at most ${maxAgeMs}); retry shortly`, {
        queue: 'organization',
        queued: reading.total,
        oldestWaitMs: waited,
        limit: maxAgeMs,
      });
    }
  }

  private read(orgId: string): Promise<Reading> {
    const now = this.clock.now().getTime();
    const cached = this.readings.get(orgId);
    if (cached) {
      return cached.then((r) => (now - r.at < READING_MS && now >= r.at ? r : this.fresh(orgId, now)));
    }
    return this.fresh(orgId, now);
  }

  private fresh(orgId: string, now: number): Promise<Reading> {
    const reading = this.database
      .prepared<{ workflow_id: string; queued: number; oldest: Date | string }>('run_backlog', BACKLOG_SQL, [
        orgId,
        this.limits.perOrg > 0 ? this.limits.perOrg : null,
      ])
      .then((rows) => {
        const byWorkflow = new Map(rows.map((r) => [r.workflow_id, Number(r.queued)]));
        const oldest = rows.length ? Math.min(...rows.map((r) => new Date(r.oldest).getTime())) : null;
        return { at: now, byWorkflow, total: [...byWorkflow.values()].reduce((a, b) => a + b, 0), oldest };
      });
    this.readings.set(orgId, reading);
    reading.catch(() => this.readings.delete(orgId));
    // Forget organizations that went quiet (the map holds at most the recent ones).
    if (this.readings.size > 10_000) this.readings.clear();
    return reading;
  }
}

const refusal = (message: string, details: Record<string, unknown>) => new AppError(429, 'RATE_LIMIT', message, details, { 'retry-after': '1' });

/** The organization's queued runs by workflow (the oldest first, at most $2 of them), on workflow_runs_queued_idx. */
const BACKLOG_SQL = `select workflow_id, count(*)::int as queued, min(created_at) as oldest
  from (select workflow_id, created_at from workflow_runs where org_id = $1 and status = 'QUEUED' order by created_at limit $2) q
  group by workflow_id`;
