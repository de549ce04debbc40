import { Type, Timestamp, Nullable, FreeObject, ListEnvelope, ListQueryProps, OrgParams, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import { REPORT_TYPES } from './service.ts';
import type { ReportsService } from './service.ts';

const tags = ['Reports'];
const read = { scope: 'reports:read' };
const write = { scope: 'reports:write' };

const RecommendationSchema = Type.Object(
  {
    index: Type.Integer(),
    title: Type.String(),
    description: Type.String(),
    action: Type.Object({ type: Type.String(), params: FreeObject() }),
    appliedAt: Type.Optional(Type.String({ format: 'date-time' })),
    result: Type.Optional(Type.Unknown()),
  },
  { $id: 'Recommendation' },
);

const ReportSchema = Type.Object(
  {
    id: Type.String(),
    projectId: Nullable(Type.String()),
    type: Type.String(),
    title: Type.String(),
    summary: Type.String(),
    body: Nullable(Type.String({ description: 'markdown' })),
    metrics: FreeObject(),
    recommendations: Type.Array(Type.Ref('Recommendation')),
    agentRunId: Nullable(Type.String()),
    agentType: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Report' },
);

export interface ReportRoutesOptions {
  reports: ReportsService;
}

export const reportRoutes = routesPlugin<ReportRoutesOptions>('report-routes', [ORG_ACCESS], (app, { reports }) => {
  app.addSchema(RecommendationSchema);
  app.addSchema(ReportSchema);

  app.get(
    '/reports',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List reports',
        params: OrgParams,
        querystring: Type.Object(
          {
            ...ListQueryProps,
            type: Type.Optional(Type.Union(REPORT_TYPES.map((t) => Type.Literal(t)))),
            projectId: Type.Optional(Type.String({ maxLength: 64 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(Type.Ref('Report')), ...orgErrors() },
      },
    },
    async (request) => reports.list(orgOf(request), request.query),
  );

  app.get(
    '/reports/:id',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'A report with its recommendations',
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) }),
        response: { 200: Type.Ref('Report'), ...orgErrors() },
      },
    },
    async (request) => reports.get(orgOf(request), request.params.id),
  );

  app.post(
    '/reports/:id/apply-recommendation',
    {
      config: { access: write },
      schema: {
        tags,
        summary:
          'Apply a recommendation: executes its action for real (tag or re-status leads, create a draft, start a workflow or an agent, create a workflow from a template). 404 for an index out of range, 409 when applied before',
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) }),
        body: Type.Object({ index: Type.Integer({ minimum: 0, maximum: 1000 }) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ report: Type.Ref('Report'), recommendation: Type.Ref('Recommendation'), result: Type.Unknown() }),
          ...orgErrors(409, 422),
        },
      },
    },
    async (request) => reports.applyRecommendation(orgOf(request), request.params.id, request.body.index),
  );
});
