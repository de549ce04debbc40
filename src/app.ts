import Fastify, { type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import AjvCompiler from '@fastify/ajv-compiler';
import swagger from '@fastify/swagger';
import rateLimit from '@fastify/rate-limit';
import scalar from '@scalar/fastify-api-reference';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './platform/clock.ts';
import { sha256Hex } from './platform/crypto.ts';
import type { Database } from './platform/db.ts';
import { rateLimited } from './platform/errors.ts';
import { registerErrorHandling } from './platform/http/error-handler.ts';
import { ErrorBody } from './platform/http/schemas.ts';
import type { App } from './platform/http/types.ts';
import { createServices } from './services.ts';
import { authRoutes } from './modules/auth/routes.ts';
import { OrganizationSchema, TokensSchema, UserSchema } from './modules/auth/schemas.ts';
import { orgListRoutes, orgRoutes } from './modules/orgs/routes.ts';
import { apiKeyRoutes } from './modules/api-keys/routes.ts';
import { leadRoutes } from './modules/leads/routes.ts';
import { notificationRoutes } from './modules/notifications/routes.ts';
import { webhookRoutes } from './modules/webhooks/routes.ts';
import { orgStreamRoutes } from './modules/events/routes.ts';
import { integrationRoutes } from './modules/integrations/routes.ts';
import { mediaFileRoutes, mediaRoutes } from './modules/media/routes.ts';
import { contentRoutes } from './modules/content/routes.ts';
import { statsRoutes } from './modules/stats/routes.ts';
import { workflowRoutes } from './modules/workflows/routes.ts';
import { workflowHookRoutes } from './modules/workflows/hooks.ts';
import { agentRoutes } from './modules/agents/routes.ts';
import { reportRoutes } from './modules/reports/routes.ts';
import { usageRoutes } from './modules/usage/routes.ts';
import { budgetRoutes } from './modules/budgets/routes.ts';
import { startWorkers, type Workers } from './workers.ts';

const ajvOptions = { removeAdditional: false, useDefaults: true, allErrors: true, allowUnionTypes: true } as const;
const strictBodies = AjvCompiler();
const coercingQueries = AjvCompiler();

/**
 * JSON bodies are validated as sent (no "a" → ["a"], no "1" → 1); query strings and path params,
 * which are always text, are coerced to their schema's types.
 */
function validatorFactory(externalSchemas: unknown, options: unknown) {
  const opts = options as { customOptions?: object };
  const body = strictBodies(externalSchemas as never, { ...opts, customOptions: { ...opts?.customOptions, ...ajvOptions, coerceTypes: false } } as never);
  const other = coercingQueries(externalSchemas as never, { ...opts, customOptions: { ...opts?.customOptions, ...ajvOptions, coerceTypes: 'array' } } as never);
  return (route: { httpPart?: string }) => (route.httpPart === 'body' ? body(route as never) : other(route as never));
}

declare module 'fastify' {
  interface FastifyInstance {
    workers: Workers | null;
  }
}

export interface BuildOptions {
  config: Config;
  database: Database;
  clock?: Clock;
  logger?: FastifyServerOptions['logger'];
  /** Start the background workers (dispatcher, webhook sender, …). Default true. */
  workers?: boolean;
}

/** Paths without their query strings: `access_token` and other secrets never reach the logs. */
function maskUrl(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : `${url.slice(0, q)}?[masked]`;
}

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'], censor: '[redacted]' },
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: maskUrl(req.url), ip: req.ip }),
    },
  };
}

/** The credential a request presents, hashed: rate limits count per API key or session token, else per address. */
function credentialKey(request: { headers: Record<string, unknown>; ip: string; query?: unknown }): string {
  const key = request.headers['x-api-key'];
  if (typeof key === 'string' && key) return 'k:' + sha256Hex(key).slice(0, 24);
  const auth = request.headers.authorization;
  if (typeof auth === 'string' && auth) return 't:' + sha256Hex(auth).slice(0, 24);
  const token = (request.query as Record<string, unknown> | undefined)?.access_token;
  if (typeof token === 'string' && token) return 't:' + sha256Hex('Bearer ' + token).slice(0, 24);
  return 'ip:' + request.ip;
}

export async function buildApp(options: BuildOptions): Promise<App> {
  const { config, database } = options;
  const clock = options.clock ?? systemClock;
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.production,
    schemaController: { compilersFactory: { buildValidator: validatorFactory as never } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  const services = createServices({ config, database, db: database.db, clock, log: app.log });
  app.decorate('services', services);
  registerErrorHandling(app);
  await services.bus.start();
  const workers = options.workers === false ? null : startWorkers(services);
  app.decorate('workers', workers);
  // Streams never end on their own: close them so shutdown can finish the other requests.
  app.addHook('preClose', async () => {
    for (const stream of services.streams) stream.close();
  });
  app.addHook('onClose', async () => {
    await workers?.stop();
    await services.bus.close();
  });
  for (const schema of [ErrorBody, UserSchema, TokensSchema, OrganizationSchema]) app.addSchema(schema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Automation Service API',
        version: '1.0.0',
        description: 'Marketing and sales automation: leads, workflows, agents, content, usage, streams and signed webhooks. Every resource belongs to an organization: `/orgs/:orgId/...`.',
      },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Access token from /auth/login' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'Server-to-server key with scopes' },
        },
      },
      security: [{ bearerAuth: [] }, { apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });

  await app.register(rateLimit, {
    global: true,
    max: config.rateLimit.max,
    timeWindow: config.rateLimit.windowMs,
    keyGenerator: credentialKey,
    errorResponseBuilder: (_request, context) => rateLimited(context.ttl / 1000, 'RATE_LIMIT', `Rate limit of ${context.max} requests exceeded; retry in ${Math.ceil(context.ttl / 1000)} s`),
  });

  const health = { rateLimit: false as const };
  app.get('/healthz', { config: health, schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: health, schema: { hide: true } }, async (_request, reply) => {
    try {
      await database.ping();
      return { status: 'ok' };
    } catch {
      reply.code(503);
      return { status: 'unavailable' };
    }
  });

  await app.register(async (api: App) => {
    authRoutes(api);
    orgListRoutes(api);
    mediaFileRoutes(api);
    workflowHookRoutes(api);
    await api.register(async (org: App) => {
      org.addHook('onRequest', async (request) => {
        const principal = await services.guard.authenticate(request);
        const orgId = (request.params as { orgId: string }).orgId;
        request.org = await services.guard.authorizeOrg(principal, orgId, request.routeOptions.config.access ?? {});
      });
      orgRoutes(org);
      apiKeyRoutes(org);
      leadRoutes(org);
      notificationRoutes(org);
      webhookRoutes(org);
      orgStreamRoutes(org);
      integrationRoutes(org);
      contentRoutes(org);
      await mediaRoutes(org);
      statsRoutes(org);
      workflowRoutes(org);
      agentRoutes(org);
      reportRoutes(org);
      usageRoutes(org);
      budgetRoutes(org);
    }, { prefix: '/orgs/:orgId' });
    api.get('/openapi.json', { config: health, schema: { hide: true } }, async () => app.swagger());
  }, { prefix: '/api/v1' });

  await app.register(scalar, { routePrefix: '/docs', configuration: { url: '/api/v1/openapi.json', title: 'Automation Service API' } });
  return app;
}
