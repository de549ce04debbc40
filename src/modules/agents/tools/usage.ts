import { Type } from 'typebox';
import type { ToolDef } from './types.ts';

export const usageSummary: ToolDef = {
  name: 'usage_summary',
  description: 'AI usage and cost of the last `days` days (default 30) by model and by agent type, and the monthly budget.',
  input: Type.Object({ days: Type.Optional(Type.Integer({ minimum: 1, maximum: 366 })) }, { additionalProperties: false }),
  async execute(ctx, input) {
    const to = ctx.clock.now();
    const from = new Date(to.getTime() - Number(input.days ?? 30) * 86_400_000);
    const [byModel, byType, budget] = await Promise.all([
      ctx.usage.summary(ctx.orgId, { from, to, groupBy: 'model' }),
      ctx.usage.summary(ctx.orgId, { from, to, groupBy: 'agentType' }),
      ctx.budgets.monthly(ctx.orgId),
    ]);
    return { from: from.toISOString(), to: to.toISOString(), totals: byModel.totals, byModel: byModel.groups, byAgentType: byType.groups, budget };
  },
};
