import { sql } from 'drizzle-orm';
import { rows, type Db } from '../../platform/db.ts';
import type { Deps } from '../../platform/deps.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import {
  COUNT_LIMITS,
  FEATURES,
  MONTHLY_LIMITS,
  UNLIMITED,
  type CountLimit,
  type Feature,
  type LimitName,
  type MonthlyLimit,
  type PlanDefinition,
  type Plans,
} from '../../shared/plans.ts';
import type { CountedResources, OrgPlansPort, PlansBusPort, PlansPorts } from './ports.ts';

export interface ResolvedPlan extends PlanDefinition {
  name: string;
}

/** What GET …/plan answers. */
export interface PlanView {
  plan: string;
  features: Feature[];
  limits: Partial<Record<LimitName, number>>;
  used: Record<LimitName, number>;
}

const EVERYTHING: ResolvedPlan = Object.freeze({ name: UNLIMITED, features: [...FEATURES], limits: {} });
const CHANGED = 'plans:changed';
const CACHE_MS = 5_000;
const CACHE_MAX = 10_000;

/** The start of the month (UTC) `now` is in, the next one's, and the month's key. */
export function monthOf(now: Date): { key: string; start: Date; end: Date } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { key: start.toISOString().slice(0, 7), start, end };
}

const planFeature = (feature: Feature, plan: string) =>
  new AppError(403, 'PLAN_FEATURE', `The organization's plan "${plan}" does not include ${feature}`, { feature, plan });

/**
 * Plans and quotas (CONTRACT §12). With no PLANS configured every answer is "allowed" without a
 * query. With PLANS: the organization's plan (cached a few seconds, dropped on set-plan on every
 * instance through the bus); count limits checked inside the creating transaction under a lock per
 * organization and limit; monthly limits counted in `plan_usage` by one guarded update. The rows
 * of each limit are counted through the fragment of the module that owns them (`ports.counted`).
 */
export class PlansService {
  readonly enabled: boolean;
  private readonly plans: Plans | null;
  private readonly defaultPlan: string | null;
  private readonly db: Db;
  private readonly clock: Deps['clock'];
  private readonly bus: PlansBusPort;
  private readonly orgs: OrgPlansPort;
  private readonly counted: CountedResources;
  private readonly cache = new Map<string, { plan: ResolvedPlan; until: number }>();

  constructor(deps: Deps, { bus, orgs, counted }: PlansPorts) {
    this.plans = deps.config.plans;
    this.defaultPlan = deps.config.defaultPlan;
    this.enabled = this.plans !== null;
    this.db = deps.db;
    this.clock = deps.clock;
    this.bus = bus;
    this.orgs = orgs;
    this.counted = counted;
    if (this.enabled) bus.subscribe(CHANGED, (message) => this.cache.delete((message as { orgId?: string })?.orgId ?? ''));
  }

  /** The plan new organizations get (null: no PLANS). */
  get initialPlan(): string | null {
    return this.defaultPlan;
  }

  names(): string[] {
    return this.plans ? Object.keys(this.plans) : [];
  }

  private resolve(stored: string | null): ResolvedPlan {
    const name = stored && this.plans![stored] ? stored : this.defaultPlan!;
    return { name, ...this.plans![name]! };
  }

  /** An organization's plan: its stored one, DEFAULT_PLAN when it has none (or one no longer in PLANS). */
  async planOf(orgId: string, db: Db = this.db): Promise<ResolvedPlan> {
    if (!this.enabled) return EVERYTHING;
    const hit = this.cache.get(orgId);
    const now = performance.now();
    if (hit && hit.until > now) return hit.plan;
    const plan = this.resolve((await this.orgs.storedPlan(db, orgId)) ?? null);
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(orgId, { plan, until: now + CACHE_MS });
    return plan;
  }

  /** 403 PLAN_FEATURE unless the plan has one of the features (a route may serve several). */
  async assertFeature(orgId: string, features: Feature | readonly Feature[], db: Db = this.db): Promise<void> {
    if (!this.enabled) return;
    const wanted = typeof features === 'string' ? [features] : features;
    if (wanted.length === 0) return;
    const plan = await this.planOf(orgId, db);
    if (!wanted.some((f) => plan.features.includes(f))) throw planFeature(wanted[0]!, plan.name);
  }

