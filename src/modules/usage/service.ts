import { and, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import { newId } from '../../platform/ids.ts';
import { PriceTable, roundUsd } from './pricing.ts';
import { usageRecords } from './tables.ts';

export interface UsageInput {
  orgId: string;
  projectId: string | null;
  modelId: string;
  agentRunId?: string | null;
  agentType?: string | null;
  workflowId?: string | null;
  workflowRunId?: string | null;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export const GROUP_BY = ['model', 'day', 'agentType', 'workflow', 'project'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export interface UsageFigures {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  runs: number;
}

const GROUP_COLUMN: Record<GroupBy, SQL> = {
  model: sql`${usageRecords.modelId}`,
  day: sql`to_char(${usageRecords.at} at time zone 'UTC', 'YYYY-MM-DD')`,
  agentType: sql`${usageRecords.agentType}`,
  workflow: sql`${usageRecords.workflowId}`,
  project: sql`${usageRecords.projectId}`,
};

/** Token and cost records: one per model call, the source of every cost figure and budget check. */
export class UsageService {
  private readonly db: Db;
  private readonly deps: Deps;
  readonly prices: PriceTable;

  constructor(deps: Deps) {
    this.deps = deps;
    this.db = deps.db;
    this.prices = new PriceTable(deps.config.modelPrices);
  }

  cost(modelId: string, inputTokens: number, outputTokens: number): number {
    return this.prices.cost(modelId, inputTokens, outputTokens);
  }

  async record(tx: Db, input: UsageInput): Promise<void> {
    await tx.insert(usageRecords).values(this.row(input));
  }

  /** The insert as a CTE, for a caller that writes its own change in the same statement (one round trip). */
  recordCte(db: Db, input: UsageInput) {
    return db.$with('usage_row').as(db.insert(usageRecords).values(this.row(input)).returning({ id: usageRecords.id }));
  }

  private row(input: UsageInput): typeof usageRecords.$inferInsert {
    const now = this.deps.clock.now();
    return {
      id: newId('usage', now.getTime()),
      orgId: input.orgId,
      projectId: input.projectId,
      modelId: input.modelId,
      agentRunId: input.agentRunId ?? null,
      agentType: input.agentType ?? null,
      workflowId: input.workflowId ?? null,
      workflowRunId: input.workflowRunId ?? null,
      inputTokens: input.inputTokens,
      outputTokens: input.outputTokens,
      costUsd: input.costUsd,
      at: now,
    };
  }

  /** USD spent by an organization in [from, to). */
  async spent(orgId: string, from: Date, to: Date, db: Db = this.db): Promise<number> {
    const [row] = await db
      .select({ usd: sql<number>`coalesce(sum(${usageRecords.costUsd}), 0)::float8` })
      .from(usageRecords)
      .where(and(eq(usageRecords.orgId, orgId), gte(usageRecords.at, from), lt(usageRecords.at, to)));
    return roundUsd(row?.usd ?? 0);
  }

  /** Totals and groups over [from, to); `runs` counts distinct agent runs. */
  async summary(orgId: string, options: { from: Date; to: Date; groupBy?: GroupBy; projectId?: string | null }) {
    const where = and(
      eq(usageRecords.orgId, orgId),
      gte(usageRecords.at, options.from),
      lt(usageRecords.at, options.to),
      options.projectId ? eq(usageRecords.projectId, options.projectId) : undefined,
    );
    const figures = {
      inputTokens: sql<number>`coalesce(sum(${usageRecords.inputTokens}), 0)::float8`,
      outputTokens: sql<number>`coalesce(sum(${usageRecords.outputTokens}), 0)::float8`,
      costUsd: sql<number>`coalesce(sum(${usageRecords.costUsd}), 0)::float8`,
      runs: sql<number>`count(distinct ${usageRecords.agentRunId})::int`,
    };
    const clean = (f: { inputTokens: number; outputTokens: number; costUsd: number; runs: number }): UsageFigures => ({
      inputTokens: Number(f.inputTokens),
      outputTokens: Number(f.outputTokens),
      costUsd: roundUsd(Number(f.costUsd)),
      runs: Number(f.runs),
    });
    const [totals] = await this.db.select(figures).from(usageRecords).where(where);
    let groups: (UsageFigures & { key: string | null })[] = [];
    if (options.groupBy) {
      const key = GROUP_COLUMN[options.groupBy];
      const rows = await this.db
        .select({ key: sql<string | null>`${key}`, ...figures })
        .from(usageRecords)
        .where(where)
        .groupBy(key)
        .orderBy(key);
      groups = rows.map((r) => ({ key: r.key, ...clean(r) }));
    }
    return { totals: clean(totals!), groups };
  }
}
