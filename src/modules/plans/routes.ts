import { orgOf } from '../../platform/context.ts';
import { OrgParams, Type, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { FEATURES, type Feature } from '../../shared/plans.ts';
import type { PlansService } from './service.ts';

const held = (what: string) => Type.Integer({ minimum: 0, description: `${what} held now` });
const monthly = (what: string) => Type.Integer({ minimum: 0, description: `${what} this calendar month (UTC)` });

const Limits = Type.Object(
  {
    leads: Type.Optional(held('leads')),
    members: Type.Optional(held('members')),
    webhookEndpoints: Type.Optional(held('webhook endpoints')),
    inboxes: Type.Optional(held('inboxes')),
    runsPerMonth: Type.Optional(monthly('workflow runs started')),
    agentRunsPerMonth: Type.Optional(monthly('agent runs started (conversation bot turns not counted)')),
    campaignMessagesPerMonth: Type.Optional(monthly('campaign messages sent (test mode not counted)')),
  },
  { additionalProperties: false, description: "The plan's limits; a missing one is unlimited (with no PLANS configured: none)" },
);

const Used = Type.Object(
  {
    leads: held('leads'),
    members: held('members'),
    webhookEndpoints: held('webhook endpoints'),
    inboxes: held('inboxes'),
    runsPerMonth: monthly('workflow runs started'),
    agentRunsPerMonth: monthly('agent runs started'),
    campaignMessagesPerMonth: monthly('campaign messages sent'),
  },
  { additionalProperties: false, description: 'What the organization uses of each limit now' },
);

export const PlanSchema = Type.Object(
  {
    plan: Type.String({ description: "the plan's name; `unlimited` when the service has no PLANS configured" }),
    features: Type.Array(Type.Unsafe<Feature>({ type: 'string', enum: [...FEATURES] }), { description: 'the features the plan includes' }),
    limits: Limits,
    used: Used,
  },
  { $id: 'Plan', additionalProperties: false },
);

export interface PlanRoutesOptions {
  plans: PlansService;
}

export const planRoutes = routesPlugin<PlanRoutesOptions>('plan-routes', [ORG_ACCESS], (app, { plans }) => {
  app.addSchema(PlanSchema);
  app.get(
    '/plan',
    {
      // Any member or API key (CONTRACT §12): no scope.
      config: { access: {} },
      schema: {
        tags: ['Usage'],
        summary: "The organization's plan: its features, limits and what is used of each",
        description:
          'With no PLANS configured the plan is `unlimited`, with every feature and no limits. A route of a feature the plan lacks answers 403 `PLAN_FEATURE`; a create beyond a count limit, or a start beyond a monthly one, 429 `PLAN_LIMIT` with `details: { limit, value, used }` (monthly ones with `Retry-After` until the month ends in UTC).',
        params: OrgParams,
        response: { 200: PlanSchema, ...orgErrors() },
      },
    },
    async (request) => plans.view(orgOf(request).orgId),
  );
});
