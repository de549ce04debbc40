import { Type, Timestamp, Nullable, OrgParams, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import { SCOPES } from './service.ts';
import type { ApiKeysService } from './service.ts';

const Scope = Type.Union(SCOPES.map((s) => Type.Literal(s)));
const ApiKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    prefix: Type.String(),
    projectId: Nullable(Type.String()),
    lastUsedAt: Nullable(Timestamp),
    createdAt: Timestamp,
  },
  { $id: 'ApiKey' },
);
const tags = ['API keys'];

/** The organization's projects (the orgs module): a key bound to a project names one of them. */
export interface ApiKeysProjectsPort {
  assertProject(orgId: string, projectId: string): Promise<void>;
}

export interface ApiKeyRoutesOptions {
  apiKeys: ApiKeysService;
  orgs: ApiKeysProjectsPort;
}

export const apiKeyRoutes = routesPlugin<ApiKeyRoutesOptions>('api-key-routes', [ORG_ACCESS], (app, { apiKeys, orgs }) => {
  app.addSchema(ApiKeySchema);

  app.get(
    '/api-keys',
    {
      config: { access: { admin: true, orgLevel: true } },
      schema: { tags, summary: 'API keys (never their secrets)', params: OrgParams, response: { 200: Type.Array(Type.Ref('ApiKey')), ...orgErrors() } },
    },
    async (request) => apiKeys.list(orgOf(request).orgId),
  );

  app.post(
    '/api-keys',
    {
      config: { access: { admin: true, orgLevel: true } },
      schema: {
        tags,
        summary: 'Create an API key; the key is shown only in this response',
        params: OrgParams,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            scopes: Type.Array(Scope, { minItems: 1, maxItems: SCOPES.length }),
            projectId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({
            id: Type.String(),
            name: Type.String(),
            scopes: Type.Array(Type.String()),
            prefix: Type.String(),
            projectId: Nullable(Type.String()),
            key: Type.String(),
            createdAt: Timestamp,
          }),
          ...orgErrors(),
        },
      },
    },
    async (request, reply) => {
      const ctx = orgOf(request);
      if (request.body.projectId !== undefined && request.body.projectId !== null) await orgs.assertProject(ctx.orgId, request.body.projectId);
      reply.code(201);
      return apiKeys.create(ctx.orgId, { ...request.body, createdBy: ctx.actor.id });
    },
  );

  app.delete(
    '/api-keys/:id',
    {
      config: { access: { admin: true, orgLevel: true } },
      schema: {
        tags,
        summary: 'Revoke an API key; it stops working at once',
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) }),
        response: { 204: Type.Null(), ...orgErrors() },
      },
    },
    async (request, reply) => {
      await apiKeys.delete(orgOf(request).orgId, request.params.id);
      reply.code(204).send(null);
    },
  );
});
