import { Type, Nullable, OrgParams, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import { monthOf, parseRange } from './range.ts';
import { GROUP_BY } from './service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { UsageService } from './service.ts';

const Figures = {
  inputTokens: Type.Number(),
  outputTokens: Type.Number(),
  costUsd: Type.Number(),
  runs: Type.Integer({ description: 'distinct agent runs' }),
};

/** The organization's monthly budget (the budgets module), shown with the usage. */
export interface UsageBudgetsPort {
  monthly(orgId: string): Promise<{ limitUsd: number | null; usedUsd: number; pct: number | null }>;
}

export interface UsageRoutesOptions {
  usage: UsageService;
  budgets: UsageBudgetsPort;
  clock: Clock;
}

export const usageRoutes = routesPlugin<UsageRoutesOptions>('usage-routes', [ORG_ACCESS], (app, { usage, budgets, clock }) => {
  app.get(
    '/usage',
    {
      config: { access: { scope: 'usage:read' } },
      schema: {
        tags: ['Usage'],
        summary: 'Token usage and cost in [from, to) (default: this month), optionally grouped, with the monthly budget',
        params: OrgParams,
        querystring: Type.Object(
          {
            from: Type.Optional(Type.String({ maxLength: 40, description: 'date (whole day, UTC) or ISO 8601 timestamp' })),
            to: Type.Optional(Type.String({ maxLength: 40, description: 'date (included) or ISO 8601 timestamp (exclusive)' })),
            groupBy: Type.Optional(Type.Union(GROUP_BY.map((g) => Type.Literal(g)))),
            projectId: Type.Optional(Type.String({ maxLength: 64 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            from: Type.String({ format: 'date-time' }),
            to: Type.String({ format: 'date-time' }),
            groupBy: Nullable(Type.String()),
            totals: Type.Object(Figures),
            groups: Type.Array(Type.Object({ key: Nullable(Type.String()), ...Figures })),
            budget: Type.Object({ limitUsd: Nullable(Type.Number()), usedUsd: Type.Number(), pct: Nullable(Type.Number()) }),
          }),
          ...orgErrors(),
        },
      },
    },
    async (request) => {
      const ctx = orgOf(request);
      const now = clock.now();
      const range = parseRange(request.query.from, request.query.to, { from: monthOf(now).start, to: monthOf(now).end });
      const projectId = ctx.projectId ?? request.query.projectId ?? null;
      const [summary, budget] = await Promise.all([
        usage.summary(ctx.orgId, { from: range.from, to: range.to, groupBy: request.query.groupBy, projectId }),
        budgets.monthly(ctx.orgId),
      ]);
      return { from: range.from.toISOString(), to: range.to.toISOString(), groupBy: request.query.groupBy ?? null, ...summary, budget };
    },
  );
});
