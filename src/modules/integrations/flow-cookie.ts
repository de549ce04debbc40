import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { randomToken, sha256Hex } from '../../platform/crypto.ts';
import { secureCookies } from '../auth/index.ts';

/**
 * Binds an OAuth authorization to the browser that started it (RFC 9700 §4.7, login/connection
 * CSRF). The `state` alone proves nothing about who brings it back: a state from organization B's
 * start, completed by a victim's browser, connected the victim's account to B. So the start answer
 * sets a random secret in this cookie, its hash is stored with the state, and the callback is
 * refused without the matching cookie.
 *
 * - `SameSite=Lax`: the provider sends the browser back as a top-level cross-site GET navigation,
 *   which carries Lax cookies but not Strict ones (the refresh cookie's Strict would never arrive).
 * - Path `/api/v1/oauth`: only the callback receives it; HttpOnly; Secure when PUBLIC_URL is https.
 * - One cookie per flow, named for its state: two connections started in two tabs keep one each
 *   (a single name would let the second start overwrite the first's, and refuse the first).
 * - It lives as long as the state (10 minutes) and the callback clears it, whatever the outcome.
 */
export const FLOW_COOKIE_PATH = '/api/v1/oauth';

/** The cookie's name for a state: a prefix of the state's hash, so the callback knows which to read. */
export function flowCookieName(state: string): string {
  return `oauth_flow_${sha256Hex(state).slice(0, 16)}`;
}

function options(config: Config) {
  return { httpOnly: true, secure: secureCookies(config), sameSite: 'lax' as const, path: FLOW_COOKIE_PATH };
}

/** A fresh secret for a flow: the cookie's value, and the hash stored with the state. */
export function newFlowSecret(): { secret: string; hash: string } {
  const secret = randomToken(32);
  return { secret, hash: sha256Hex(secret) };
}

export function setFlowCookie(reply: FastifyReply, config: Config, state: string, secret: string, ttlMs: number): void {
  reply.setCookie(flowCookieName(state), secret, { ...options(config), maxAge: Math.floor(ttlMs / 1000) });
}

/** The flow's secret as the browser brought it back to the callback, if it did. */
export function presentedFlowSecret(request: FastifyRequest, state: string): string | undefined {
  const value = request.cookies?.[flowCookieName(state)];
  // A secret is 43 characters; anything far longer is not one.
  return value && value.length <= 256 ? value : undefined;
}

export function clearFlowCookie(reply: FastifyReply, config: Config, state: string): void {
  reply.clearCookie(flowCookieName(state), options(config));
}
