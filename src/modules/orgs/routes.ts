import { Type, Timestamp, Nullable, OrgParams, errors, orgErrors } from '../../platform/http/schemas.ts';
import type { FastifyRequest } from 'fastify';
import { ORG_ACCESS, RATE_LIMIT, routesPlugin } from '../../platform/http/plugin.ts';
import { forbidden } from '../../platform/errors.ts';
import { orgOf, type Principal } from '../../platform/context.ts';
import { transaction, type Db } from '../../platform/db.ts';
import { ROLES, type OrgsService, type Role } from './service.ts';

const ProjectSchema = Type.Object({ id: Type.String(), name: Type.String(), createdAt: Timestamp, updatedAt: Timestamp }, { $id: 'Project' });
const MemberSchema = Type.Object(
  {
    id: Type.String(),
    userId: Type.String(),
    email: Type.String(),
    name: Nullable(Type.String()),
    role: Type.Union(ROLES.map((r) => Type.Literal(r))),
    createdAt: Timestamp,
  },
  { $id: 'Member' },
);
const Name = Type.String({ minLength: 1, maxLength: 200 });

/** Who is calling (the auth module's guard): these routes are not under an organization the org guard checks. */
export interface OrgsGuardPort {
  authenticate(request: FastifyRequest): Promise<Principal>;
}

export interface OrgListRoutesOptions {
  guard: OrgsGuardPort;
  orgs: OrgsService;
  /** An organization is created in a transaction of its own. */
  db: Db;
}

/** Routes at /api/v1 that are not under one organization. */
export const orgListRoutes = routesPlugin<OrgListRoutesOptions>('org-list-routes', [RATE_LIMIT], (app, { guard, orgs, db }) => {
  const tags = ['Organizations'];

  app.get(
    '/orgs',
    {
      schema: { tags, summary: 'Organizations visible to the caller', response: { 200: Type.Array(Type.Ref('Organization')), ...errors() } },
    },
    async (request) => {
      const principal = await guard.authenticate(request);
      if (principal.kind === 'apiKey') return [await orgs.get(principal.orgId)];
      return orgs.listForUser(principal.userId);
    },
  );

  app.post(
    '/orgs',
    {
      schema: {
        tags,
        summary: 'Create an organization; the caller becomes its owner and a "Default" project is created',
        body: Type.Object({ name: Name }, { additionalProperties: false }),
        response: { 201: Type.Ref('Organization'), ...errors(403) },
      },
    },
    async (request, reply) => {
      const principal = await guard.authenticate(request);
      if (principal.kind !== 'user') throw forbidden('Creating an organization needs a user session');
      const org = await transaction(db, (tx) => orgs.create(tx, { name: request.body.name, ownerUserId: principal.userId }));
      reply.code(201);
      return org;
    },
  );
});

export interface OrgRoutesOptions {
  orgs: OrgsService;
}

/** Routes under /orgs/:orgId; the org guard has already authorized the caller. */
export const orgRoutes = routesPlugin<OrgRoutesOptions>('org-routes', [ORG_ACCESS], (app, { orgs }) => {
  const tags = ['Organizations'];
  app.addSchema(ProjectSchema);
  app.addSchema(MemberSchema);

  app.get(
    '',
    {
      config: { access: {} },
      schema: { tags, summary: 'The organization', params: OrgParams, response: { 200: Type.Ref('Organization'), ...orgErrors() } },
    },
    async (request) => orgs.get(orgOf(request).orgId),
  );

  app.get(
    '/projects',
    {
      config: { access: {} },
      schema: {
        tags: ['Projects'],
        summary: 'Projects of the organization',
        params: OrgParams,
        response: { 200: Type.Array(Type.Ref('Project')), ...orgErrors() },
      },
    },
    async (request) => {
      const ctx = orgOf(request);
      const list = await orgs.listProjects(ctx.orgId);
      return ctx.projectId ? list.filter((p) => p.id === ctx.projectId) : list;
    },
  );

  app.post(
    '/projects',
    {
      config: { access: { admin: true } },
      schema: {
        tags: ['Projects'],
        summary: 'Create a project (owner or admin)',
        params: OrgParams,
        body: Type.Object({ name: Name }, { additionalProperties: false }),
        response: { 201: Type.Ref('Project'), ...orgErrors() },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return orgs.createProject(orgOf(request).orgId, request.body.name);
    },
  );

  app.get(
    '/members',
    {
      config: { access: { sessionOnly: true, orgLevel: true } },
      schema: { tags: ['Members'], summary: 'Members and their roles', params: OrgParams, response: { 200: Type.Array(Type.Ref('Member')), ...orgErrors() } },
    },
    async (request) => orgs.listMembers(orgOf(request).orgId),
  );

  app.post(
    '/members',
    {
      config: { access: { admin: true, orgLevel: true } },
      schema: {
        tags: ['Members'],
        summary: 'Add an existing user as a member (owner or admin)',
        params: OrgParams,
        body: Type.Object(
          { email: Type.String({ format: 'email', maxLength: 254 }), role: Type.Union(ROLES.map((r) => Type.Literal(r))) },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('Member'), ...orgErrors(409) },
      },
    },
    async (request, reply) => {
      const ctx = orgOf(request);
      if (request.body.role === 'owner' && ctx.role !== 'owner') throw forbidden('Only an owner can add another owner');
      reply.code(201);
      return orgs.addMember(ctx.orgId, request.body.email, request.body.role);
    },
  );

  const MemberParams = Type.Object({ orgId: Type.String({ maxLength: 64 }), userId: Type.String({ maxLength: 64 }) });

  app.patch(
    '/members/:userId',
    {
      config: { access: { admin: true, orgLevel: true } },
      schema: {
        tags: ['Members'],
        summary: "Change a member's role (owner or admin)",
        description: "Only an owner makes an owner or changes an owner's role (403 otherwise). The last owner cannot be demoted: 409.",
        params: MemberParams,
        body: Type.Object({ role: Type.Union(ROLES.map((r) => Type.Literal(r))) }, { additionalProperties: false }),
        response: { 200: Type.Ref('Member'), ...orgErrors(409) },
      },
    },
    async (request) => {
      const ctx = orgOf(request);
      return orgs.updateMemberRole(ctx.orgId, request.params.userId, request.body.role as Role, ctx.role);
    },
  );

  app.delete(
    '/members/:userId',
    {
      config: { access: { admin: true, orgLevel: true } },
      schema: {
        tags: ['Members'],
        summary: 'Remove a member (owner or admin)',
        description:
          "Only an owner removes an owner (403 otherwise). The last owner cannot be removed: 409. The removed user's sessions no longer reach the organization (404).",
        params: MemberParams,
        response: { 204: Type.Null(), ...orgErrors(409) },
      },
    },
    async (request, reply) => {
      const ctx = orgOf(request);
      await orgs.removeMember(ctx.orgId, request.params.userId, ctx.role);
      reply.code(204).send(null);
    },
  );
});
