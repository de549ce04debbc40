import { Type, ListEnvelope, OrgParams, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import {
  AccountSchema,
  DailyItem,
  DailyQuery,
  RuleCreateBody,
  RulePatchBody,
  RuleSchema,
  RulesQuery,
  SyncBody,
  SyncRunSchema,
  SyncRunsQuery,
} from './schemas.ts';
import type { AnalyticsService } from './service.ts';

const Params = Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) });
// CONTRACT §12: the integration routes (accounts, sync, sync runs) are `content:*`; daily rows and rules `analytics:*`.
const integrationRead = { scope: 'content:read' };
const integrationWrite = { scope: 'content:write' };
const read = { scope: 'analytics:read' };
const write = { scope: 'analytics:write' };

export interface AnalyticsRoutesOptions {
  analytics: AnalyticsService;
}

export const analyticsRoutes = routesPlugin<AnalyticsRoutesOptions>('analytics-routes', [ORG_ACCESS], (app, { analytics }) => {
  for (const schema of [AccountSchema, SyncRunSchema, RuleSchema]) app.addSchema(schema);

  app.get(
    '/integrations/:id/accounts',
    {
      config: { access: integrationRead },
      schema: {
        tags: ['Integrations'],
        summary: 'The GA4 properties and Search Console sites a google integration can read',
        description:
          "Asks Google (GA4 Admin API account summaries, the Search Console sites list, unverified sites left out). Set one as the integration's `config.propertyId` or `config.siteUrl` to sync it. 422 `REAUTH_REQUIRED` when Google refuses the connection (reconnect it).",
        params: Params,
        response: { 200: Type.Array(Type.Ref('AnalyticsAccount')), ...orgErrors(422, 502) },
      },
    },
    async (request) => analytics.accounts(orgOf(request), request.params.id),
  );

  app.post(
    '/integrations/:id/sync',
    {
      config: { access: integrationWrite },
      schema: {
        tags: ['Integrations'],
        summary: "Sync a google integration's analytics now",
        description:
          "Queues a sync of the days `from`–`to` (at most 500; default: the last 4 days to yesterday, UTC) for the integration's GA4 property and Search Console site; follow it in `GET …/integrations/:id/sync-runs`. A run already queued or running for these days (or more) answers instead; one that covers the days of that day's scheduled sync stands for it (the daily run is not queued).",
        params: Params,
        body: SyncBody,
        response: { 202: Type.Object({ syncRunId: Type.String(), status: Type.String() }), ...orgErrors(409, 422) },
      },
    },
    async (request, reply) => {
      reply.code(202);
      return analytics.requestSync(orgOf(request), request.params.id, request.body ?? {});
    },
  );

  app.get(
    '/integrations/:id/sync-runs',
    {
      config: { access: integrationRead },
      schema: {
        tags: ['Integrations'],
        summary: 'The analytics syncs of an integration, newest first',
        params: Params,
        querystring: SyncRunsQuery,
        response: { 200: ListEnvelope(Type.Ref('AnalyticsSyncRun')), ...orgErrors() },
      },
    },
    async (request) => analytics.listSyncRuns(orgOf(request), request.params.id, request.query),
  );

  app.get(
    '/analytics/daily',
    {
      config: { access: read },
      schema: {
        operationId: 'listAnalyticsDaily',
        tags: ['Analytics'],
        summary: 'Synced analytics by day',
        description:
          'One item per day, source and integration, oldest first; every day a sync covered is there (zeros when Google had no data). At most 731 days at once.',
        params: OrgParams,
        querystring: DailyQuery,
        response: { 200: Type.Object({ items: Type.Array(DailyItem) }), ...orgErrors() },
      },
    },
    async (request) => analytics.daily(orgOf(request), request.query),
  );

  app.get(
    '/analytics/rules',
    {
      config: { access: read },
      schema: {
        operationId: 'listAnalyticsRules',
        tags: ['Analytics'],
        summary: 'List threshold rules',
        params: OrgParams,
        querystring: RulesQuery,
        response: { 200: ListEnvelope(Type.Ref('AnalyticsRule')), ...orgErrors() },
      },
    },
    async (request) => analytics.listRules(orgOf(request), request.query),
  );

  app.post(
    '/analytics/rules',
    {
      config: { access: write },
      schema: {
        operationId: 'createAnalyticsRule',
        tags: ['Analytics'],
        summary: 'Create a threshold rule',
        description:
          'Evaluated after each sync. `analytics.threshold` and a notification only on the move from `ok` to `firing`; back to `ok` when the condition clears.',
        params: OrgParams,
        body: RuleCreateBody,
        response: { 201: Type.Ref('AnalyticsRule'), ...orgErrors(422) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return analytics.createRule(orgOf(request), request.body);
    },
  );

  app.get(
    '/analytics/rules/:id',
    {
      config: { access: read },
      schema: {
        operationId: 'getAnalyticsRule',
        tags: ['Analytics'],
        summary: 'Get a threshold rule and its state',
        params: Params,
        response: { 200: Type.Ref('AnalyticsRule'), ...orgErrors() },
      },
    },
    async (request) => analytics.getRule(orgOf(request), request.params.id),
  );

  app.patch(
    '/analytics/rules/:id',
    {
      config: { access: write },
      schema: {
        operationId: 'updateAnalyticsRule',
        tags: ['Analytics'],
        summary: 'Change a threshold rule',
        description: 'Changing what it watches (metric, compare, threshold, window, minBaseline, integration) puts it back to `ok`.',
        params: Params,
        body: RulePatchBody,
        response: { 200: Type.Ref('AnalyticsRule'), ...orgErrors() },
      },
    },
    async (request) => analytics.updateRule(orgOf(request), request.params.id, request.body),
  );

  app.delete(
    '/analytics/rules/:id',
    {
      config: { access: write },
      schema: {
        operationId: 'deleteAnalyticsRule',
        tags: ['Analytics'],
        summary: 'Delete a threshold rule',
        params: Params,
        response: { 204: Type.Null(), ...orgErrors() },
      },
    },
    async (request, reply) => {
      await analytics.deleteRule(orgOf(request), request.params.id);
      reply.code(204).send(null);
    },
  );
});
