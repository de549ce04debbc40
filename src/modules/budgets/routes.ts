import { Type, Nullable, OrgParams, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import type { BudgetsService } from './service.ts';

const BudgetSchema = Type.Object({
  monthlyLimitUsd: Nullable(Type.Number()),
  usedUsd: Type.Number({ description: 'spent this month (UTC)' }),
  pct: Nullable(Type.Number()),
  period: Type.String({ description: 'YYYY-MM' }),
  resetsAt: Type.String({ format: 'date-time' }),
});

export interface BudgetRoutesOptions {
  budgets: BudgetsService;
}

export const budgetRoutes = routesPlugin<BudgetRoutesOptions>('budget-routes', [ORG_ACCESS], (app, { budgets }) => {
  app.get(
    '/budget',
    {
      // The budget is the organization's: refused to a key bound to a project (CONTRACT §2).
      config: { access: { scope: 'usage:read', orgLevel: true } },
      schema: {
        tags: ['Usage'],
        summary: "The organization's monthly budget and this month's spend",
        params: OrgParams,
        response: { 200: BudgetSchema, ...orgErrors() },
      },
    },
    async (request) => budgets.get(orgOf(request).orgId),
  );

  app.put(
    '/budget',
    {
      // Owners and admins (sessions), or API keys with every scope that are not bound to a project.
      config: { access: { scope: '*', manage: true, write: true, orgLevel: true } },
      schema: {
        tags: ['Usage'],
        summary: 'Set the monthly budget (USD; null removes it). New runs get 429 BUDGET_EXCEEDED while it is spent; budget.warning at 80 %',
        description:
          "`budget.warning` when the month's spending reaches 80 % of the limit and `budget.exceeded` at 100 %, each once per month and limit, whether a spend or this request takes it there: a limit the month has already spent 80 % (or 100 %) of is announced at once, with the owner's notification. Setting the same limit again, or going back to one already announced this month, sends nothing.",
        params: OrgParams,
        body: Type.Object({ monthlyLimitUsd: Nullable(Type.Number({ minimum: 0, maximum: 100_000_000 })) }, { additionalProperties: false }),
        response: { 200: BudgetSchema, ...orgErrors() },
      },
    },
    async (request) => budgets.set(orgOf(request).orgId, request.body.monthlyLimitUsd),
  );
});
