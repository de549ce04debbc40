import { Type, errors } from '../../platform/http/schemas.ts';
import { COOKIE, RATE_LIMIT, routesPlugin } from '../../platform/http/plugin.ts';
import { forbidden } from '../../platform/errors.ts';
import { publicUser } from './service.ts';
import { ChangePasswordBody, LoginBody, LogoutBody, PasswordResetBody, PasswordResetConfirmBody, RefreshBody, RefreshCookie, RegisterBody } from './schemas.ts';
import { clearRefreshCookie, deliverTokens, hasRefreshCookie, presentedRefreshToken } from './session-cookie.ts';
import type { Config } from '../../config.ts';
import type { Guard } from './guard.ts';
import type { AuthService } from './service.ts';

const tags = ['Authentication'];
const COOKIE_NOTE =
  'With `"cookie": true` the refresh token is set as the HttpOnly `refresh_token` cookie (SameSite=Strict, path `/api/v1/auth`, Secure over https) and `tokens.refreshToken` is left out of the body.';
const SET_COOKIE = { 'Set-Cookie': { type: 'string', description: 'the `refresh_token` cookie, when the request asked for it' } };

/** The organizations a user belongs to (the orgs module), for /auth/me. */
export interface AuthMembershipsPort {
  membershipsOf(userId: string): Promise<{ organizationId: string; role: string }[]>;
}

export interface AuthRoutesOptions {
  auth: AuthService;
  guard: Guard;
  orgs: AuthMembershipsPort;
  config: Config;
}

