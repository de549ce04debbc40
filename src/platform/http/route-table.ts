import type { FastifyContextConfig, FastifyInstance, FastifySchema } from 'fastify';

/** One registered route: method, full path, its config (the `access` the org guard applies) and schema. */
export interface RouteRecord {
  method: string;
  url: string;
  config: FastifyContextConfig;
  schema?: FastifySchema;
  /** The shared schemas (`addSchema`) the route's `$ref`s resolve against, in its plugin's scope. */
  schemas(): Record<string, unknown>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route as registered (HEAD twins left out), for checks that must cover them all (test/route-access.test.ts, test/conventions.test.ts). */
    routeTable: readonly RouteRecord[];
  }
}

/** Call before any route is registered: routes are recorded as they are added. */
export function recordRoutes(app: FastifyInstance): void {
  const table: RouteRecord[] = [];
  app.decorate('routeTable', table);
  app.addHook('onRoute', function (route) {
    const schemas = () => this.getSchemas();
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') table.push({ method, url: route.url, config: (route.config ?? {}) as FastifyContextConfig, schema: route.schema, schemas });
    }
  });
}
