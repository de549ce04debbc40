import { and, asc, desc, eq, gte, lte, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Scope } from '../../platform/context.ts';
import { transaction, type Db } from '../../platform/db.ts';
import type { Deps } from '../../platform/deps.ts';
import { AppError, badRequest, conflict, notFound, unprocessable } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import { assertCanChange, assertMayMakeOrgWide, inScope, inScopeOrgWide, type Tenant } from '../../platform/tenant.ts';
import { GoogleAccess, REAUTH_REQUIRED, isReauth } from './access.ts';
import { addDays, dayOf, daysInRange, isDay } from './days.ts';
import { localDate, rangeBound } from '../../platform/range.ts';
import { RuleEvaluator } from './evaluator.ts';
import { GoogleApiError, listGa4Properties, listGscSites, type Account, type GoogleApis, type Source } from './google.ts';
import type { AnalyticsPorts, IntegrationRow } from './ports.ts';
import { ANALYTICS_WAKE, AnalyticsSync, LOOKBACK_DAYS, MAX_RANGE_DAYS, SCHEDULE_LOCK, googleApis, sourcesOf } from './sync.ts';
import { analyticsDaily, analyticsRules, analyticsSyncRuns } from './tables.ts';

type RunRow = typeof analyticsSyncRuns.$inferSelect;
type RuleRow = typeof analyticsRules.$inferSelect;

export function publicSyncRun(row: RunRow) {
  return {
    id: row.id,
    integrationId: row.integrationId,
    projectId: row.projectId,
    status: row.status,
    trigger: row.trigger,
    from: row.from,
    to: row.to,
    rows: row.rows,
    error: row.error,
    attempts: row.attempts,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    createdAt: row.createdAt,
  };
}

