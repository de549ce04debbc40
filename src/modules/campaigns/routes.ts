import { Type, ListEnvelope, ListQueryProps, OrgParams, orgErrors, errors } from '../../platform/http/schemas.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/types.ts';
import { ORG_ACCESS, RATE_LIMIT, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import { badRequest, unauthorized } from '../../platform/errors.ts';
import {
  AudienceInput,
  CampaignSchema,
  CampaignStatus,
  ConsentSchema,
  RecipientSchema,
  RecipientStatus,
  SettingsInput,
  StepInput,
  SuppressionChannel,
  SuppressionReason,
  SuppressionSchema,
} from './schemas.ts';
import { CAMPAIGN_CHANNELS } from './service.ts';
import type { CampaignsService } from './service.ts';

const read = { scope: 'campaigns:read' };
const write = { scope: 'campaigns:write' };
const IdParams = Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) });
const Paging = { page: ListQueryProps.page, pageSize: ListQueryProps.pageSize };
const Steps = Type.Array(StepInput, { minItems: 1, maxItems: 20 });
const ScheduledAt = Type.Union([Type.String({ format: 'date-time', maxLength: 40 }), Type.Null()], {
  description: 'start no earlier than this (start then moves the campaign to SCHEDULED)',
});

function assertChannel(channel: string, field: string): void {
  if (!(CAMPAIGN_CHANNELS as readonly string[]).includes(channel))
    throw badRequest(`Unknown channel '${channel}'; one of ${CAMPAIGN_CHANNELS.join(', ')}`, [
      { field, message: `must be one of ${CAMPAIGN_CHANNELS.join(', ')}` },
    ]);
}

export interface CampaignRoutesOptions {
  campaigns: CampaignsService;
}

