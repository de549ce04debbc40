import { eq, sql, type SQL } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { transaction, type Db } from '../../platform/db.ts';
import { conflict, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import type { Scope } from '../../platform/context.ts';
import { inScope } from '../../platform/tenant.ts';
import { availableActions, checkAction, executeAction, type ActionType, type RecommendationInput } from './actions.ts';
import type { EventsPort, NotifyPort, ReportsPorts } from './ports.ts';
import { starterRecommendations } from './starters.ts';
import { reports, type StoredRecommendation } from './tables.ts';

import { REPORT_TYPES, type ReportType } from '../../shared/reports.ts';

export { REPORT_TYPES, type ReportType };

type Row = typeof reports.$inferSelect;

export interface NewReport {
  orgId: string;
  projectId: string | null;
  type: ReportType;
  title: string;
  summary: string;
  body?: string | null;
  metrics?: Record<string, unknown>;
  recommendations?: RecommendationInput[];
  agentRunId?: string | null;
  agentType?: string | null;
}

export interface ReportListQuery extends ListQuery {
  type?: string;
  projectId?: string;
}

function publicRecommendation(r: StoredRecommendation) {
  const out: Record<string, unknown> = { index: r.index, title: r.title, description: r.description, action: r.action };
  if (r.appliedAt) out.appliedAt = r.appliedAt;
  if (r.result !== undefined) out.result = r.result;
  return out;
}

export function publicReport(row: Row) {
  return {
    id: row.id,
    projectId: row.projectId,
    type: row.type,
    title: row.title,
    summary: row.summary,
    body: row.body,
    metrics: row.metrics,
    recommendations: row.recommendations.map(publicRecommendation),
    agentRunId: row.agentRunId,
    agentType: row.agentType,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
export type Report = ReturnType<typeof publicReport>;

const SORTABLE = { createdAt: reports.createdAt, type: reports.type, title: reports.title };

/** Reports written by agents, with recommendations whose actions can be applied for real. */
export class ReportsService {
  private readonly db: Db;
  private readonly deps: Deps;
  private readonly events: EventsPort;
  private readonly notifications: NotifyPort;
  private readonly ports: ReportsPorts;

  constructor(deps: Deps, ports: ReportsPorts) {
    this.deps = deps;
    this.db = deps.db;
    this.events = ports.events;
    this.notifications = ports.notifications;
    this.ports = ports;
  }

  /** The action types recommendations may carry in this installation. */
  availableActions(): ActionType[] {
    return availableActions(this.ports);
  }

  /**
   * Saves a report: `agent.report.created` and a notification commit with it. Actions are checked
   * first. A report without recommendations gets the first steps for its organization, so there is
   * always one to apply.
   */
  async create(input: NewReport): Promise<Report> {
    const given = input.recommendations?.length ? input.recommendations : await starterRecommendations(this.db, this.availableActions(), input);
    const recommendations: StoredRecommendation[] = given.map((r, index) => ({
      index,
      title: r.title,
      description: r.description ?? '',
      action: checkAction(this.ports, r.action),
    }));
    const now = this.deps.clock.now();
    return transaction(this.db, async (tx) => {
      const [row] = await tx
        .insert(reports)
        .values({
          id: newId('report', now.getTime()),
          orgId: input.orgId,
          projectId: input.projectId,
          type: input.type,
          title: input.title,
          summary: input.summary,
          body: input.body ?? null,
          metrics: input.metrics ?? {},
          recommendations,
          agentRunId: input.agentRunId ?? null,
          agentType: input.agentType ?? null,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      const report = publicReport(row!);
      await this.events.record(tx, {
        orgId: input.orgId,
        projectId: input.projectId,
        type: 'agent.report.created',
        payload: {
          report: { id: report.id, type: report.type, title: report.title, summary: report.summary, metrics: report.metrics },
          agentType: input.agentType ?? null,
          agentRunId: input.agentRunId ?? null,
        },
      });
      await this.notifications.notify(
        {
          orgId: input.orgId,
          projectId: input.projectId,
          kind: 'report.created',
          title: `New report: ${report.title}`,
          body: report.summary,
          link: `/reports/${report.id}`,
        },
        tx,
      );
      return report;
    });
  }

  async get(scope: Scope, id: string): Promise<Report> {
    const [row] = await this.db
      .select()
      .from(reports)
      .where(inScope(scope, reports, eq(reports.id, id)));
    if (!row) throw notFound('Report');
    return publicReport(row);
  }

  async list(scope: Scope, query: ReportListQuery) {
    const page = pageOf(query);
    const conditions: (SQL | undefined)[] = [];
    if (query.type) conditions.push(eq(reports.type, query.type));
    if (query.projectId) conditions.push(eq(reports.projectId, query.projectId));
    if (query.q && query.q.trim()) {
      const like = `%${query.q.trim().replace(/[\\%_]/g, (c) => '\\' + c)}%`;
      conditions.push(sql`(${reports.title} ilike ${like} or ${reports.summary} ilike ${like})`);
    }
    const where = inScope(scope, reports, ...conditions);
    const order = orderBy(query.sort, SORTABLE, '-createdAt', reports.id);
    const [items, counted] = await Promise.all([
      this.db
        .select()
        .from(reports)
        .where(where)
        .orderBy(...order)
        .limit(page.limit)
        .offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(reports)
        .where(where),
    ]);
    return envelope(items.map(publicReport), counted[0]?.n ?? 0, page);
  }

  /**
   * Executes recommendation `index` for real, as the caller. The recommendation is marked applied
   * first (so a second, concurrent apply gets 409), and unmarked again when the action fails.
   */
  async applyRecommendation(scope: Scope, id: string, index: number) {
    const claimed = await transaction(this.db, async (tx) => {
      const [row] = await tx
        .select()
        .from(reports)
        .where(inScope(scope, reports, eq(reports.id, id)))
        .for('update');
      if (!row) throw notFound('Report');
      const rec = row.recommendations[index];
      if (!rec) throw notFound('Recommendation');
      if (rec.appliedAt) throw conflict(`Recommendation ${index} was already applied at ${rec.appliedAt}`);
      const list = row.recommendations.map((r) => (r.index === index ? { ...r, appliedAt: this.deps.clock.now().toISOString(), appliedBy: scope.actor } : r));
      await tx
        .update(reports)
        .set({ recommendations: list, updatedAt: this.deps.clock.now() })
        .where(inScope(scope, reports, eq(reports.id, id)));
      return rec;
    });
    let result: unknown;
    try {
      result = await executeAction(this.ports, scope, { type: claimed.action.type, params: claimed.action.params });
    } catch (error) {
      await this.patchRecommendation(scope.orgId, id, index, (r) => {
        const { appliedAt: _a, appliedBy: _b, ...rest } = r;
        return rest;
      });
      throw error;
    }
    const plain = result === undefined ? null : JSON.parse(JSON.stringify(result));
    // A workflow made from a webhook template answers with its secret URL once: to the caller, not into the report.
    const kept = plain && typeof plain === 'object' && !Array.isArray(plain) ? (({ webhookUrl: _u, webhookToken: _t, ...rest }) => rest)(plain) : plain;
    const row = await this.patchRecommendation(scope.orgId, id, index, (r) => ({ ...r, result: kept }));
    const report = publicReport(row);
    return { report, recommendation: report.recommendations[index]!, result: plain };
  }

  private async patchRecommendation(orgId: string, id: string, index: number, fn: (r: StoredRecommendation) => StoredRecommendation): Promise<Row> {
    return transaction(this.db, async (tx) => {
      const [row] = await tx
        .select()
        .from(reports)
        .where(inScope({ orgId, projectId: null }, reports, eq(reports.id, id)))
        .for('update');
      if (!row) throw notFound('Report');
      const list = row.recommendations.map((r) => (r.index === index ? fn(r) : r));
      const [after] = await tx
        .update(reports)
        .set({ recommendations: list, updatedAt: this.deps.clock.now() })
        .where(inScope({ orgId, projectId: null }, reports, eq(reports.id, id)))
        .returning();
      return after!;
    });
  }
}