export function publicRule(row: RuleRow) {
  return {
    id: row.id,
    name: row.name,
    projectId: row.projectId,
    integrationId: row.integrationId,
    metric: row.metric,
    compare: row.compare,
    threshold: row.threshold,
    window: row.window,
    minBaseline: row.minBaseline,
    state: row.state,
    lastValue: row.lastValue,
    lastEvaluatedAt: row.lastEvaluatedAt,
    lastFiredAt: row.lastFiredAt,
    error: row.error,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export interface RuleInput {
  name: string;
  projectId?: string | null;
  integrationId?: string | null;
  metric: string;
  compare: string;
  threshold: number;
  window: string;
  minBaseline?: number | null;
}

/** The longest range `GET …/analytics/daily` answers at once (two years and a day: a year against the year before). */
export const MAX_READ_DAYS = 731;
/** Rows one daily read may return: a range that would give more must be narrowed (an integration, a source). */
const MAX_DAILY_ROWS = 10_000;
const MAX_RULES_PER_ORG = 500;
/** Queued or running syncs one integration may have at once. */
const MAX_PENDING_RUNS = 10;

function dayProblem(field: string, value: string | undefined): AppError | null {
  if (value === undefined || isDay(value)) return null;
  return badRequest(`${field} must be a calendar day as YYYY-MM-DD (2000 to 2999), got "${value}"`, [{ field, message: 'must be a calendar day YYYY-MM-DD' }]);
}

/**
 * The day a range's end names (CONTRACT §6: a date, or an ISO 8601 timestamp): a date as it is; a
 * timestamp `from` is the UTC day holding it, a timestamp `to` (exclusive) the UTC day holding the
 * instant before it.
 */
function dayOfBound(value: string, which: 'from' | 'to'): string {
  if (isDay(value) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return value;
  const at = rangeBound(value, which, 'UTC', `querystring.${which}`).getTime();
  return localDate(which === 'to' ? at - 1 : at, 'UTC');
}

/**
 * Analytics of google integrations (CONTRACT §10): the properties and sites a connection can read,
 * syncs on demand and their records, the synced daily rows, and threshold rules. The daily sync
 * itself is the worker's (`AnalyticsSync`, run by the `analytics` loop).
 */
export class AnalyticsService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly ports: AnalyticsPorts;
  private readonly apis: GoogleApis;
  private readonly access: GoogleAccess;
  readonly evaluator: RuleEvaluator;
  readonly sync: AnalyticsSync;

  constructor(deps: Deps, ports: AnalyticsPorts) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.ports = ports;
    this.apis = googleApis(deps.config);
    this.access = new GoogleAccess(deps.db, ports.integrations);
    this.evaluator = new RuleEvaluator(deps.clock, ports);
    this.sync = new AnalyticsSync(deps, ports, this.access, this.evaluator);
  }

  /** A google integration the scope can see (its project's or an organization-wide one); 404 otherwise, 400 when it is another provider's. */
  private async googleIntegration(scope: Tenant, id: string): Promise<IntegrationRow> {
    const row = await this.ports.integrations.row(scope, id);
    if (!row) throw notFound('Integration');
    if (row.provider !== 'google') {
      throw badRequest(`Integration ${id} is a ${row.provider} integration; analytics come from google integrations`, [
        { field: 'params.id', message: 'must be a google integration' },
      ]);
    }
    return row;
  }

  /** The GA4 properties and Search Console sites the connection can read: what `config.propertyId` and `config.siteUrl` may be set to. */
  async accounts(scope: Scope, id: string): Promise<Account[]> {
    const row = await this.googleIntegration(scope, id);
    if (row.status === 'error')
      throw unprocessable(REAUTH_REQUIRED, `Integration ${id} needs to be reconnected: ${row.lastError?.message ?? 'its authorization failed'}`);
    const token: { token?: string; refreshed?: boolean } = {};
    const found: Account[] = [];
    const failures: GoogleApiError[] = [];
    for (const list of [listGa4Properties, listGscSites]) {
      try {
        found.push(...(await this.access.call(row, token, (accessToken) => list(this.apis, accessToken))));
      } catch (error) {
        if (isReauth(error) || !(error instanceof GoogleApiError)) throw error;
        failures.push(error);
      }
    }
    // One API refusing (not enabled for the connection, no access) leaves the other's list useful.
    if (failures.length === 2) {
      const message = failures.map((f) => f.message).join('; ');
      if (failures.some((f) => f.kind === 'retry')) throw new AppError(502, 'UPSTREAM', `Google could not list the accounts now, try again later: ${message}`);
      throw unprocessable('UPSTREAM_REJECTED', `Google refused to list the accounts: ${message}`);
    }
    return found;
  }

  /** Queues a sync of the integration: the requested days, or the lookback window ending yesterday (UTC). */
  async requestSync(scope: Scope, id: string, input: { from?: string; to?: string }): Promise<{ syncRunId: string; status: string }> {
    for (const problem of [dayProblem('body.from', input.from), dayProblem('body.to', input.to)]) if (problem) throw problem;
    const row = await this.googleIntegration(scope, id);
    assertCanChange(scope, row.projectId, 'This integration');
    if (sourcesOf(row).length === 0) {
      throw badRequest(
        `Integration ${id} has neither a GA4 property nor a Search Console site: set config.propertyId or config.siteUrl (PATCH …/integrations/${id}) to one of GET …/integrations/${id}/accounts`,
        [{ field: 'config', message: 'needs propertyId or siteUrl' }],
      );
    }
    if (row.status === 'error')
      throw unprocessable(REAUTH_REQUIRED, `Integration ${id} needs to be reconnected first: ${row.lastError?.message ?? 'its authorization failed'}`);
    const now = this.clock.now();
    const today = dayOf(now);
    const yesterday = addDays(today, -1);
    const to = input.to ?? (input.from && input.from > yesterday ? input.from : yesterday);
    const from = input.from ?? addDays(to, -(Math.max(LOOKBACK_DAYS.ga4, LOOKBACK_DAYS.gsc) - 1));
    if (to > today)
      throw badRequest(`to (${to}) is in the future; the newest day with numbers is today, ${today} (UTC)`, [
        { field: 'body.to', message: 'must not be after today' },
      ]);
    if (from > to) throw badRequest(`from (${from}) is after to (${to})`, [{ field: 'body.from', message: 'must not be after to' }]);
    if (daysInRange(from, to) > MAX_RANGE_DAYS) {
      throw badRequest(`A sync covers at most ${MAX_RANGE_DAYS} days; ${from} to ${to} is ${daysInRange(from, to)}. Sync a longer history in several runs`, [
        { field: 'body.from', message: `at most ${MAX_RANGE_DAYS} days before to` },
      ]);
    }
    return transaction(this.db, async (tx) => {
      // One request at a time per integration, and none while the daily schedule is being queued,
      // so the checks below hold across instances.
      await tx.execute(sql`select pg_advisory_xact_lock_shared(hashtext(${SCHEDULE_LOCK}))`);
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`analytics-sync:${row.id}`}))`);
      const pending = await tx
        .select()
        .from(analyticsSyncRuns)
        .where(
          and(eq(analyticsSyncRuns.orgId, row.orgId), eq(analyticsSyncRuns.integrationId, row.id), sql`${analyticsSyncRuns.status} in ('queued', 'running')`),
        );
      // These days (or more) already waiting or being fetched in full: that run answers this request
      // too. Not a daily `schedule` run: it fetches only each source's lookback.
      const same = pending.find((r) => r.trigger !== 'schedule' && r.from <= from && r.to >= to);
      if (same) return { syncRunId: same.id, status: same.status };
      if (pending.length >= MAX_PENDING_RUNS) throw conflict(`Integration ${id} has ${pending.length} syncs waiting; wait for them to finish`);
      const [run] = await tx
        .insert(analyticsSyncRuns)
        .values({
          id: newId('syncRun', now.getTime()),
          orgId: row.orgId,
          projectId: row.projectId,
          integrationId: row.id,
          status: 'queued',
          trigger: 'manual',
          from,
          to,
          createdAt: now,
        })
        .returning();
      await this.ports.bus.publishInTx(tx, ANALYTICS_WAKE, null);
      return { syncRunId: run!.id, status: run!.status };
    });
  }

  async listSyncRuns(scope: Scope, id: string, query: ListQuery & { status?: string }) {
    const row = await this.ports.integrations.row(scope, id);
    if (!row) throw notFound('Integration');
    const page = pageOf(query);
    const where = inScopeOrgWide(
      scope,
      analyticsSyncRuns,
      eq(analyticsSyncRuns.integrationId, id),
      query.status ? eq(analyticsSyncRuns.status, query.status) : undefined,
    );
    const [items, counted] = await Promise.all([
      this.db
        .select()
        .from(analyticsSyncRuns)
        .where(where)
        .orderBy(desc(analyticsSyncRuns.createdAt), desc(analyticsSyncRuns.id))
        .limit(page.limit)
        .offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(analyticsSyncRuns)
        .where(where),
    ]);
    return envelope(items.map(publicSyncRun), counted[0]?.n ?? 0, page);
  }

  /** The synced days of [from, to], oldest first: one item per (day, source, integration) the scope can see. */
  async daily(scope: Scope, given: { from: string; to: string; integrationId?: string; source?: Source }) {
    const query = { ...given, from: dayOfBound(given.from, 'from'), to: dayOfBound(given.to, 'to') };
    for (const problem of [dayProblem('querystring.from', query.from), dayProblem('querystring.to', query.to)]) if (problem) throw problem;
    if (query.from > query.to)
      throw badRequest(`from (${query.from}) is after to (${query.to})`, [{ field: 'querystring.from', message: 'must not be after to' }]);
    if (daysInRange(query.from, query.to) > MAX_READ_DAYS) {
      throw badRequest(`At most ${MAX_READ_DAYS} days at once; ${query.from} to ${query.to} is ${daysInRange(query.from, query.to)}`, [
        { field: 'querystring.from', message: `at most ${MAX_READ_DAYS} days before to` },
      ]);
    }
    if (query.integrationId && !(await this.ports.integrations.row(scope, query.integrationId))) throw notFound('Integration');
    const rows = await this.db
      .select({
        date: analyticsDaily.date,
        source: analyticsDaily.source,
        integrationId: analyticsDaily.integrationId,
        metrics: analyticsDaily.metrics,
      })
      .from(analyticsDaily)
      .where(
        inScopeOrgWide(
          scope,
          analyticsDaily,
          gte(analyticsDaily.date, query.from),
          lte(analyticsDaily.date, query.to),
          query.integrationId ? eq(analyticsDaily.integrationId, query.integrationId) : undefined,
          query.source ? eq(analyticsDaily.source, query.source) : undefined,
        ),
      )
      .orderBy(asc(analyticsDaily.date), asc(analyticsDaily.source), asc(analyticsDaily.integrationId))
      .limit(MAX_DAILY_ROWS + 1);
    if (rows.length > MAX_DAILY_ROWS) {
      throw badRequest(`More than ${MAX_DAILY_ROWS} rows: narrow the range, or name an integrationId or a source`, [
        { field: 'querystring.from', message: 'range too large for these filters' },
      ]);
    }
    return { items: rows.map((r) => ({ ...r, source: r.source as Source })) };
  }

  // ── Rules ────────────────────────────────────────────────────────────────────────────────────

  private async ruleRow(scope: Tenant, id: string): Promise<RuleRow> {
    const [row] = await this.db
      .select()
      .from(analyticsRules)
      .where(inScopeOrgWide(scope, analyticsRules, eq(analyticsRules.id, id)));
    if (!row) throw notFound('Rule');
    return row;
  }

  async listRules(scope: Scope, query: ListQuery & { integrationId?: string; state?: string; metric?: string }) {
    const page = pageOf(query);
    const where = inScopeOrgWide(
      scope,
      analyticsRules,
      query.integrationId ? eq(analyticsRules.integrationId, query.integrationId) : undefined,
      query.state ? eq(analyticsRules.state, query.state) : undefined,
      query.metric ? eq(analyticsRules.metric, query.metric) : undefined,
    );
    const [items, counted] = await Promise.all([
      this.db.select().from(analyticsRules).where(where).orderBy(desc(analyticsRules.createdAt), desc(analyticsRules.id)).limit(page.limit).offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(analyticsRules)
        .where(where),
    ]);
    return envelope(items.map(publicRule), counted[0]?.n ?? 0, page);
  }

  async getRule(scope: Scope, id: string) {
    return publicRule(await this.ruleRow(scope, id));
  }

  /** The rule's own checks, on the rule as it will be stored. */
  private check(rule: Pick<RuleInput, 'compare' | 'threshold'> & { minBaseline?: number | null }, prefix: string): void {
    if (rule.compare === 'pct_change' && rule.threshold < 0) {
      throw badRequest('A pct_change threshold is a percentage: 20 fires on a rise or a fall of 20 % or more', [
        { field: `${prefix}threshold`, message: 'must be 0 or more for pct_change' },
      ]);
    }
    if (rule.compare !== 'pct_change' && rule.minBaseline !== null && rule.minBaseline !== undefined) {
      throw badRequest('minBaseline applies to pct_change rules only (the previous window must reach it for a change to count)', [
        { field: `${prefix}minBaseline`, message: 'only with compare pct_change' },
      ]);
    }
  }

  /** The rule's integration: visible to the caller, a google one, and visible to the rule's project. */
  private async ruleIntegration(scope: Scope, integrationId: string, projectId: string | null): Promise<IntegrationRow> {
    const row = await this.ports.integrations.row(scope, integrationId);
    if (!row) throw notFound('Integration');
    if (row.provider !== 'google') {
      throw badRequest(`Integration ${integrationId} is a ${row.provider} integration; rules watch google integrations`, [
        { field: 'body.integrationId', message: 'must be a google integration' },
      ]);
    }
    if (projectId && row.projectId && row.projectId !== projectId) {
      throw badRequest(`Integration ${integrationId} belongs to another project than the rule`, [
        { field: 'body.integrationId', message: "must be of the rule's project or organization-wide" },
      ]);
    }
    return row;
  }

  async createRule(scope: Scope, input: RuleInput) {
    this.check(input, 'body.');
    assertMayMakeOrgWide(scope, input.projectId, 'rule');
    let projectId = await this.ports.orgs.projectFor(scope, input.projectId);
    if (input.integrationId) {
      const integration = await this.ruleIntegration(scope, input.integrationId, projectId);
      // No project named: the rule lives where its integration does (its events reach that project's workflows).
      if (input.projectId === undefined && !scope.projectId) projectId = integration.projectId;
    }
    const now = this.clock.now();
    return transaction(this.db, async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`analytics-rules:${scope.orgId}`}))`);
      const [counted] = await tx
        .select({ n: sql<number>`count(*)::int` })
        .from(analyticsRules)
        .where(eq(analyticsRules.orgId, scope.orgId));
      if ((counted?.n ?? 0) >= MAX_RULES_PER_ORG)
        throw unprocessable('LIMIT_REACHED', `An organization has at most ${MAX_RULES_PER_ORG} analytics rules; delete one first`);
      const [row] = await tx
        .insert(analyticsRules)
        .values({
          id: newId('analyticsRule', now.getTime()),
          orgId: scope.orgId,
          projectId,
          integrationId: input.integrationId ?? null,
          name: input.name,
          metric: input.metric,
          compare: input.compare,
          threshold: input.threshold,
          window: input.window,
          minBaseline: input.minBaseline ?? null,
          state: 'ok',
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      return publicRule(row!);
    });
  }

  /** A change to what the rule watches starts it afresh (`ok`, no value): its next evaluation may fire. */
  async updateRule(scope: Scope, id: string, input: Partial<Omit<RuleInput, 'projectId'>>) {
    const before = await this.ruleRow(scope, id);
    assertCanChange(scope, before.projectId, 'This rule');
    const next = {
      name: input.name ?? before.name,
      integrationId: input.integrationId === undefined ? before.integrationId : input.integrationId,
      metric: input.metric ?? before.metric,
      compare: input.compare ?? before.compare,
      threshold: input.threshold ?? before.threshold,
      window: input.window ?? before.window,
      minBaseline: input.minBaseline === undefined ? (input.compare && input.compare !== 'pct_change' ? null : before.minBaseline) : input.minBaseline,
    };
    this.check(next, 'body.');
    if (next.integrationId && next.integrationId !== before.integrationId) await this.ruleIntegration(scope, next.integrationId, before.projectId);
    const watched = (['integrationId', 'metric', 'compare', 'threshold', 'window', 'minBaseline'] as const).some((k) => next[k] !== before[k]);
    const now = this.clock.now();
    const [row] = await this.db
      .update(analyticsRules)
      .set({
        ...next,
        ...(watched ? { state: 'ok', lastValue: null, error: null } : {}),
        updatedAt: now,
      })
      .where(inScope(scope, analyticsRules, eq(analyticsRules.id, id)))
      .returning();
    if (!row) throw notFound('Rule');
    return publicRule(row);
  }

  async deleteRule(scope: Scope, id: string): Promise<void> {
    const row = await this.ruleRow(scope, id);
    assertCanChange(scope, row.projectId, 'This rule');
    const deleted = await this.db
      .delete(analyticsRules)
      .where(inScope(scope, analyticsRules, eq(analyticsRules.id, id)))
      .returning({ id: analyticsRules.id });
    if (deleted.length === 0) throw notFound('Rule');
  }
}
