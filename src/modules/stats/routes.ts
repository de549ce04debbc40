import { Type, Timestamp, OrgParams, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import { METRICS } from './service.ts';
import type { StatsService } from './service.ts';

const Granularity = Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('week'), Type.Literal('month')]);

const tags = ['Usage and statistics'];

const StatsResult = Type.Object({
  granularity: Granularity,
  timezone: Type.String(),
  from: Timestamp,
  to: Timestamp,
  series: Type.Array(
    Type.Object({
      metric: Type.String(),
      total: Type.Number(),
      points: Type.Array(Type.Object({ at: Timestamp, value: Type.Number() })),
    }),
  ),
});

export interface StatsRoutesOptions {
  stats: StatsService;
}

export const statsRoutes = routesPlugin<StatsRoutesOptions>('stats-routes', [ORG_ACCESS], (app, { stats }) => {
  app.post(
    '/stats/query',
    {
      config: { access: { scope: ['usage:read', 'leads:read'], write: false } },
      schema: {
        tags,
        summary: 'Statistics series over time, from the recorded events and usage',
        description: `Metrics: ${METRICS.join(', ')}. One point per bucket (\`at\` = the bucket's start in \`timezone\`, default UTC; weeks start on Monday); empty buckets are 0. \`from\`/\`to\`: a date is the whole day in the time zone (to included); a timestamp \`to\` is excluded.`,
        params: OrgParams,
        body: Type.Object(
          {
            metrics: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 20 }),
            from: Type.String({ minLength: 10, maxLength: 40 }),
            to: Type.String({ minLength: 10, maxLength: 40 }),
            granularity: Granularity,
            timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
            projectId: Type.Optional(Type.String({ maxLength: 64 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: StatsResult, ...orgErrors() },
      },
    },
    async (request) => {
      const ctx = orgOf(request);
      return stats.query(ctx, request.body);
    },
  );
});
