import { Type } from 'typebox';
import { ACTION_DESCRIPTIONS } from '../../reports/index.ts';
import { REPORT_TYPES, type ReportType } from '../../reports/index.ts';
import type { ToolDef } from './types.ts';

export const createReport: ToolDef = {
  name: 'create_report',
  description:
    'Save a report for the team: type, title, summary, metrics (numbers/strings), a markdown body, and recommendations, ' +
    'each with an action the team can apply with one click. Action types: ' +
    Object.entries(ACTION_DESCRIPTIONS)
      .map(([k, v]) => `${k} — ${v}`)
      .join('; ') +
    '.',
  input: Type.Object(
    {
      type: Type.Union(REPORT_TYPES.map((t) => Type.Literal(t))),
      title: Type.String({ minLength: 1, maxLength: 300 }),
      summary: Type.String({ minLength: 1, maxLength: 4000 }),
      body: Type.Optional(Type.String({ maxLength: 100_000 })),
      metrics: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unknown())),
      recommendations: Type.Optional(
        Type.Array(
          Type.Object({
            title: Type.String({ minLength: 1, maxLength: 300 }),
            description: Type.Optional(Type.String({ maxLength: 4000 })),
            action: Type.Object({ type: Type.String({ maxLength: 64 }), params: Type.Record(Type.String(), Type.Unknown()) }),
          }),
          { maxItems: 20 },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  async execute(ctx, input) {
    const i = input as {
      type: ReportType;
      title: string;
      summary: string;
      body?: string;
      metrics?: Record<string, unknown>;
      recommendations?: { title: string; description?: string; action: { type: string; params: Record<string, unknown> } }[];
    };
    const report = await ctx.reports.create({
      orgId: ctx.orgId,
      projectId: ctx.projectId,
      type: i.type,
      title: i.title,
      summary: i.summary,
      body: i.body,
      metrics: i.metrics,
      recommendations: i.recommendations,
      agentRunId: ctx.agentRunId,
      agentType: ctx.agentType,
    });
    ctx.onReport(report.id);
    return { reportId: report.id, type: report.type, recommendations: report.recommendations.length, actionsAvailable: ctx.reports.availableActions() };
  },
};
