import { ListEnvelope, ListQueryProps, OrgParams, Timestamp, Type, orgErrors } from '../../platform/http/schemas.ts';
import type { App } from '../../platform/http/types.ts';
import { orgOf } from '../../platform/context.ts';
import { assertCanChange } from '../../platform/tenant.ts';
import { SECRET_NAME, type OrgSecretsService } from './org-secrets.ts';

// CONTRACT §12: workflow secrets need `workflows:write` (viewers are refused), values never readable.
const access = { scope: 'workflows:write' };
const tags = ['Secrets'];
const SecretSchema = Type.Object(
  {
    name: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Secret', description: 'An organization secret: its name and times, never its value' },
);
const NameParams = Type.Object({
  orgId: Type.String({ maxLength: 64 }),
  name: Type.String({
    pattern: SECRET_NAME,
    maxLength: 64,
    description: 'letters, digits and `_`, not starting with a digit (at most 64): usable as `$secrets.NAME`',
  }),
});

export function secretRoutes(app: App, secrets: OrgSecretsService): void {
  app.addSchema(SecretSchema);

  app.get(
    '/secrets',
    {
      config: { access },
      schema: {
        tags,
        summary: "The organization's workflow secrets: names and times only (sort name, createdAt, updatedAt)",
        params: OrgParams,
        querystring: Type.Object({ ...ListQueryProps }, { additionalProperties: false }),
        response: { 200: ListEnvelope(Type.Ref('Secret')), ...orgErrors() },
      },
    },
    async (request) => secrets.list(orgOf(request).orgId, request.query),
  );

  app.put(
    '/secrets/:name',
    {
      config: { access },
      schema: {
        tags,
        summary:
          'Create (201) or replace (200) a secret. The value is encrypted at rest and never returned; workflows use it as `{{ $secrets.NAME }}` in node params, resolved only when a node executes.',
        params: NameParams,
        body: Type.Object({ value: Type.String({ minLength: 1, maxLength: 16_384 }) }, { additionalProperties: false }),
        response: { 200: Type.Ref('Secret'), 201: Type.Ref('Secret'), ...orgErrors(422) },
      },
    },
    async (request, reply) => {
      const ctx = orgOf(request);
      // Secrets are organization-wide: read-only for a key bound to a project (CONTRACT §2).
      assertCanChange(ctx, null, 'A secret');
      const { secret, created } = await secrets.put(ctx.orgId, request.params.name, request.body.value);
      reply.code(created ? 201 : 200);
      return secret;
    },
  );

  app.delete(
    '/secrets/:name',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Delete a secret; nodes that reference it fail until it is set again',
        params: NameParams,
        response: { 204: Type.Null(), ...orgErrors() },
      },
    },
    async (request, reply) => {
      const ctx = orgOf(request);
      assertCanChange(ctx, null, 'A secret');
      await secrets.delete(ctx.orgId, request.params.name);
      reply.code(204).send(null);
    },
  );
}