export const authRoutes = routesPlugin<AuthRoutesOptions>('auth-routes', [RATE_LIMIT, COOKIE], (app, { auth, guard, orgs, config }) => {
  // Routes that take a password (or set one) share a small per-address budget against guessing
  // (CONTRACT §12); refresh, logout and me have the general limit.
  const passwordRoute = { passwordLimit: true };

  app.post(
    '/auth/register',
    {
      config: passwordRoute,
      schema: {
        tags,
        summary: 'Create an account and its organization',
        description: COOKIE_NOTE,
        body: RegisterBody,
        security: [],
        response: {
          201: Type.Object({ user: Type.Ref('User'), organization: Type.Ref('Organization'), tokens: Type.Ref('Tokens') }, { headers: SET_COOKIE }),
          ...errors(403, 409),
        },
      },
    },
    async (request, reply) => {
      const { cookie, ...input } = request.body;
      const result = await auth.register(input);
      reply.code(201);
      return { ...result, tokens: deliverTokens(reply, config, result.tokens, cookie === true) };
    },
  );

  app.post(
    '/auth/login',
    {
      config: passwordRoute,
      schema: {
        tags,
        summary: 'Log in with email and password',
        description: COOKIE_NOTE,
        body: LoginBody,
        security: [],
        response: { 200: Type.Object({ user: Type.Ref('User'), tokens: Type.Ref('Tokens') }, { headers: SET_COOKIE }), ...errors() },
      },
    },
    async (request, reply) => {
      const result = await auth.login(request.body.email, request.body.password);
      return { ...result, tokens: deliverTokens(reply, config, result.tokens, request.body.cookie === true) };
    },
  );

  app.post(
    '/auth/refresh',
    {
      schema: {
        tags,
        summary: 'Exchange a refresh token for new tokens (single use; reuse revokes the session)',
        description: `The refresh token comes from the body's \`refreshToken\` or, without it, from the \`refresh_token\` cookie. ${COOKIE_NOTE} A token that came from the cookie is always answered in the cookie. Neither given: 401.`,
        body: RefreshBody,
        cookies: RefreshCookie,
        security: [],
        response: { 200: Type.Object({ tokens: Type.Ref('Tokens') }, { headers: SET_COOKIE }), ...errors() },
      },
    },
    async (request, reply) => {
      const { token, fromCookie } = presentedRefreshToken(request, request.body.refreshToken);
      try {
        const tokens = await auth.refresh(token);
        return { tokens: deliverTokens(reply, config, tokens, fromCookie || request.body.cookie === true) };
      } catch (error) {
        // A dead cookie is dropped, so the browser stops presenting it.
        if (fromCookie) clearRefreshCookie(reply, config);
        throw error;
      }
    },
  );

  app.post(
    '/auth/logout',
    {
      schema: {
        tags,
        summary: 'Revoke a refresh token and its session',
        description:
          "The refresh token comes from the body's `refreshToken` or, without it, from the `refresh_token` cookie (send `{}`); the cookie is cleared. Neither given: 401.",
        body: LogoutBody,
        cookies: RefreshCookie,
        security: [],
        response: { 204: Type.Null(), ...errors() },
      },
    },
    async (request, reply) => {
      const { token } = presentedRefreshToken(request, request.body.refreshToken);
      await auth.logout(token);
      if (hasRefreshCookie(request)) clearRefreshCookie(reply, config);
      reply.code(204).send(null);
    },
  );

  app.get(
    '/auth/me',
    {
      schema: {
        tags,
        summary: 'The signed-in user and their memberships',
        response: {
          200: Type.Object({ user: Type.Ref('User'), memberships: Type.Array(Type.Object({ organizationId: Type.String(), role: Type.String() })) }),
          ...errors(403),
        },
      },
    },
    async (request) => {
      const principal = await guard.authenticate(request);
      if (principal.kind !== 'user') throw forbidden('/auth/me needs a user session, not an API key');
      const user = await auth.getUser(principal.userId);
      if (!user) throw forbidden('This account no longer exists');
      return { user: publicUser(user), memberships: await orgs.membershipsOf(user.id) };
    },
  );

  app.post(
    '/auth/password',
    {
      config: passwordRoute,
      schema: {
        tags,
        summary: 'Change the password of the signed-in user',
        description:
          'Needs the current password (a wrong one: 400 naming `body.currentPassword`). The new one must be at least 8 characters, not all blank and not a common password (400 VALIDATION_ERROR). Every refresh token of the user is revoked: other sessions end when their access token expires, and this one signs in again.',
        body: ChangePasswordBody,
        response: { 204: Type.Null(), ...errors(403) },
      },
    },
    async (request, reply) => {
      const principal = await guard.authenticate(request);
      if (principal.kind !== 'user') throw forbidden('Changing a password needs a user session, not an API key');
      await auth.changePassword(principal.userId, request.body.currentPassword, request.body.newPassword);
      if (hasRefreshCookie(request)) clearRefreshCookie(reply, config);
      reply.code(204).send(null);
    },
  );

  app.post(
    '/auth/password-reset',
    {
      config: passwordRoute,
      schema: {
        tags,
        summary: 'Ask for a password-reset link by e-mail',
        description:
          'Always 202, whether or not the address has an account. When it has one and `SMTP_URL` is set, a link `PUBLIC_URL/reset-password?token=…` is e-mailed: single use, valid one hour, at most one e-mail a minute per account.',
        body: PasswordResetBody,
        security: [],
        response: { 202: Type.Null(), ...errors() },
      },
    },
    async (request, reply) => {
      await auth.requestPasswordReset(request.body.email);
      // No body at all: nothing in the answer may differ between a known and an unknown address.
      reply.code(202).send(undefined as never);
    },
  );

  app.post(
    '/auth/password-reset/confirm',
    {
      config: passwordRoute,
      schema: {
        tags,
        summary: 'Set a new password with the token of a reset link',
        description:
          'An unknown, expired or used token: 400 naming `body.token`. The new password follows the same rules as everywhere (400 VALIDATION_ERROR); the token is not used up by a refused password. Every refresh token of the user is revoked.',
        body: PasswordResetConfirmBody,
        security: [],
        response: { 204: Type.Null(), ...errors() },
      },
    },
    async (request, reply) => {
      await auth.confirmPasswordReset(request.body.token, request.body.newPassword);
      reply.code(204).send(null);
    },
  );
});