export const campaignRoutes = routesPlugin<CampaignRoutesOptions>('campaign-routes', [ORG_ACCESS], (app, { campaigns }) => {
  app.addSchema(CampaignSchema);
  app.addSchema(RecipientSchema);
  app.addSchema(SuppressionSchema);
  app.addSchema(ConsentSchema);
  const tags = ['Campaigns'];

  app.get(
    '/campaigns',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List campaigns, newest first',
        params: OrgParams,
        querystring: Type.Object({ ...Paging, status: Type.Optional(CampaignStatus) }, { additionalProperties: false }),
        response: { 200: ListEnvelope(Type.Ref('Campaign')), ...orgErrors() },
      },
    },
    async (request) => campaigns.list(orgOf(request), request.query),
  );

  app.post(
    '/campaigns',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Create a campaign (DRAFT)',
        params: OrgParams,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            projectId: Type.Optional(Type.String({ maxLength: 64 })),
            inboxId: Type.String({ minLength: 1, maxLength: 64 }),
            audience: AudienceInput,
            steps: Steps,
            settings: Type.Optional(SettingsInput),
            scheduledAt: Type.Optional(ScheduledAt),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('Campaign'), ...orgErrors(422) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return campaigns.create(orgOf(request), request.body);
    },
  );

  app.get(
    '/campaigns/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'Get a campaign with its stats', params: IdParams, response: { 200: Type.Ref('Campaign'), ...orgErrors() } },
    },
    async (request) => campaigns.get(orgOf(request), request.params.id),
  );

  app.patch(
    '/campaigns/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change a campaign (DRAFT, SCHEDULED or PAUSED; else 409)',
        params: IdParams,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            inboxId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
            audience: Type.Optional(AudienceInput),
            steps: Type.Optional(Steps),
            settings: Type.Optional(SettingsInput),
            scheduledAt: Type.Optional(ScheduledAt),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Type.Ref('Campaign'), ...orgErrors(409, 422) },
      },
    },
    async (request) => campaigns.update(orgOf(request), request.params.id, request.body),
  );

  app.delete(
    '/campaigns/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Delete a campaign that is not running, with its recipients',
        params: IdParams,
        response: { 204: Type.Null(), ...orgErrors(409) },
      },
    },
    async (request, reply) => {
      await campaigns.delete(orgOf(request), request.params.id);
      reply.code(204).send(null);
    },
  );

  app.post(
    '/campaigns/:id/start',
    {
      config: { access: write },
      // CONTRACT §9 lists no body: none is an empty one.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags,
        summary: 'Start a DRAFT campaign: its audience is resolved now (SCHEDULED instead while scheduledAt is ahead)',
        params: IdParams,
        body: Type.Object(
          { testMode: Type.Optional(Type.Boolean({ description: 'render and record every message, send nothing' })) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Ref('Campaign'), ...orgErrors(409, 422) },
      },
    },
    async (request) => campaigns.start(orgOf(request), request.params.id, request.body ?? {}),
  );

  for (const [action, summary] of [
    ['pause', 'Pause a running or scheduled campaign'],
    ['resume', 'Resume a paused campaign where it stopped'],
    ['cancel', 'Cancel a campaign: the recipients still pending are stopped'],
  ] as const) {
    app.post(
      `/campaigns/:id/${action}`,
      {
        config: { access: write },
        schema: { tags, summary, params: IdParams, response: { 200: Type.Ref('Campaign'), ...orgErrors(409) } },
      },
      async (request) => campaigns[action](orgOf(request), (request.params as { id: string }).id),
    );
  }

  app.post(
    '/campaigns/:id/test',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Send the first step, rendered, to one address (not counted in the campaign)',
        params: IdParams,
        body: Type.Object({ to: Type.String({ minLength: 3, maxLength: 320 }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ ok: Type.Boolean(), messageId: Type.Optional(Type.String()) }), ...orgErrors(422) },
      },
    },
    async (request) => campaigns.test(orgOf(request), request.params.id, request.body),
  );

  app.get(
    '/campaigns/:id/recipients',
    {
      config: { access: read },
      schema: {
        tags,
        summary: "The campaign's recipients",
        params: IdParams,
        querystring: Type.Object({ ...Paging, status: Type.Optional(RecipientStatus) }, { additionalProperties: false }),
        response: { 200: ListEnvelope(Type.Ref('CampaignRecipient')), ...orgErrors() },
      },
    },
    async (request) => campaigns.recipients(orgOf(request), request.params.id, request.query),
  );

  const supTags = ['Suppressions'];
  app.get(
    '/suppressions',
    {
      config: { access: read },
      schema: {
        tags: supTags,
        summary: 'Addresses that receive no outreach',
        params: OrgParams,
        querystring: Type.Object(
          { ...Paging, channel: Type.Optional(SuppressionChannel), q: Type.Optional(Type.String({ maxLength: 200, description: 'part of the address' })) },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(Type.Ref('Suppression')), ...orgErrors() },
      },
    },
    async (request) => campaigns.listSuppressions(orgOf(request), request.query),
  );

  app.post(
    '/suppressions',
    {
      config: { access: write },
      schema: {
        tags: supTags,
        summary: 'Suppress an address on a channel',
        params: OrgParams,
        body: Type.Object(
          { channel: SuppressionChannel, address: Type.String({ minLength: 1, maxLength: 320 }), reason: Type.Optional(SuppressionReason) },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('Suppression'), ...orgErrors() },
      },
    },
    async (request, reply) => {
      assertChannel(request.body.channel, 'body.channel');
      reply.code(201);
      return campaigns.addSuppression(orgOf(request), request.body);
    },
  );

  app.delete(
    '/suppressions/:id',
    {
      config: { access: write },
      schema: { tags: supTags, summary: 'Lift a suppression', params: IdParams, response: { 204: Type.Null(), ...orgErrors() } },
    },
    async (request, reply) => {
      await campaigns.deleteSuppression(orgOf(request), request.params.id);
      reply.code(204).send(null);
    },
  );

  // Consents are campaign data (CONTRACT §9): what a campaign may send depends on them, so they take
  // the campaigns scopes — a `leads:write` key must not be able to record a WhatsApp opt-in.
  const consentTags = ['Leads'];
  app.get(
    '/leads/:id/consents',
    {
      config: { access: read },
      schema: {
        tags: consentTags,
        summary: "A lead's recorded opt-ins and opt-outs, newest first (the newest per channel holds)",
        params: IdParams,
        response: { 200: Type.Object({ items: Type.Array(Type.Ref('Consent')) }), ...orgErrors() },
      },
    },
    async (request) => campaigns.listConsents(orgOf(request), request.params.id),
  );

  app.post(
    '/leads/:id/consents',
    {
      config: { access: write },
      schema: {
        tags: consentTags,
        summary: "Record a lead's opt-in or opt-out on a channel (WhatsApp campaigns need opted_in)",
        params: IdParams,
        body: Type.Object(
          {
            channel: SuppressionChannel,
            status: Type.Union([Type.Literal('opted_in'), Type.Literal('opted_out')]),
            source: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'where it was given: a form, a call, a chat' })),
            text: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'the wording the lead agreed to' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('Consent'), ...orgErrors() },
      },
    },
    async (request, reply) => {
      assertChannel(request.body.channel, 'body.channel');
      reply.code(201);
      return campaigns.addConsent(orgOf(request), request.params.id, request.body);
    },
  );
});

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title></head>` +
    `<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5">${body}</body></html>`
  );
}

