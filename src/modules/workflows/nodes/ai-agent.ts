import { Type } from 'typebox';
import { AppError } from '../../../platform/errors.ts';
import { AGENT_TYPE_NAMES } from '../../../shared/agents.ts';
import { registerNode } from './registry.ts';
import { main, type Item } from './types.ts';

/**
 * `ai.agent`: runs an agent (ctx.agents.runInline) once per incoming item, with the item as
 * `input.item`. The agent's cost is added to the run's costUsd (ctx.addCost) and the remaining
 * workflow budget is its hard limit, so the workflow budget stops it between model calls.
 */
registerNode({
  type: 'ai.agent',
  category: 'ai',
  description:
    'Runs an AI agent of a type (GET …/agent-types) on a task, once per item; the item is given to the agent as input.item. ' +
    'Emits per item { agentRunId, status, summary, usage, reportId?, score?, scoreReason?, leadId?, postIds?, … }. The cost counts against the workflow budget; ' +
    'an agent that fails or is stopped by a budget fails the step (BUDGET_EXCEEDED is not retried).',
  params: Type.Object(
    {
      type: Type.Union(AGENT_TYPE_NAMES.map((t) => Type.Literal(t))),
      task: Type.String({ minLength: 1, maxLength: 8000 }),
      modelId: Type.Optional(Type.String({ minLength: 1, maxLength: 160 })),
      input: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 100 })),
      maxSteps: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    },
    { additionalProperties: false },
  ),
  outputs: ['main'],
  async execute(ctx, exec) {
    const out: Item[] = [];
    const items = exec.items.length ? exec.items : [{}];
    for (const item of items) {
      const params = await exec.params(item);
      const remaining = await ctx.remainingBudgetUsd();
      if (remaining !== null && remaining <= 0) throw new AppError(429, 'BUDGET_EXCEEDED', 'The workflow budget is spent');
      const result = await ctx.agents.runInline({
        orgId: ctx.orgId,
        projectId: ctx.projectId,
        type: params.type,
        task: params.task,
        input: { ...(params.input ?? {}), item },
        modelId: params.modelId,
        maxSteps: params.maxSteps,
        workflowId: ctx.workflowId,
        workflowRunId: ctx.runId,
        budgetUsd: remaining,
        budgetScope: 'workflow',
        signal: ctx.signal,
      });
      // Counts against the workflow budget (and throws BUDGET_EXCEEDED past it).
      await ctx.addCost(result.usage.costUsd);
      await ctx.log('info', `${params.type} agent run ${result.agentRunId} ended ${result.status} (${result.usage.costUsd} USD)`);
      if (result.status === 'budget_exceeded')
        throw new AppError(429, 'BUDGET_EXCEEDED', `Agent run ${result.agentRunId} was stopped by the budget: ${result.error ?? result.summary}`);
      if (result.status === 'failed' || result.status === 'canceled') {
        throw new AppError(502, 'AGENT_FAILED', `Agent run ${result.agentRunId} ended ${result.status}: ${result.error ?? result.summary}`);
      }
      const { text: _text, ...structured } = (result.output ?? {}) as Record<string, unknown>;
      out.push(
        JSON.parse(
          JSON.stringify({
            ...structured,
            agentRunId: result.agentRunId,
            status: result.status,
            summary: result.summary,
            usage: result.usage,
            reportId: result.reportId ?? null,
          }),
        ) as Item,
      );
    }
    return main(out);
  },
});
