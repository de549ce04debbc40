import { Type, Timestamp, Nullable, ListEnvelope, ListQueryProps, OrgParams, orgErrors } from '../../platform/http/schemas.ts';
import type { App } from '../../platform/http/types.ts';
import { orgOf } from '../../platform/context.ts';

const IntegrationSchema = Type.Object({
  id: Type.String(),
  provider: Type.Union([Type.Literal('linkedin'), Type.Literal('x')]),
  name: Type.String(),
  projectId: Nullable(Type.String()),
  status: Type.Union([Type.Literal('connected'), Type.Literal('error')], { description: '`error`: authentication failed; reconnect the account' }),
  lastError: Nullable(Type.Object({ code: Type.String(), message: Type.String(), at: Type.String() })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { $id: 'Integration' });

const Params = Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) });
const read = { scope: 'content:read' };
const write = { scope: 'content:write', manage: true };
const tags = ['Integrations'];

export function integrationRoutes(app: App): void {
  const { integrations } = app.services;
  app.addSchema(IntegrationSchema);

  app.post('/integrations', {
    config: { access: write },
    schema: {
      tags,
      summary: 'Connect a social account. Credentials are encrypted at rest and never returned',
      description: 'linkedin: `{ accessToken, author }` (author: `urn:li:person:…` or `urn:li:organization:…`); x: `{ accessToken }` (OAuth 2.0 user token with tweet.write).',
      params: OrgParams,
      body: Type.Object({
        provider: Type.Union([Type.Literal('linkedin'), Type.Literal('x')]),
        name: Type.String({ minLength: 1, maxLength: 200 }),
        projectId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
        credentials: Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4096 }), { maxProperties: 10 }),
      }, { additionalProperties: false }),
      response: { 201: Type.Ref('Integration'), ...orgErrors() },
    },
  }, async (request, reply) => {
    reply.code(201);
    return integrations.connect(orgOf(request), request.body);
  });

  app.get('/integrations', {
    config: { access: read },
    schema: {
      tags, summary: 'List connected accounts (no credentials)', params: OrgParams,
      querystring: Type.Object({
        page: ListQueryProps.page, pageSize: ListQueryProps.pageSize,
        provider: Type.Optional(Type.Union([Type.Literal('linkedin'), Type.Literal('x')])),
        status: Type.Optional(Type.Union([Type.Literal('connected'), Type.Literal('error')])),
      }, { additionalProperties: false }),
      response: { 200: ListEnvelope(Type.Ref('Integration')), ...orgErrors() },
    },
  }, async (request) => integrations.list(orgOf(request), request.query));

  app.get('/integrations/:id', {
    config: { access: read },
    schema: { tags, summary: 'Get a connected account', params: Params, response: { 200: Type.Ref('Integration'), ...orgErrors() } },
  }, async (request) => integrations.get(orgOf(request), request.params.id));

  app.delete('/integrations/:id', {
    config: { access: write },
    schema: { tags, summary: 'Disconnect an account (its credentials are deleted)', params: Params, response: { 204: Type.Null(), ...orgErrors() } },
  }, async (request, reply) => {
    await integrations.delete(orgOf(request), request.params.id);
    reply.code(204).send(null);
  });
}
