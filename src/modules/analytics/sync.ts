import { and, eq, inArray, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import { rows, transaction, type Db } from '../../platform/db.ts';
import type { Deps } from '../../platform/deps.ts';
import { AppError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { isReauth, type GoogleAccess } from './access.ts';
import { addDays, dayOf, eachDay } from './days.ts';
import type { RuleEvaluator } from './evaluator.ts';
import { fetchGa4, fetchGsc, GoogleApiError, ZERO, type DayMetrics, type FailureKind, type GoogleApis, type Source } from './google.ts';
import type { AnalyticsPorts, IntegrationRow } from './ports.ts';
import { analyticsDaily, analyticsSyncRuns } from './tables.ts';

export const ANALYTICS_WAKE = 'wake:analytics';

/** The advisory lock the scheduler holds, and syncs asked for hold shared. */
export const SCHEDULE_LOCK = 'analytics-schedule';

/**
 * How far back every sync re-fetches, ending yesterday (UTC): GA4 revises the last days for about
 * 72 hours, Search Console's numbers arrive two to three days late. A sync that fetched only new
 * days would freeze the provisional numbers (Airbyte #26054); re-fetching and upserting replaces them.
 */
export const LOOKBACK_DAYS: Record<Source, number> = { ga4: 3, gsc: 4 };
/** An on-demand range is at most this long (two GA4 years of daily rows is ~730; a year and a half is plenty for a backfill per run). */
export const MAX_RANGE_DAYS = 500;

const BATCH = 4;
/** A run holds its lease this long: a few calls to Google, each with its own time-out. */
const LEASE_MS = 5 * 60_000;
const CALL_TIMEOUT_MS = 30_000;
/** Attempts of one run (rate limits, Google's 5xx, interrupted instances), then it fails. */
export const MAX_ATTEMPTS = 5;
const RETRY_DELAYS_S = [60, 300, 900, 1800];
const SCHEDULE_BATCH = 500;
/** The days a first scheduled sync fetches, for an integration no sync has succeeded for yet. */
export const BACKFILL_DAYS = 90;

type RunRow = typeof analyticsSyncRuns.$inferSelect;

/** The sources a google integration is set up for: GA4 with `config.propertyId`, Search Console with `config.siteUrl`. */
export function sourcesOf(row: Pick<IntegrationRow, 'provider' | 'config'>): { source: Source; key: string }[] {
  if (row.provider !== 'google') return [];
  const config = (row.config ?? {}) as Record<string, unknown>;
  const out: { source: Source; key: string }[] = [];
  if (typeof config.propertyId === 'string' && config.propertyId.trim() !== '') out.push({ source: 'ga4', key: config.propertyId.trim() });
  if (typeof config.siteUrl === 'string' && config.siteUrl.trim() !== '') out.push({ source: 'gsc', key: config.siteUrl.trim() });
  return out;
}

type Fetched =
  | { source: Source; ok: true; from: string; to: string; days: Map<string, DayMetrics> }
  | { source: Source; ok: false; kind: FailureKind; message: string; retryAfterS?: number };

const LABEL: Record<Source, string> = { ga4: 'GA4', gsc: 'Search Console' };

/**
 * The analytics sync worker: queues each google integration's daily run at ANALYTICS_SYNC_HOUR
 * (UTC), claims queued runs (FOR UPDATE SKIP LOCKED, leased, so any number of instances share the
 * work and a run whose instance died is taken again), fetches each source's range, and in one
 * transaction upserts a row per (integration, source, day) — zeros for the days Google has no row
 * for — records `analytics.synced` once per source and evaluates the rules.
 */
export class AnalyticsSync {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly log: FastifyBaseLogger;
  private readonly apis: GoogleApis;
  private readonly syncHour: number;
  private readonly ports: AnalyticsPorts;
  private readonly access: GoogleAccess;
  private readonly evaluator: RuleEvaluator;
  /** The clock's minute of the last schedule check: the check runs at most once a minute. */
  private checkedMinute = -1;

  constructor(deps: Deps, ports: AnalyticsPorts, access: GoogleAccess, evaluator: RuleEvaluator) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.log = deps.log;
    this.apis = googleApis(deps.config);
    this.syncHour = deps.config.analyticsSyncHour;
    this.ports = ports;
    this.access = access;
    this.evaluator = evaluator;
  }

  /** One round; true when there may be more work right away. */
  async round(): Promise<boolean> {
    const scheduled = await this.scheduleDue();
    const runs = await this.claim();
    await Promise.all(
      runs.map(async (run) => {
        try {
          await this.execute(run);
        } catch (error) {
          // The lease runs out and another round takes the run again (up to MAX_ATTEMPTS).
          this.log.error({ err: error, syncRunId: run.id }, 'analytics sync failed');
        }
      }),
    );
    return runs.length === BATCH || scheduled === SCHEDULE_BATCH;
  }

  /**
   * From ANALYTICS_SYNC_HOUR on each UTC day, one `schedule` run per connected google integration
   * with a property or site, for the lookback window ending yesterday — or, for an integration no
   * run has succeeded for yet, the last BACKFILL_DAYS (its history, as a connector's first sync
   * does). A day the service was down at that hour gets its run when it is back; an integration
   * connected later in the day gets one too.
   */
  async scheduleDue(): Promise<number> {
    const now = this.clock.now();
    if (now.getUTCHours() < this.syncHour) return 0;
    const minute = Math.floor(now.getTime() / 60_000);
    if (minute === this.checkedMinute) return 0;
    this.checkedMinute = minute;
    const to = addDays(dayOf(now), -1);
    const from = addDays(to, -(Math.max(LOOKBACK_DAYS.ga4, LOOKBACK_DAYS.gsc) - 1));
    const backfillFrom = addDays(to, -(BACKFILL_DAYS - 1));
    return transaction(this.db, async (tx) => {
      // One scheduler at a time across instances, so an integration gets one run a day; and no sync
      // asked for in between (those hold this lock shared), so each sees what the other queued.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${SCHEDULE_LOCK}))`);
      // The integrations to sync, a subquery of the integrations module's (through its port), in the
      // same statement as this module's own runs: one query instead of one per integration.
      const due = await rows<{ id: string; org_id: string; project_id: string | null; synced: boolean }>(
        tx,
        sql`
        select c.id, c.org_id, c.project_id, c.synced from (
          select i.id, i.org_id, i.project_id,
            exists (select 1 from analytics_sync_runs r where r.integration_id = i.id and r.status = 'succeeded') as synced
          from (${this.ports.integrations.googleToSync()}) i
          where not exists (select 1 from analytics_sync_runs r where r.integration_id = i.id and r.trigger in ('schedule', 'backfill') and r."to" = ${to})
        ) c
        -- A sync someone asked for (waiting, running or done) that covers the days this run would
        -- fetch stands for it: "Sync now" after the sync hour does not get the same days fetched twice.
        where not exists (select 1 from analytics_sync_runs r where r.integration_id = c.id and r.trigger = 'manual'
          and r.status in ('queued', 'running', 'succeeded') and r."to" >= ${to}
          and r."from" <= (case when c.synced then ${from} else ${backfillFrom} end)::text)
        order by c.id limit ${SCHEDULE_BATCH}`,
      );
      if (due.length === 0) return 0;
      await tx.insert(analyticsSyncRuns).values(
        due.map((r) => ({
          id: newId('syncRun', now.getTime()),
          orgId: r.org_id,
          projectId: r.project_id,
          integrationId: r.id,
          status: 'queued',
          trigger: r.synced ? 'schedule' : 'backfill',
          from: r.synced ? from : backfillFrom,
          to,
          createdAt: now,
        })),
      );
      return due.length;
    });
  }

  /** Queued runs whose time has come, and running ones whose lease ran out (their instance died). */
  private async claim(): Promise<RunRow[]> {
    const now = this.clock.now();
    // The claimed ids by the primary key (`= any(array(…))`), never by hashing the whole table.
    const claimed = await rows<{ id: string }>(
      this.db,
      sql`
      update analytics_sync_runs set status = 'running', attempts = attempts + 1,
        locked_until = ${new Date(now.getTime() + LEASE_MS).toISOString()}::timestamptz,
        started_at = coalesce(started_at, ${now.toISOString()}::timestamptz)
      where id = any(array(
        select id from analytics_sync_runs
        where status in ('queued', 'running') and (locked_until is null or locked_until <= ${now.toISOString()}::timestamptz)
        order by created_at limit ${BATCH}
        for update skip locked))
      returning id`,
    );
    const ids = claimed.map((r) => r.id);
    if (ids.length === 0) return [];
    return this.db.select().from(analyticsSyncRuns).where(inArray(analyticsSyncRuns.id, ids));
  }

  private async execute(run: RunRow): Promise<void> {
    if (run.attempts > MAX_ATTEMPTS) return this.finish(run, `The sync was interrupted ${MAX_ATTEMPTS} times`, null);
    const integration = await this.ports.integrations.row({ orgId: run.orgId, projectId: null }, run.integrationId);
    if (!integration) return this.finish(run, 'The integration was deleted', null);
    const sources = sourcesOf(integration);
    if (integration.provider !== 'google') return this.finish(run, `A ${integration.provider} integration has no analytics`, null);
    if (sources.length === 0) {
      return this.finish(
        run,
        'The integration has neither a GA4 property (config.propertyId) nor a Search Console site (config.siteUrl); GET …/integrations/:id/accounts lists them',
        null,
      );
    }
    if (integration.status === 'error') {
      return this.finish(run, `The integration needs to be reconnected: ${integration.lastError?.message ?? 'its authorization failed'}`, integration);
    }
    const token: { token?: string; refreshed?: boolean } = {};
    const fetched: Fetched[] = [];
    for (const { source, key } of sources) {
      // A scheduled run re-fetches each source's own lookback; an on-demand one, the range asked for.
      const from = run.trigger === 'schedule' ? maxDay(run.from, addDays(run.to, -(LOOKBACK_DAYS[source] - 1))) : run.from;
      try {
        const days = await this.access.call(integration, token, async (accessToken): Promise<Map<string, DayMetrics>> =>
          source === 'ga4' ? fetchGa4(this.apis, accessToken, key, from, run.to) : fetchGsc(this.apis, accessToken, key, from, run.to),
        );
        fetched.push({ source, ok: true, from, to: run.to, days });
      } catch (error) {
        if (isReauth(error)) return this.finish(run, (error as AppError).message, integration);
        if (error instanceof GoogleApiError) {
          fetched.push({ source, ok: false, kind: error.kind, message: `${LABEL[source]}: ${error.message}`, retryAfterS: error.retryAfterS });
        } else {
          // The token endpoint or anything else on the way: worth another try.
          fetched.push({ source, ok: false, kind: 'retry', message: `${LABEL[source]}: ${(error as Error).message || 'failed'}` });
        }
      }
    }
    const retry = fetched.find((f): f is Extract<Fetched, { ok: false }> => !f.ok && f.kind === 'retry');
    if (retry && run.attempts < MAX_ATTEMPTS) return this.later(run, retry);
    await this.complete(run, integration, fetched);
  }

  /** Rate-limited or Google unavailable: nothing is stored, the whole run is tried again after a pause. */
  private async later(run: RunRow, failure: Extract<Fetched, { ok: false }>): Promise<void> {
    const now = this.clock.now();
    const delayS = Math.max(RETRY_DELAYS_S[Math.min(run.attempts, RETRY_DELAYS_S.length) - 1] ?? 60, failure.retryAfterS ?? 0);
    await this.db
      .update(analyticsSyncRuns)
      .set({
        status: 'queued',
        lockedUntil: new Date(now.getTime() + delayS * 1000),
        error: `Attempt ${run.attempts} of ${MAX_ATTEMPTS} failed, trying again in ${delayS} s: ${failure.message}`.slice(0, 2000),
      })
      .where(and(eq(analyticsSyncRuns.id, run.id), eq(analyticsSyncRuns.status, 'running'), eq(analyticsSyncRuns.attempts, run.attempts)));
  }

  /** Failed before anything was fetched. With the integration, when it needs to be reconnected: its rules cannot be evaluated. */
  private async finish(run: RunRow, error: string, unavailable: IntegrationRow | null): Promise<void> {
    const now = this.clock.now();
    await transaction(this.db, async (tx) => {
      const updated = await tx
        .update(analyticsSyncRuns)
        .set({ status: 'failed', error: error.slice(0, 2000), finishedAt: now, lockedUntil: null })
        .where(and(eq(analyticsSyncRuns.id, run.id), eq(analyticsSyncRuns.status, 'running'), eq(analyticsSyncRuns.attempts, run.attempts)))
        .returning({ id: analyticsSyncRuns.id });
      if (updated.length > 0 && unavailable) await this.evaluator.unavailable(tx, unavailable, error);
    });
  }

  /** Stores what was fetched, every day of each range (zeros where Google had no row), its events and the rules' new states: one transaction. */
  private async complete(run: RunRow, integration: IntegrationRow, fetched: Fetched[]): Promise<void> {
    const now = this.clock.now();
    const stored = fetched.filter((f): f is Extract<Fetched, { ok: true }> => f.ok);
    const failures = fetched.filter((f): f is Extract<Fetched, { ok: false }> => !f.ok);
    await transaction(this.db, async (tx) => {
      // Still ours: a lease that ran out may have been taken by another instance since.
      const [current] = await tx.select().from(analyticsSyncRuns).where(eq(analyticsSyncRuns.id, run.id)).for('update');
      if (!current || current.status !== 'running' || current.attempts !== run.attempts) return;
      let rows = 0;
      for (const part of stored) {
        const values = eachDay(part.from, part.to).map((date) => ({
          integrationId: integration.id,
          source: part.source,
          date,
          orgId: integration.orgId,
          projectId: integration.projectId,
          metrics: part.days.get(date) ?? { ...ZERO[part.source] },
          updatedAt: now,
        }));
        for (let i = 0; i < values.length; i += 500) {
          await tx
            .insert(analyticsDaily)
            .values(values.slice(i, i + 500))
            .onConflictDoUpdate({
              target: [analyticsDaily.integrationId, analyticsDaily.source, analyticsDaily.date],
              // Revised numbers replace the provisional ones.
              set: { metrics: sql`excluded.metrics`, projectId: sql`excluded.project_id`, updatedAt: now },
            });
        }
        rows += values.length;
        const newest = values[values.length - 1]!;
        await this.ports.events.record(tx, {
          orgId: integration.orgId,
          projectId: integration.projectId,
          type: 'analytics.synced',
          payload: {
            integrationId: integration.id,
            source: part.source,
            date: newest.date,
            metrics: newest.metrics,
            syncRunId: run.id,
            from: part.from,
            to: part.to,
          },
        });
      }
      await tx
        .update(analyticsSyncRuns)
        .set({
          status: failures.length > 0 ? 'failed' : 'succeeded',
          rows,
          error:
            failures.length > 0
              ? failures
                  .map((f) => f.message)
                  .join('; ')
                  .slice(0, 2000)
              : null,
          finishedAt: now,
          lockedUntil: null,
        })
        .where(eq(analyticsSyncRuns.id, run.id));
      await this.evaluator.afterSync(
        tx,
        integration,
        stored.map((s) => s.source),
      );
    });
  }
}

function maxDay(a: string, b: string): string {
  return a > b ? a : b;
}

export function googleApis(config: Pick<Config, 'ga4ApiUrl' | 'ga4AdminApiUrl' | 'gscApiUrl'>): GoogleApis {
  return { ga4ApiUrl: config.ga4ApiUrl, ga4AdminApiUrl: config.ga4AdminApiUrl, gscApiUrl: config.gscApiUrl, timeoutMs: CALL_TIMEOUT_MS };
}
