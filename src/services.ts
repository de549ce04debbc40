import type { Deps } from './platform/deps.ts';
import { ApiKeysService } from './modules/api-keys/service.ts';
import { Guard } from './modules/auth/guard.ts';
import { AuthService } from './modules/auth/service.ts';
import { EventsService } from './modules/events/service.ts';
import { LeadsService } from './modules/leads/service.ts';
import { OrgsService } from './modules/orgs/service.ts';

/** Every service, built once from the deps and shared by the routes, the workers and the CLI. */
export function createServices(deps: Deps) {
  const orgs = new OrgsService(deps);
  const auth = new AuthService(deps, orgs);
  const apiKeys = new ApiKeysService(deps);
  const guard = new Guard(auth, apiKeys, orgs, deps.clock);
  const events = new EventsService(deps.clock);
  const leads = new LeadsService(deps, events, orgs);
  return { ...deps, orgs, auth, apiKeys, guard, events, leads };
}

export type Services = ReturnType<typeof createServices>;

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}
