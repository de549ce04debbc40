import { and, asc, eq, gte, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db.ts';
import { tenant } from '../../platform/tenant.ts';
import type { Source } from './google.ts';
import type { AnalyticsPorts, IntegrationRow } from './ports.ts';
import { evaluate, METRIC_NAMES, METRICS, span, type MetricName } from './rules.ts';
import { analyticsDaily, analyticsRules } from './tables.ts';

type RuleRow = typeof analyticsRules.$inferSelect;

const COMPARE_WORDS: Record<string, string> = { above: 'above', below: 'below', pct_change: 'changed by at least' };

/**
 * Moves rules between `ok`, `firing` and `error` after a sync, in the sync's transaction (the rows
 * it stored are what the rules read). `analytics.threshold` and a notification go out only on the
 * move from `ok` to `firing` (CONTRACT §10): a rule that stays over its threshold says nothing more,
 * and says it again only after it has come back to `ok`.
 */
export class RuleEvaluator {
  private readonly clock: Clock;
  private readonly ports: Pick<AnalyticsPorts, 'events' | 'notifications'>;

  constructor(clock: Clock, ports: Pick<AnalyticsPorts, 'events' | 'notifications'>) {
    this.clock = clock;
    this.ports = ports;
  }

  /** The rules of the integration's organization that watch a metric of the synced sources: those on this integration and those on all. */
  async afterSync(tx: Db, integration: IntegrationRow, sources: Source[]): Promise<void> {
    const metrics = METRIC_NAMES.filter((m) => sources.includes(METRICS[m].source));
    if (metrics.length === 0) return;
    const rules = await tx
      .select()
      .from(analyticsRules)
      .where(
        and(
          eq(analyticsRules.orgId, integration.orgId),
          or(eq(analyticsRules.integrationId, integration.id), isNull(analyticsRules.integrationId)),
          inArray(analyticsRules.metric, metrics),
        ),
      )
      // Locked in one order: two syncs finishing together evaluate a rule one after the other, so it fires once.
      .orderBy(asc(analyticsRules.id))
      .for('update');
    for (const rule of rules) await this.evaluateOne(tx, rule);
  }

  /** The integration cannot be read (its grant is dead): the rules on it cannot be evaluated. */
  async unavailable(tx: Db, integration: IntegrationRow, message: string): Promise<void> {
    const now = this.clock.now();
    await tx
      .update(analyticsRules)
      .set({ state: 'error', error: message.slice(0, 1000), lastEvaluatedAt: now, updatedAt: now })
      .where(and(eq(analyticsRules.orgId, integration.orgId), eq(analyticsRules.integrationId, integration.id)));
  }

  private async evaluateOne(tx: Db, rule: RuleRow): Promise<void> {
    const now = this.clock.now();
    const metric = rule.metric as MetricName;
    const { source } = METRICS[metric];
    const where = and(
      rule.integrationId
        ? and(eq(analyticsDaily.orgId, rule.orgId), eq(analyticsDaily.integrationId, rule.integrationId))
        : // A rule on every integration reads those its project sees (its own and the organization-wide ones).
          tenant({ orgId: rule.orgId, projectId: rule.projectId }, analyticsDaily, { orgWide: true }),
      eq(analyticsDaily.source, source),
    );
    const [latest] = await tx
      .select({ newest: sql<string | null>`max(${analyticsDaily.date})` })
      .from(analyticsDaily)
      .where(where);
    const newest = latest?.newest ?? null;
    const rows = newest
      ? await tx
          .select({ date: analyticsDaily.date, metrics: analyticsDaily.metrics })
          .from(analyticsDaily)
          .where(and(where, gte(analyticsDaily.date, span(rule, newest).from), lte(analyticsDaily.date, newest)))
      : [];
    const outcome = evaluate(rule, rows, newest);
    const firing = outcome.kind === 'value' && outcome.firing;
    const value = outcome.kind === 'value' ? outcome.value : null;
    const fires = firing && rule.state === 'ok';
    await tx
      .update(analyticsRules)
      .set({
        state: firing ? 'firing' : 'ok',
        lastValue: value,
        lastEvaluatedAt: now,
        error: null,
        ...(fires ? { lastFiredAt: now } : {}),
        updatedAt: now,
      })
      .where(eq(analyticsRules.id, rule.id));
    if (!fires || outcome.kind !== 'value') return;
    const payload: Record<string, unknown> = {
      ruleId: rule.id,
      name: rule.name,
      metric: rule.metric,
      value: outcome.value,
      threshold: rule.threshold,
      compare: rule.compare,
      direction: outcome.direction,
      window: rule.window,
      date: newest,
      integrationId: rule.integrationId,
    };
    await this.ports.events.record(tx, { orgId: rule.orgId, projectId: rule.projectId, type: 'analytics.threshold', payload });
    const shown = rule.compare === 'pct_change' ? `${outcome.value > 0 ? '+' : ''}${outcome.value}%` : String(outcome.value);
    const limit = rule.compare === 'pct_change' ? `${rule.threshold}%` : String(rule.threshold);
    await this.ports.notifications.notify(
      {
        orgId: rule.orgId,
        projectId: rule.projectId,
        kind: 'analytics.threshold',
        title: `${rule.name}: ${rule.metric} ${shown}`,
        body: `${rule.metric} over ${rule.window === 'day' ? 'the day' : `the last ${rule.window}`} to ${newest} is ${shown}, ${COMPARE_WORDS[rule.compare] ?? rule.compare} ${limit} (${outcome.direction}).`,
        link: `/api/v1/orgs/${rule.orgId}/analytics/rules/${rule.id}`,
      },
      tx,
    );
  }
}
