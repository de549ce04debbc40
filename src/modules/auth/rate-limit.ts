import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { rateLimited } from '../../platform/errors.ts';
import { rateLimitStore, type SharedRateLimitCounters } from '../../platform/rate-limit-store.ts';
import type { App } from '../../platform/http/types.ts';
import type { Principal } from '../../platform/context.ts';
import type { Config } from '../../config.ts';
import type { Guard } from './guard.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A password route (login, register, password reset, password change, invitation acceptance): limited per client address with AUTH_RATE_LIMIT_MAX. */
    passwordLimit?: boolean;
  }
}

/** The one identity a credential stands for: an API key, or a user's sessions together. */
export function principalKey(principal: Principal): string {
  return principal.kind === 'apiKey' ? `k:${principal.keyId}` : `u:${principal.userId}`;
}

const addressKey = (request: FastifyRequest) => `ip:${normalizeIP(request.ip)}`;

/**
 * CONTRACT §12. A valid credential is counted per credential; anything else (none, an unknown key,
 * a forged or expired token) per client address, so rotating invented keys buys nothing. The
 * check runs as a root onRequest hook, before the org guard can answer 401: failed attempts count.
 * Password routes have their own, smaller, per-address budget shared by all of them.
 *
 * Every limiter made from the plugin (these two, inbound routes', the widget's) counts in the
 * database (platform/rate-limit-store.ts), so a limit holds for all instances together; each one's
 * keys carry a prefix of their own.
 */
export interface RateLimitOptions {
  config: Config;
  guard: Guard;
  /** The counters every instance shares (platform/rate-limit-store.ts). */
  rateLimits: SharedRateLimitCounters;
}

export async function registerRateLimits(app: App, { config, guard, rateLimits }: RateLimitOptions): Promise<void> {
  await app.register(rateLimit, { global: false, timeWindow: config.rateLimit.windowMs, store: rateLimitStore(rateLimits) });
  const general = app.createRateLimit({
    max: config.rateLimit.max,
    keyGenerator: async (request) => {
      const principal = await guard.identify(request).catch(() => null);
      return principal ? principalKey(principal) : addressKey(request);
    },
  });
  const password = app.createRateLimit({ max: config.rateLimit.authMax, keyGenerator: (request) => `auth:${addressKey(request)}` });

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const routeConfig = request.routeOptions.config;
    if (routeConfig?.rateLimit === false) return;
    const limit = await (routeConfig?.passwordLimit ? password : general)(request);
    if (limit.isAllowed) return;
    reply.header('ratelimit-limit', limit.max);
    reply.header('ratelimit-remaining', limit.remaining);
    reply.header('ratelimit-reset', limit.ttlInSeconds);
    if (limit.isExceeded) {
      throw rateLimited(limit.ttlInSeconds, 'RATE_LIMIT', `Rate limit of ${limit.max} requests exceeded; retry in ${Math.max(1, limit.ttlInSeconds)} s`);
    }
  });
}