/**
 * `GET · POST /api/v1/unsubscribe/:token` (CONTRACT §9, RFC 8058), without login: the token is an
 * HMAC of (organization, channel, address), so it is its own credential. GET shows a page with a
 * confirm button (a form: no script); POST — a mail client's one-click `List-Unsubscribe=One-Click`
 * or that form — suppresses the address.
 */
export const unsubscribeRoutes = routesPlugin<CampaignRoutesOptions>('unsubscribe-routes', [RATE_LIMIT], (app, { campaigns }) => {
  const Params = Type.Object({ token: Type.String({ minLength: 1, maxLength: 2000 }) });
  app.register(async (scoped: App) => {
    scoped.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 1024 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    // RFC 8058 allows multipart/form-data too; what the body says does not matter (the POST is the request).
    scoped.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 4096 }, (_request, _body, done) => done(null, {}));
    /** A token that is not ours (cut short, forged): 401, as a page for a browser. */
    const invalid = (request: FastifyRequest, reply: FastifyReply) => {
      if (!String(request.headers.accept ?? '').includes('text/html')) throw unauthorized('This unsubscribe link is not valid');
      return reply
        .code(401)
        .type('text/html; charset=utf-8')
        .send(page('Link not valid', '<h1>This link is not valid</h1><p>It may have been cut short. Use the link of the message you received.</p>'));
    };
    scoped.get(
      '/unsubscribe/:token',
      {
        schema: {
          tags: ['Campaigns'],
          summary: "The unsubscribe page of an outreach e-mail's link (HTML, a confirm button)",
          security: [],
          params: Params,
          produces: ['text/html'],
          response: { 200: Type.String({ description: 'an HTML page' }), ...errors() },
        },
      },
      async (request, reply) => {
        const who = campaigns.readToken(request.params.token);
        if (!who) return invalid(request, reply as unknown as FastifyReply);
        reply.type('text/html; charset=utf-8');
        return page(
          'Unsubscribe',
          `<h1>Unsubscribe</h1><p>Stop messages to <strong>${escapeHtml(who.address)}</strong>?</p>` +
            `<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
        );
      },
    );
    scoped.post(
      '/unsubscribe/:token',
      {
        schema: {
          tags: ['Campaigns'],
          summary: 'One-click unsubscribe (RFC 8058): the address is suppressed',
          security: [],
          params: Params,
          consumes: ['application/x-www-form-urlencoded', 'multipart/form-data'],
          body: Type.Optional(Type.Object({ 'List-Unsubscribe': Type.Optional(Type.String({ maxLength: 50 })) })),
          response: { 200: Type.Object({ unsubscribed: Type.Boolean(), channel: Type.String(), address: Type.String() }), ...errors() },
        },
      },
      async (request, reply) => {
        const done = await campaigns.unsubscribe(request.params.token);
        if (!done) return invalid(request, reply as unknown as FastifyReply);
        if (String(request.headers.accept ?? '').includes('text/html')) {
          return (reply as unknown as FastifyReply)
            .type('text/html; charset=utf-8')
            .send(page('Unsubscribed', `<h1>You are unsubscribed</h1><p>${escapeHtml(done.address)} will receive no more of these messages.</p>`));
        }
        return { unsubscribed: true, ...done };
      },
    );
  });
});
