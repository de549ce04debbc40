import { Type, Timestamp, Nullable, ListEnvelope, ListQueryProps, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import { DELIVERIES_WAKE, publicEndpoint } from './service.ts';
import { PLATFORM_EVENT_NAMES } from '../../shared/event-names.ts';
import type { Bus } from '../../platform/bus.ts';
import type { WebhooksService } from './service.ts';

const EndpointSchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    projectId: Nullable(Type.String()),
    active: Type.Boolean(),
    description: Nullable(Type.String()),
    consecutiveFailures: Type.Integer(),
    disabledReason: Nullable(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'WebhookEndpoint' },
);

const DeliverySchema = Type.Object(
  {
    id: Type.String(),
    endpointId: Type.String(),
    eventId: Type.String(),
    eventType: Type.String(),
    attempt: Type.Integer(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
    statusCode: Nullable(Type.Integer()),
    durationMs: Nullable(Type.Integer()),
    responseBodyPreview: Nullable(Type.String()),
    error: Nullable(Type.String()),
    createdAt: Timestamp,
    finishedAt: Nullable(Timestamp),
    nextAttemptAt: Nullable(Timestamp),
  },
  { $id: 'WebhookDelivery' },
);

const EventName = Type.String({ minLength: 1, maxLength: 100, pattern: '^(\\*|[a-z]+(\\.[a-z_]+)+)$' });
const Url = Type.String({ minLength: 1, maxLength: 2048 });
const Params = Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) });
const read = { scope: 'webhooks:read' };
const write = { scope: 'webhooks:write', manage: true };
const tags = ['Webhook endpoints'];

export interface WebhookRoutesOptions {
  webhooks: WebhooksService;
  bus: Bus;
}

export const webhookRoutes = routesPlugin<WebhookRoutesOptions>('webhook-routes', [ORG_ACCESS], (app, { webhooks, bus }) => {
  app.addSchema(EndpointSchema);
  app.addSchema(DeliverySchema);

  app.post(
    '/webhook-endpoints',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Create a webhook endpoint; the signing secret is shown only here and on rotation',
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }) }),
        body: Type.Object(
          {
            url: Url,
            secret: Type.Optional(Type.String({ maxLength: 200, description: 'generated when empty' })),
            events: Type.Array(EventName, {
              minItems: 1,
              maxItems: 50,
              description: `platform event names (${PLATFORM_EVENT_NAMES.join(', ')}), or ["*"] for all; an unknown name is 400`,
            }),
            projectId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
            active: Type.Optional(Type.Boolean()),
            description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Object({ ...EndpointSchema.properties, secret: Type.String() }), ...orgErrors() },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return webhooks.create(orgOf(request), request.body);
    },
  );

  app.get(
    '/webhook-endpoints',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List webhook endpoints',
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }) }),
        querystring: Type.Object({ page: ListQueryProps.page, pageSize: ListQueryProps.pageSize }),
        response: { 200: ListEnvelope(Type.Ref('WebhookEndpoint')), ...orgErrors() },
      },
    },
    async (request) => webhooks.list(orgOf(request), request.query),
  );

  app.get(
    '/webhook-endpoints/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'Get a webhook endpoint', params: Params, response: { 200: Type.Ref('WebhookEndpoint'), ...orgErrors() } },
    },
    async (request) => publicEndpoint(await webhooks.row(orgOf(request), request.params.id)),
  );

  app.patch(
    '/webhook-endpoints/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change a webhook endpoint; re-enabling resets its failure count',
        params: Params,
        body: Type.Object(
          {
            url: Type.Optional(Url),
            events: Type.Optional(Type.Array(EventName, { minItems: 1, maxItems: 50 })),
            projectId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
            active: Type.Optional(Type.Boolean()),
            description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Type.Ref('WebhookEndpoint'), ...orgErrors() },
      },
    },
    async (request) => webhooks.update(orgOf(request), request.params.id, request.body),
  );

  app.delete(
    '/webhook-endpoints/:id',
    {
      config: { access: write },
      schema: { tags, summary: 'Delete a webhook endpoint and its history', params: Params, response: { 204: Type.Null(), ...orgErrors() } },
    },
    async (request, reply) => {
      await webhooks.delete(orgOf(request), request.params.id);
      reply.code(204).send(null);
    },
  );

  app.post(
    '/webhook-endpoints/:id/rotate-secret',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Replace the signing secret; the new one is shown once',
        params: Params,
        response: { 200: Type.Object({ secret: Type.String() }), ...orgErrors() },
      },
    },
    async (request) => webhooks.rotateSecret(orgOf(request), request.params.id),
  );

  app.post(
    '/webhook-endpoints/:id/test',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Send a `ping` envelope now and show the answer',
        params: Params,
        response: {
          200: Type.Object({
            ok: Type.Boolean(),
            statusCode: Type.Optional(Type.Integer()),
            durationMs: Type.Integer(),
            responseBodyPreview: Type.Optional(Type.String()),
            error: Type.Optional(Type.String()),
          }),
          ...orgErrors(),
        },
      },
    },
    async (request) => {
      const { ok, statusCode, durationMs, responseBodyPreview, error } = await webhooks.test(orgOf(request), request.params.id);
      return { ok, statusCode, durationMs, responseBodyPreview, error };
    },
  );

  app.get(
    '/webhook-endpoints/:id/deliveries',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'Delivery attempts of the last 7 days, newest first',
        params: Params,
        querystring: Type.Object(
          {
            page: ListQueryProps.page,
            pageSize: ListQueryProps.pageSize,
            status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')])),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(Type.Ref('WebhookDelivery')), ...orgErrors() },
      },
    },
    async (request) => webhooks.deliveries(orgOf(request), request.params.id, request.query),
  );

  app.post(
    '/webhook-endpoints/:id/deliveries/:deliveryId/resend',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Deliver the same envelope again (same envelope id, new delivery)',
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }), deliveryId: Type.String({ maxLength: 64 }) }),
        response: { 202: Type.Ref('WebhookDelivery'), ...orgErrors() },
      },
    },
    async (request, reply) => {
      const delivery = await webhooks.resend(orgOf(request), request.params.id, request.params.deliveryId);
      bus.publish(DELIVERIES_WAKE, null).catch(() => {});
      reply.code(202);
      return delivery;
    },
  );
});
