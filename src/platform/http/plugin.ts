import fp from 'fastify-plugin';
import type { FastifyBaseLogger, FastifyPluginAsync, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { App } from './types.ts';

/** A module's routes: a plugin that receives what they use (its own services, the ports of others) as its options. */
export type RoutesPlugin<Options extends object> = FastifyPluginAsync<Options, RawServerDefault, TypeBoxTypeProvider, FastifyBaseLogger>;

/** The plugin `app.ts` registers around the organization routes: the org guard's hook. Each of them depends on it. */
export const ORG_ACCESS = 'org-access';
/** Registered at the root by registerRateLimits: the routes' `config.rateLimit` needs its onRoute hook. */
export const RATE_LIMIT = '@fastify/rate-limit';
/** Registered at the root by app.ts: the refresh cookie, the OAuth flow cookie. */
export const COOKIE = '@fastify/cookie';

/**
 * A named routes plugin (fastify-plugin, as fastify/demo's plugins): registered without an
 * encapsulation context of its own, so its routes see the hooks, schemas and parsers of the scope
 * app.ts registers it in, as when they were added there directly. Fastify refuses to start when a
 * plugin of `dependencies` is not registered before it in that scope: organization routes outside
 * the org guard's scope, or a public route registered before the rate limits, fail at start.
 */
export function routesPlugin<Options extends object>(
  name: string,
  dependencies: string[],
  register: (app: App, options: Options) => void | Promise<void>,
): RoutesPlugin<Options> {
  const plugin: RoutesPlugin<Options> = async (app, options) => {
    await register(app, options);
  };
  return fp(plugin, { name, dependencies, fastify: '5.x' });
}
