import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { unauthorized } from '../../platform/errors.ts';
import type { Tokens } from './service.ts';

/**
 * CONTRACT §11: the web panel keeps no long-lived credential that page scripts can read. When a
 * sign-in asks for it (`"cookie": true`), the refresh token travels only in this cookie: HttpOnly,
 * SameSite=Strict, sent only to the auth routes, Secure when the service is served over https;
 * the body then carries the access token alone.
 */
export const REFRESH_COOKIE = 'refresh_token';
export const REFRESH_COOKIE_PATH = '/api/v1/auth';

/** Cookies are Secure when the service is served over https (PUBLIC_URL); over plain http a browser would drop them. */
export function secureCookies(config: Config): boolean {
  return config.publicUrl.startsWith('https:');
}

function cookieOptions(config: Config) {
  return {
    httpOnly: true,
    secure: secureCookies(config),
    sameSite: 'strict' as const,
    path: REFRESH_COOKIE_PATH,
  };
}

/** The tokens for the response body; in cookie mode the refresh token is set as the cookie instead. */
export function deliverTokens(
  reply: FastifyReply,
  config: Config,
  tokens: Tokens,
  cookie: boolean,
): { accessToken: string; refreshToken?: string; expiresIn: number } {
  if (!cookie) return tokens;
  reply.setCookie(REFRESH_COOKIE, tokens.refreshToken, { ...cookieOptions(config), maxAge: config.refreshTokenTtlS });
  return { accessToken: tokens.accessToken, expiresIn: tokens.expiresIn };
}

export function clearRefreshCookie(reply: FastifyReply, config: Config): void {
  reply.clearCookie(REFRESH_COOKIE, cookieOptions(config));
}

/** The refresh token of a request: the body's field, else the cookie; 401 when there is neither. */
export function presentedRefreshToken(request: FastifyRequest, fromBody: string | undefined): { token: string; fromCookie: boolean } {
  if (fromBody) return { token: fromBody, fromCookie: false };
  const cookie = request.cookies?.[REFRESH_COOKIE];
  // A refresh token is 43 characters; anything far longer is not one, and is not looked up.
  if (cookie && cookie.length <= 512) return { token: cookie, fromCookie: true };
  throw unauthorized(`No refresh token: send "refreshToken" in the body, or the ${REFRESH_COOKIE} cookie set by a sign-in with "cookie": true`);
}

export function hasRefreshCookie(request: FastifyRequest): boolean {
  return Boolean(request.cookies?.[REFRESH_COOKIE]);
}
