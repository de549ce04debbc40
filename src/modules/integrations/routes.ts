import type { FastifyReply } from 'fastify';
import { Type, Timestamp, Nullable, ListEnvelope, ListQueryProps, OrgParams, orgErrors, errors } from '../../platform/http/schemas.ts';
import { COOKIE, ORG_ACCESS, RATE_LIMIT, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import { AppError } from '../../platform/errors.ts';
import { clearFlowCookie, presentedFlowSecret, setFlowCookie } from './flow-cookie.ts';
import { OAUTH_STATE_TTL_MS } from './service.ts';
import type { Config } from '../../config.ts';
import type { IntegrationsService } from './service.ts';

const ProviderSchema = Type.Union([Type.Literal('linkedin'), Type.Literal('x'), Type.Literal('google')]);

const IntegrationSchema = Type.Object(
  {
    id: Type.String(),
    provider: ProviderSchema,
    name: Type.String(),
    projectId: Nullable(Type.String()),
    status: Type.Union([Type.Literal('connected'), Type.Literal('error')], {
      description:
        '`error`: authentication failed; reconnect the account (`lastError.code` `REAUTH_REQUIRED` for an OAuth connection whose grant was revoked or expired)',
    }),
    lastError: Nullable(Type.Object({ code: Type.String(), message: Type.String(), at: Type.String() })),
    config: Type.Record(Type.String(), Type.String(), {
      description: 'What the integration reads, set with PATCH (google: `propertyId` for GA4, `siteUrl` for Search Console)',
    }),
    authType: Type.Union([Type.Literal('token'), Type.Literal('oauth')], {
      description: "`token`: credentials pasted; `oauth`: connected through the provider's consent screen (refreshed automatically)",
    }),
    tokenExpiresAt: Nullable(
      Type.Unsafe<Date | string>({
        type: 'string',
        format: 'date-time',
        description: 'When the current OAuth access token expires (it is refreshed before then); null for pasted tokens',
      }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Integration' },
);

const Params = Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) });
const read = { scope: 'content:read' };
const write = { scope: 'content:write', manage: true };
const tags = ['Integrations'];

export interface IntegrationRoutesOptions {
  integrations: IntegrationsService;
  config: Config;
}

export const integrationRoutes = routesPlugin<IntegrationRoutesOptions>('integration-routes', [ORG_ACCESS], (app, { integrations, config }) => {
  app.addSchema(IntegrationSchema);

  app.post(
    '/integrations',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Connect a social account with pasted credentials. Credentials are encrypted at rest and never returned',
        description:
          'linkedin: `{ accessToken, author }` (author: `urn:li:person:…` or `urn:li:organization:…`); x: `{ accessToken }` (OAuth 2.0 user token with tweet.write). A pasted token is not refreshed: prefer `POST …/integrations/oauth/:provider/start`.',
        params: OrgParams,
        body: Type.Object(
          {
            provider: Type.Union([Type.Literal('linkedin'), Type.Literal('x')]),
            name: Type.String({ minLength: 1, maxLength: 200 }),
            projectId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
            credentials: Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4096 }), { maxProperties: 10 }),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('Integration'), ...orgErrors() },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return integrations.connect(orgOf(request), request.body);
    },
  );

  app.post(
    '/integrations/oauth/:provider/start',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Start connecting an account through the provider (OAuth 2.0 authorization code with PKCE)',
        description:
          "Answers the provider's consent URL; send the browser there. Call it from the browser that goes to the provider (the panel does, with fetch): the answer sets an `HttpOnly` cookie (path `/api/v1/oauth`, `SameSite=Lax`) that binds the authorization to that browser, and the callback refuses a browser without it. The provider redirects to `PUBLIC_URL/api/v1/oauth/callback`, which stores the connection and redirects to `returnTo` (or the panel's integrations page) with `?connected=<integrationId>` (or `?error=…`). The authorization is single-use and expires in 10 minutes. `integrationId` reconnects that integration, keeping its id and its scheduled posts. 422 `INTEGRATION_NOT_CONFIGURED` when the server has no client id for the provider.",
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }), provider: ProviderSchema }),
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            projectId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
            returnTo: Type.Optional(
              Type.String({ maxLength: 2048, description: "Where the browser goes afterwards: a URL on this service's origin (PUBLIC_URL) or a path" }),
            ),
            integrationId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Reconnect this integration (same provider)' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ authorizationUrl: Type.String() }), ...orgErrors(422) },
      },
    },
    async (request, reply) => {
      const { authorizationUrl, flow } = await integrations.startOAuth(orgOf(request), request.params.provider, request.body ?? {});
      setFlowCookie(reply, config, flow.state, flow.secret, OAUTH_STATE_TTL_MS);
      return { authorizationUrl };
    },
  );

  app.get(
    '/integrations',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List connected accounts (no credentials)',
        params: OrgParams,
        querystring: Type.Object(
          {
            page: ListQueryProps.page,
            pageSize: ListQueryProps.pageSize,
            provider: Type.Optional(ProviderSchema),
            status: Type.Optional(Type.Union([Type.Literal('connected'), Type.Literal('error')])),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(Type.Ref('Integration')), ...orgErrors() },
      },
    },
    async (request) => integrations.list(orgOf(request), request.query),
  );

  app.get(
    '/integrations/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'Get a connected account', params: Params, response: { 200: Type.Ref('Integration'), ...orgErrors() } },
    },
    async (request) => integrations.get(orgOf(request), request.params.id),
  );

  app.patch(
    '/integrations/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Rename a connected account or choose what it reads',
        description:
          '`config` keys are merged; an empty string removes one. google: `propertyId` (`properties/123456789` or its digits; stored as `properties/…`) makes it a GA4 source, `siteUrl` (`https://www.example.com/` or `sc-domain:example.com`) a Search Console source. linkedin and x have no settings.',
        params: Params,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            config: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 2048 }), { maxProperties: 10 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Ref('Integration'), ...orgErrors() },
      },
    },
    async (request) => integrations.update(orgOf(request), request.params.id, request.body),
  );

  app.delete(
    '/integrations/:id',
    {
      config: { access: write },
      schema: { tags, summary: 'Disconnect an account (its credentials are deleted)', params: Params, response: { 204: Type.Null(), ...orgErrors() } },
    },
    async (request, reply) => {
      await integrations.delete(orgOf(request), request.params.id);
      reply.code(204).send(null);
    },
  );
});

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * `GET /api/v1/oauth/callback` (CONTRACT §10), without login: the provider sends the browser back
 * here. The `state` (single-use, 10 minutes, stored as a hash) counts only with the flow cookie of
 * the browser that started it (flow-cookie.ts). Answers a 302 to where the connection was started
 * from; an unknown, used or expired state, or one without its cookie, is a 400 (a page for a
 * browser) and stores nothing. The cookie is cleared either way.
 */
