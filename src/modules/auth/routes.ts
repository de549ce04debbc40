import { Type, errors } from '../../platform/http/schemas.ts';
import type { App } from '../../platform/http/types.ts';
import { forbidden } from '../../platform/errors.ts';
import { publicUser } from './service.ts';
import { LoginBody, RefreshBody, RegisterBody } from './schemas.ts';

const tags = ['Authentication'];

export function authRoutes(app: App): void {
  const { auth, guard, orgs } = app.services;
  // Routes that take a password (or send one) share a small per-address budget against guessing
  // (CONTRACT §12); refresh, logout and me have the general limit.
  const passwordRoute = { passwordLimit: true };

  app.post('/auth/register', {
    config: passwordRoute,
    schema: {
      tags, summary: 'Create an account and its organization', body: RegisterBody, security: [],
      response: { 201: Type.Object({ user: Type.Ref('User'), organization: Type.Ref('Organization'), tokens: Type.Ref('Tokens') }), ...errors(403, 409) },
    },
  }, async (request, reply) => {
    reply.code(201);
    return auth.register(request.body);
  });

  app.post('/auth/login', {
    config: passwordRoute,
    schema: {
      tags, summary: 'Log in with email and password', body: LoginBody, security: [],
      response: { 200: Type.Object({ user: Type.Ref('User'), tokens: Type.Ref('Tokens') }), ...errors() },
    },
  }, async (request) => auth.login(request.body.email, request.body.password));

  app.post('/auth/refresh', {
    schema: {
      tags, summary: 'Exchange a refresh token for new tokens (single use; reuse revokes the session)', body: RefreshBody, security: [],
      response: { 200: Type.Object({ tokens: Type.Ref('Tokens') }), ...errors() },
    },
  }, async (request) => ({ tokens: await auth.refresh(request.body.refreshToken) }));

  app.post('/auth/logout', {
    schema: { tags, summary: 'Revoke a refresh token and its session', body: RefreshBody, security: [], response: { 204: Type.Null(), ...errors() } },
  }, async (request, reply) => {
    await auth.logout(request.body.refreshToken);
    reply.code(204).send(null);
  });

  app.get('/auth/me', {
    schema: {
      tags, summary: 'The signed-in user and their memberships',
      response: {
        200: Type.Object({ user: Type.Ref('User'), memberships: Type.Array(Type.Object({ organizationId: Type.String(), role: Type.String() })) }),
        ...errors(403),
      },
    },
  }, async (request) => {
    const principal = await guard.authenticate(request);
    if (principal.kind !== 'user') throw forbidden('/auth/me needs a user session, not an API key');
    const user = await auth.getUser(principal.userId);
    if (!user) throw forbidden('This account no longer exists');
    return { user: publicUser(user), memberships: await orgs.membershipsOf(user.id) };
  });

}
