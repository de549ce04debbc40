import type { FastifyContextConfig, FastifyInstance } from 'fastify';

/** One registered route: method, full path and its config (the `access` the org guard applies). */
export interface RouteRecord {
  method: string;
  url: string;
  config: FastifyContextConfig;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route as registered (HEAD twins left out), for checks that must cover them all (test/route-access.test.ts). */
    routeTable: readonly RouteRecord[];
  }
}

/** Call before any route is registered: routes are recorded as they are added. */
export function recordRoutes(app: FastifyInstance): void {
  const table: RouteRecord[] = [];
  app.decorate('routeTable', table);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') table.push({ method, url: route.url, config: (route.config ?? {}) as FastifyContextConfig });
    }
  });
}