export const oauthCallbackRoutes = routesPlugin<IntegrationRoutesOptions>('oauth-callback-routes', [RATE_LIMIT, COOKIE], (app, { integrations, config }) => {
  const text = (maxLength: number) => Type.Optional(Type.String({ maxLength }));
  app.get(
    '/oauth/callback',
    {
      schema: {
        tags,
        summary: 'Where LinkedIn, X and Google send the browser back after consent (register this URL with each provider)',
        description:
          "Stores the connection and redirects (302) to the `returnTo` of the start request (or the panel's integrations page) with `connected=<integrationId>`, or with `error=<code>` (`access_denied` when the user declined; nothing is stored). A state that is unknown, expired (10 minutes) or already used, or that comes without the cookie its start set in the browser, is a 400 `OAUTH_STATE_INVALID`.",
        security: [],
        querystring: Type.Object({
          state: text(512),
          code: text(4096),
          error: text(256),
          error_description: text(2048),
          error_uri: text(2048),
          iss: text(2048),
          scope: text(4096),
        }),
        response: {
          302: Type.Null({ description: 'Redirect to `returnTo` with `connected` or `error` (Location header)' }),
          ...errors(),
        },
      },
    },
    async (request, reply) => {
      const query = request.query as Record<string, string | undefined>;
      // Spent or refused, the flow is over for this browser: its cookie goes (the header stays on an error answer too).
      if (query.state) clearFlowCookie(reply, config, query.state);
      try {
        const { location } = await integrations.completeOAuth(query, query.state ? presentedFlowSecret(request, query.state) : undefined);
        return (reply as unknown as FastifyReply).header('cache-control', 'no-store').redirect(location, 302);
      } catch (error) {
        if (error instanceof AppError && error.statusCode === 400 && String(request.headers.accept ?? '').includes('text/html')) {
          return (reply as unknown as FastifyReply)
            .code(400)
            .type('text/html; charset=utf-8')
            .send(
              '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Connection not completed</title></head>' +
                '<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5">' +
                `<h1>The connection was not completed</h1><p>${escapeHtml(error.message)}</p><p><a href="/">Back to the panel</a> (Settings → Integrations) to connect again.</p></body></html>`,
            );
        }
        throw error;
      }
    },
  );
});
