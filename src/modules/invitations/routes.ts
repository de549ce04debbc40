import { Type, Timestamp, Nullable, OrgParams, errors, orgErrors } from '../../platform/http/schemas.ts';
import { COOKIE, ORG_ACCESS, RATE_LIMIT, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import { publicUser } from '../auth/index.ts';
import { CookieFlag } from '../auth/index.ts';
import { deliverTokens } from '../auth/index.ts';
import type { InvitationsService } from './service.ts';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import type { Principal } from '../../platform/context.ts';

const Role = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member'), Type.Literal('viewer')]);
const InvitationSchema = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    role: Role,
    status: Type.Union([Type.Literal('pending'), Type.Literal('expired')], {
      description: '`expired` once `expiresAt` has passed; accepted invitations are members and leave the list',
    }),
    expiresAt: Timestamp,
    invitedBy: Nullable(Type.String({ description: "the inviting user's id" })),
    createdAt: Timestamp,
  },
  { $id: 'Invitation' },
);
const tags = ['Invitations'];
const access = { admin: true, orgLevel: true };

export interface InvitationRoutesOptions {
  invitations: InvitationsService;
}

/** Routes under /orgs/:orgId: owners and admins manage the organization's invitations (CONTRACT §2, §12). */
export const invitationRoutes = routesPlugin<InvitationRoutesOptions>('invitation-routes', [ORG_ACCESS], (app, { invitations }) => {
  app.addSchema(InvitationSchema);

  app.get(
    '/invitations',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Open invitations, newest first (never their links)',
        params: OrgParams,
        response: { 200: Type.Array(Type.Ref('Invitation')), ...orgErrors() },
      },
    },
    async (request) => invitations.list(orgOf(request).orgId),
  );

  app.post(
    '/invitations',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Invite an e-mail address with a role',
        description:
          "The answer's `url` (`PUBLIC_URL/accept-invitation?token=…`) is shown only here: single use, valid 7 days, e-mailed to the address when `SMTP_URL` is set (`emailed` says whether the relay took it). Inviting the same address again replaces its open invitation (the earlier link stops working). An address that is a member already: 409. Only an owner can invite an owner.",
        params: OrgParams,
        body: Type.Object({ email: Type.String({ format: 'email', maxLength: 254 }), role: Role }, { additionalProperties: false }),
        response: {
          201: Type.Object({
            id: Type.String(),
            email: Type.String(),
            role: Role,
            status: Type.Literal('pending'),
            expiresAt: Timestamp,
            invitedBy: Nullable(Type.String()),
            createdAt: Timestamp,
            url: Type.String({ description: 'the single-use link; shown only in this response' }),
            emailed: Type.Boolean({ description: 'whether the mail relay accepted the invitation e-mail (false without `SMTP_URL`)' }),
          }),
          ...orgErrors(409),
        },
      },
    },
    async (request, reply) => {
      const ctx = orgOf(request);
      const created = await invitations.create({
        orgId: ctx.orgId,
        invitedBy: ctx.actor.id,
        inviterRole: ctx.role,
        email: request.body.email,
        role: request.body.role,
      });
      reply.code(201);
      return created;
    },
  );

  app.delete(
    '/invitations/:id',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Revoke an open invitation; its link stops working',
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) }),
        response: { 204: Type.Null(), ...orgErrors() },
      },
    },
    async (request, reply) => {
      await invitations.revoke(orgOf(request).orgId, request.params.id);
      reply.code(204).send(null);
    },
  );
});

/** Who is calling, when the request carries a credential (the auth module's guard). */
export interface InvitationsGuardPort {
  authenticate(request: FastifyRequest): Promise<Principal>;
}

export interface InvitationAcceptRoutesOptions {
  invitations: InvitationsService;
  guard: InvitationsGuardPort;
  config: Config;
}

/** The public accept route at /api/v1/auth/invitations/accept: the token in the body is the credential. */
export const invitationAcceptRoutes = routesPlugin<InvitationAcceptRoutesOptions>(
  'invitation-accept-routes',
  [RATE_LIMIT, COOKIE],
  (app, { invitations, guard, config }) => {
    app.post(
      '/auth/invitations/accept',
      {
        // It takes a password: the per-address budget of the password routes (CONTRACT §12).
        config: { passwordLimit: true },
        schema: {
          tags,
          summary: 'Accept an invitation: join the organization, signed in',
          description:
            'A new address becomes an account with `password` (required then; the usual password rules) and `name`, even when sign-up is off. An address that has an account joins as that account, which must be proven: send its `password`, or call signed in as it (`Authorization: Bearer`); otherwise 401. An unknown, expired, used or revoked token: 400. The answer is a session, as from login; with `"cookie": true` the refresh token is set as the HttpOnly `refresh_token` cookie and left out of the body.',
          body: Type.Object(
            {
              token: Type.String({ minLength: 1, maxLength: 512, description: 'the `token` of the invitation link' }),
              password: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
              name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
              cookie: CookieFlag,
            },
            { additionalProperties: false },
          ),
          security: [],
          response: {
            200: Type.Object(
              { user: Type.Ref('User'), organization: Type.Ref('Organization'), tokens: Type.Ref('Tokens') },
              { headers: { 'Set-Cookie': { type: 'string', description: 'the `refresh_token` cookie, when the request asked for it' } } },
            ),
            ...errors(403, 409),
          },
        },
      },
      async (request, reply) => {
        // Optional: a signed-in caller proves the account without its password. A bad token is a 401.
        const principal = request.headers.authorization ? await guard.authenticate(request) : null;
        const signedInAs = principal?.kind === 'user' ? principal.userId : null;
        const { cookie, ...input } = request.body;
        const result = await invitations.accept(input, signedInAs);
        return { user: publicUser(result.user), organization: result.organization, tokens: deliverTokens(reply, config, result.tokens, cookie === true) };
      },
    );
  },
);