  /** The plan's value of a limit; null: none. In a transaction, pass it (`db`): the plan may be read. */
  async limitOf(orgId: string, limit: LimitName, db: Db = this.db): Promise<number | null> {
    if (!this.enabled) return null;
    return (await this.planOf(orgId, db)).limits[limit] ?? null;
  }

  /** Seconds until the month (UTC) ends: the Retry-After of a monthly limit. */
  retryAfterS(): number {
    const now = this.clock.now();
    return Math.max(1, Math.ceil((monthOf(now).end.getTime() - now.getTime()) / 1000));
  }

  private limitError(limit: LimitName, value: number, used: number): AppError {
    const monthly = (MONTHLY_LIMITS as readonly string[]).includes(limit);
    const what = monthly ? `this month (until ${monthOf(this.clock.now()).end.toISOString()})` : 'for this organization';
    return new AppError(
      429,
      'PLAN_LIMIT',
      `The plan's ${limit} limit (${value}) is reached ${what}`,
      { limit, value, used },
      monthly ? { 'retry-after': String(this.retryAfterS()) } : undefined,
    );
  }

  /**
   * In the creating transaction, before the insert: 429 PLAN_LIMIT when `adding` more would pass the
   * limit. Holds a lock of the organization and limit until the transaction ends, so a concurrent
   * create waits and then counts this one's row.
   */
  async assertRoom(tx: Db, orgId: string, limit: CountLimit, adding = 1): Promise<void> {
    const value = await this.limitOf(orgId, limit, tx);
    if (value === null) return;
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`plan:${orgId}:${limit}`}, 0))`);
    const used = await this.countHeld(tx, orgId, limit, value + 1);
    if (used + adding > value) throw this.limitError(limit, value, used);
  }

  /** Rows an organization holds (up to `cap`). */
  private async countHeld(db: Db, orgId: string, limit: CountLimit, cap?: number): Promise<number> {
    const held = this.counted.held[limit](orgId);
    const query = cap === undefined ? sql`select count(*)::int as n from (${held}) t` : sql`select count(*)::int as n from (${held} limit ${cap}) t`;
    const [row] = await rows<{ n: number }>(db, query);
    return row?.n ?? 0;
  }

  /** What the stored rows say an organization started this month. */
  private async countMonth(db: Db, orgId: string, limit: MonthlyLimit, start: Date): Promise<number> {
    const [row] = await rows<{ n: number }>(db, sql`select count(*)::int as n from (${this.counted.started[limit](orgId, start.toISOString())}) t`);
    return row?.n ?? 0;
  }

  /** The month's counter row, created from the stored rows when missing. */
  private async seed(tx: Db, orgId: string, limit: MonthlyLimit, month: ReturnType<typeof monthOf>): Promise<void> {
    const used = await this.countMonth(tx, orgId, limit, month.start);
    await tx.execute(sql`insert into plan_usage (org_id, metric, month, used) values (${orgId}, ${limit}, ${month.key}, ${used}) on conflict do nothing`);
  }

  /**
   * Counts `n` starts of a monthly limit in the caller's transaction (with the row the start
   * inserts); 429 PLAN_LIMIT with Retry-After when they would pass it. No-op without PLANS.
   */
  async take(tx: Db, orgId: string, limit: MonthlyLimit, n = 1): Promise<void> {
    if (!this.enabled) return;
    const value = await this.limitOf(orgId, limit, tx);
    const month = monthOf(this.clock.now());
    for (let attempt = 0; attempt < 3; attempt++) {
      const [row] = await rows<{ used: number }>(
        tx,
        sql`update plan_usage set used = used + ${n}
        where org_id = ${orgId} and metric = ${limit} and month = ${month.key} and (${value}::int is null or used + ${n} <= ${value}::int) returning used`,
      );
      if (row) return;
      const [current] = await rows<{ used: number }>(
        tx,
        sql`select used from plan_usage where org_id = ${orgId} and metric = ${limit} and month = ${month.key}`,
      );
      if (!current) await this.seed(tx, orgId, limit, month);
      else if (value !== null && current.used + n > value) throw this.limitError(limit, value, current.used);
      // Otherwise a concurrent start created the month's row after the update looked (each statement
      // sees what was committed when it began) and there is room in it: the update is tried again.
    }
    throw new Error("plan_usage: the month's row could not be created");
  }

  /**
   * How many more of a monthly limit may start now (null: no limit), holding the organization's
   * lock of that limit until the caller's transaction ends; the caller then counts what it started
   * with `add`. For batches (campaign sends).
   */
  async room(tx: Db, orgId: string, limit: MonthlyLimit): Promise<number | null> {
    if (!this.enabled) return null;
    const value = await this.limitOf(orgId, limit, tx);
    if (value === null) return null;
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`plan:${orgId}:${limit}`}, 0))`);
    const month = monthOf(this.clock.now());
    return Math.max(0, value - (await this.usedThisMonth(tx, orgId, limit, month, true)));
  }

  /** Counts `n` starts of a monthly limit (after `room`), in the caller's transaction. */
  async add(tx: Db, orgId: string, limit: MonthlyLimit, n: number): Promise<void> {
    if (!this.enabled || n <= 0) return;
    const month = monthOf(this.clock.now());
    const [row] = await rows<{ used: number }>(
      tx,
      sql`update plan_usage set used = used + ${n} where org_id = ${orgId} and metric = ${limit} and month = ${month.key} returning used`,
    );
    if (row) return;
    await this.seed(tx, orgId, limit, month);
    await tx.execute(sql`update plan_usage set used = used + ${n} where org_id = ${orgId} and metric = ${limit} and month = ${month.key}`);
  }

  /** The 429 of a monthly limit that `room` found spent (for callers that stop instead of throwing). */
  spent(limit: MonthlyLimit, value: number): AppError {
    return this.limitError(limit, value, value);
  }

  private async usedThisMonth(db: Db, orgId: string, limit: MonthlyLimit, month: ReturnType<typeof monthOf>, create: boolean): Promise<number> {
    const [row] = await rows<{ used: number }>(db, sql`select used from plan_usage where org_id = ${orgId} and metric = ${limit} and month = ${month.key}`);
    if (row) return row.used;
    if (!create) return this.countMonth(db, orgId, limit, month.start);
    await this.seed(db, orgId, limit, month);
    return this.usedThisMonth(db, orgId, limit, month, false);
  }

  /** GET …/plan. */
  async view(orgId: string): Promise<PlanView> {
    const plan = await this.planOf(orgId);
    const month = monthOf(this.clock.now());
    const used = {} as Record<LimitName, number>;
    for (const limit of COUNT_LIMITS) used[limit] = await this.countHeld(this.db, orgId, limit);
    for (const limit of MONTHLY_LIMITS) used[limit] = await this.usedThisMonth(this.db, orgId, limit, month, false);
    return { plan: plan.name, features: FEATURES.filter((f) => plan.features.includes(f)), limits: { ...plan.limits }, used };
  }

  /** Assigns a plan (the CLI's set-plan); 422 for a name not in PLANS, 404 for no such organization. */
  async setPlan(orgId: string, plan: string): Promise<{ organization: { id: string; name: string }; plan: string }> {
    if (!this.plans)
      throw new AppError(
        422,
        'PLANS_NOT_CONFIGURED',
        'No PLANS are configured here, so every organization is unlimited: set PLANS and DEFAULT_PLAN (the CLI reads the same environment as the server)',
      );
    if (!this.plans[plan]) throw new AppError(422, 'UNKNOWN_PLAN', `No plan "${plan}"; the plans are: ${this.names().join(', ')}`);
    const row = await this.orgs.storePlan(this.db, orgId, plan);
    if (!row) throw notFound('Organization');
    this.cache.delete(orgId);
    await this.bus.publish(CHANGED, { orgId });
    return { organization: { id: row.id, name: row.name }, plan };
  }
}
