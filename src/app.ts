import Fastify, { type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import AjvCompiler from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { Ajv } from 'ajv';
import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';
import cookie from '@fastify/cookie';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './platform/clock.ts';
import type { Database } from './platform/db.ts';
import { PRETTY_TRANSPORT, prettyLogs, serializeError } from './platform/log.ts';
import { registerErrorHandling, registerNotFound } from './platform/http/error-handler.ts';
import { registerPanel } from './platform/http/panel.ts';
import { registerInputChecks } from './platform/http/input.ts';
import { registerSecurityHeaders } from './platform/http/security-headers.ts';
import { recordRoutes } from './platform/http/route-table.ts';
import { dateTimeFormat } from './platform/dates.ts';
import { ErrorBody } from './platform/http/schemas.ts';
import { transformDocument, transformRoute } from './platform/http/openapi.ts';
import type { App } from './platform/http/types.ts';
import { ORG_ACCESS, RATE_LIMIT, routesPlugin } from './platform/http/plugin.ts';
import { createServices } from './services.ts';
import { authRoutes } from './modules/auth/index.ts';
import { registerRateLimits, type Guard } from './modules/auth/index.ts';
import { OrganizationSchema, TokensSchema, UserSchema } from './modules/auth/index.ts';
import { orgListRoutes, orgRoutes } from './modules/orgs/index.ts';
import { apiKeyRoutes } from './modules/api-keys/index.ts';
import { leadRoutes } from './modules/leads/index.ts';
import { notificationRoutes } from './modules/notifications/index.ts';
import { webhookRoutes } from './modules/webhooks/index.ts';
import { orgStreamRoutes } from './modules/events/index.ts';
import { integrationRoutes, oauthCallbackRoutes } from './modules/integrations/index.ts';
import { mediaFileRoutes, mediaRoutes } from './modules/media/index.ts';
import { contentRoutes } from './modules/content/index.ts';
import { statsRoutes } from './modules/stats/index.ts';
import { workflowRoutes } from './modules/workflows/index.ts';
import { workflowHookRoutes } from './modules/workflows/index.ts';
import { agentRoutes } from './modules/agents/index.ts';
import { reportRoutes } from './modules/reports/index.ts';
import { usageRoutes } from './modules/usage/index.ts';
import { budgetRoutes } from './modules/budgets/index.ts';
import { invitationAcceptRoutes, invitationRoutes } from './modules/invitations/index.ts';
import { conversationRoutes } from './modules/conversations/index.ts';
import { campaignRoutes, unsubscribeRoutes } from './modules/campaigns/index.ts';
import { analyticsRoutes } from './modules/analytics/index.ts';
import { conversationHookRoutes } from './modules/conversations/index.ts';
import { startWorkers, type Workers } from './workers.ts';
import { registerMetrics } from './platform/metrics.ts';
import { registerHttpTracing } from './platform/tracing.ts';
import { assertNamedProject } from './platform/context.ts';
import { planRoutes, type PlansService } from './modules/plans/index.ts';
import { featuresOfRoute } from './modules/plans/index.ts';
import { expressionPool } from './platform/expressions/pool.ts';

const ajvOptions = { removeAdditional: false, useDefaults: true, allErrors: true, allowUnionTypes: true } as const;
const strictBodies = AjvCompiler();
const coercingQueries = AjvCompiler();

/**
 * JSON bodies are validated as sent (no "a" → ["a"], no "1" → 1); query strings and path params,
 * which are always text, are coerced to their schema's types.
 */
function validatorFactory(externalSchemas: unknown, options: unknown) {
  const opts = options as { customOptions?: object; onCreate?: (ajv: Ajv) => void };
  // `date-time` also means an instant the store can hold (no year 0000).
  const onCreate = (ajv: Ajv) => {
    opts?.onCreate?.(ajv);
    ajv.addFormat('date-time', dateTimeFormat);
  };
  const body = strictBodies(
    externalSchemas as never,
    { ...opts, onCreate, customOptions: { ...opts?.customOptions, ...ajvOptions, coerceTypes: false } } as never,
  );
  const other = coercingQueries(
    externalSchemas as never,
    { ...opts, onCreate, customOptions: { ...opts?.customOptions, ...ajvOptions, coerceTypes: 'array' } } as never,
  );
  return (route: { httpPart?: string }) => (route.httpPart === 'body' ? body(route as never) : other(route as never));
}

const responseSerializers = SerializerSelector();

/**
 * Each route's response serializer (fast-json-stringify) is built when the route first answers with
 * that status, not when the server starts: building all of them took 2.8 s of every start (a fifth
 * of an embedded one), for routes most processes never answer on. A test builds every one of them
 * (test/conventions.test.ts), so a schema it cannot serialize still fails before it ships.
 */
function serializerFactory(externalSchemas: unknown, options: unknown) {
  const compile = responseSerializers(externalSchemas as never, options as never);
  return (route: object) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => (serialize ??= compile(route as never))(data);
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    workers: Workers | null;
    /** Starts the background workers if they are not running (buildApp with `workers: 'deferred'`). */
    startWorkers(): Workers;
  }
}

export interface BuildOptions {
  config: Config;
  database: Database;
  clock?: Clock;
  logger?: FastifyServerOptions['logger'];
  /**
   * Start the background workers (dispatcher, webhook sender, run driver, …). Default true.
   * `'deferred'`: not yet; `app.startWorkers()` starts them (main.ts does once the server listens,
   * so that stored work resumed at start cannot keep the server from answering).
   */
  workers?: boolean | 'deferred';
  /** The built web panel served at `/` (default panel/dist; tests pass their own). */
  panelDir?: string;
}

/**
 * Paths without their query strings (`access_token`) and without the secrets some paths carry:
 * the workflow trigger token (/hooks/:workflowId/:token) and a media file's signature.
 */
export function maskUrl(url: string): string {
  const q = url.indexOf('?');
  const path = (q === -1 ? url : url.slice(0, q))
    .replace(/^(\/api\/v1\/hooks\/[^/]+\/)[^/]+/, '$1[masked]')
    .replace(/^(\/api\/v1\/media\/[^/]+\/)[^/]+$/, '$1[masked]');
  return q === -1 ? path : `${path}?[masked]`;
}

export function loggerOptions(level: string, pretty = false): FastifyServerOptions['logger'] {
  return {
    level,
    ...(pretty ? { transport: PRETTY_TRANSPORT } : {}),
    redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'], censor: '[redacted]' },
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: maskUrl(req.url), ip: req.ip }),
      // Failed queries are logged by statement, never with their parameters.
      err: serializeError,
    },
  };
}

/**
 * The organization routes' guard: who is calling, their access to the organization and the route's
 * `config.access`, and the plan's features. Named: every organization routes plugin depends on it, so
 * one registered outside its scope fails at start instead of answering without the guard.
 */
const orgAccess = routesPlugin<{ guard: Guard; plans: PlansService }>(ORG_ACCESS, [RATE_LIMIT], (org, { guard, plans }) => {
  org.addHook('onRequest', async (request) => {
    const principal = await guard.authenticate(request);
    const orgId = (request.params as { orgId: string }).orgId;
    request.org = await guard.authorizeOrg(principal, orgId, request.routeOptions.config.access ?? {});
    // A route of a feature the organization's plan lacks: 403 PLAN_FEATURE (nothing to do without PLANS).
    if (plans.enabled) await plans.assertFeature(orgId, featuresOfRoute(request.routeOptions.url ?? ''));
  });
  // After validation: a project-bound key naming another project is refused on every route.
  org.addHook('preHandler', async (request) => assertNamedProject(request));
});

export async function buildApp(options: BuildOptions): Promise<App> {
  const { config, database } = options;
  const clock = options.clock ?? systemClock;
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel, prettyLogs(config.logFormat)),
    bodyLimit: config.bodyLimitBytes,
    // Forwarded headers only from the configured proxies; otherwise anyone could pick their address.
    trustProxy: config.trustProxy,
    // A path parameter may be longer than find-my-way's 100 characters (an unsubscribe token carries
    // its address); each route's schema still bounds its own parameters.
    routerOptions: { maxParamLength: 1024 },
    // A whole request (headers and body) must arrive in time, or 408 and the connection closes.
    // The clock stops once the request is received, so long responses (SSE streams) are not cut.
    // Node takes it from the server's creation options (setting it later has no effect), and checks
    // every connectionsCheckingInterval: often enough for the limit to mean what it says.
    requestTimeout: config.requestTimeoutMs,
    http: {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(config.requestTimeoutMs / 4))),
    },
    schemaController: { compilersFactory: { buildValidator: validatorFactory as never, buildSerializer: serializerFactory as never } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  const services = createServices({ config, database, db: database.db, clock, log: app.log });
  app.decorate('services', services);
  // Traces and metrics first, so that their hooks see every request.
  registerHttpTracing(app);
  registerMetrics(
    app,
    config.metricsPort === undefined
      ? null
      : {
          port: config.metricsPort,
          host: config.host,
          token: config.metricsToken,
          database,
          clock,
        },
  );
  registerErrorHandling(app);
  registerSecurityHeaders(app);
  registerInputChecks(app);
  recordRoutes(app);
  // Bodies are JSON (plus what a route adds itself, such as CSV): a text/plain body, Fastify's other
  // default, would reach the schema as a string and fail as "must be an object" instead of a 415.
  app.removeContentTypeParser('text/plain');
  await services.bus.start();
  // The expression workers load (and warm up) beside the rest of the start; process-wide, they outlive
  // this app (closed by main.ts at shutdown; idle, they keep no process alive).
  expressionPool().start();
  app.decorate('workers', null);
  app.decorate('startWorkers', () => {
    app.workers ??= startWorkers(services);
    return app.workers;
  });
  if (options.workers !== false && options.workers !== 'deferred') app.startWorkers();
  // Streams never end on their own: close them so shutdown can finish the other requests.
  app.addHook('preClose', async () => services.streams.closeAll());
  app.addHook('onClose', async () => {
    await app.workers?.stop();
    await services.mailer.close();
    await services.conversations.closeChannels();
    await services.bus.close();
  });
  for (const schema of [ErrorBody, UserSchema, TokensSchema, OrganizationSchema]) app.addSchema(schema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Automation Service API',
        version: '1.0.0',
        description:
          'Marketing and sales automation: leads, workflows, agents, content, usage, streams and signed webhooks. Every resource belongs to an organization: `/orgs/:orgId/...`.',
      },
      // x-internal: this document is for the service's users (OWASP API9 inventory).
      servers: [
        {
          url: config.publicUrl,
          description: `${config.production ? 'production' : `local ${config.nodeEnv}`} server (PUBLIC_URL)`,
          'x-internal': false,
        } as never,
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description:
              'Access token from /auth/login (or /auth/register, /auth/refresh), valid ACCESS_TOKEN_TTL_S (15 minutes); renew it with the refresh token. A JWS following RFC8725: HS256 only, the algorithm pinned when verifying, `exp` and `sub` required.',
          },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'Server-to-server key with scopes' },
        },
      },
      security: [{ bearerAuth: [] }, { apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    // Operation ids, access, tags, success descriptions, rate-limit headers, examples: docs/openapi.md.
    transform: transformRoute as never,
    transformObject: transformDocument as never,
  });

  await registerRateLimits(app, { config, guard: services.guard, rateLimits: services.rateLimits });
  // Cookies are read only by the auth routes (the refresh cookie of CONTRACT §11) and the OAuth
  // callback (the flow cookie that binds a connection to the browser that started it).
  await app.register(cookie);

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

  // Each module's routes are a plugin that receives what they use as options: their own services,
  // the platform pieces and, typed by the module, the ports of other modules (src/platform/http/plugin.ts).
  await app.register(
    async (api: App) => {
      await api.register(authRoutes, { auth: services.auth, guard: services.guard, orgs: services.orgs, config });
      await api.register(invitationAcceptRoutes, { invitations: services.invitations, guard: services.guard, config });
      await api.register(orgListRoutes, { guard: services.guard, orgs: services.orgs, db: database.db });
      await api.register(mediaFileRoutes, { media: services.media });
      await api.register(workflowHookRoutes, { workflows: services.workflows });
      await api.register(conversationHookRoutes, { conversations: services.conversations, orgStream: services.orgStream, config, db: services.db, clock });
      await api.register(unsubscribeRoutes, { campaigns: services.campaigns });
      await api.register(oauthCallbackRoutes, { integrations: services.integrations, config });
      await api.register(
        async (org: App) => {
          await org.register(orgAccess, { guard: services.guard, plans: services.plans });
          await org.register(orgRoutes, { orgs: services.orgs });
          await org.register(apiKeyRoutes, { apiKeys: services.apiKeys, orgs: services.orgs });
          await org.register(leadRoutes, { leads: services.leads });
          await org.register(notificationRoutes, { notifications: services.notifications, clock });
          await org.register(webhookRoutes, { webhooks: services.webhooks, bus: services.bus });
          await org.register(orgStreamRoutes, { orgStream: services.orgStream, config, streams: services.streams });
          await org.register(integrationRoutes, { integrations: services.integrations, config });
          await org.register(contentRoutes, { content: services.content, agents: services.agents, orgs: services.orgs });
          await org.register(mediaRoutes, { media: services.media, orgs: services.orgs });
          await org.register(statsRoutes, { stats: services.stats });
          await org.register(workflowRoutes, {
            workflows: services.workflows,
            workflowRuns: services.workflowRuns,
            approvals: services.approvals,
            db: services.db,
            bus: services.bus,
            config,
            streams: services.streams,
          });
          await org.register(agentRoutes, { agents: services.agents, bus: services.bus, config, streams: services.streams });
          await org.register(reportRoutes, { reports: services.reports });
          await org.register(usageRoutes, { usage: services.usage, budgets: services.budgets, clock });
          await org.register(budgetRoutes, { budgets: services.budgets });
          await org.register(invitationRoutes, { invitations: services.invitations });
          await org.register(conversationRoutes, { conversations: services.conversations });
          await org.register(campaignRoutes, { campaigns: services.campaigns });
          await org.register(analyticsRoutes, { analytics: services.analytics });
          await org.register(planRoutes, { plans: services.plans });
        },
        { prefix: '/orgs/:orgId' },
      );
      api.get('/openapi.json', { config: health, schema: { hide: true } }, async () => app.swagger());
    },
    { prefix: '/api/v1' },
  );

  // The reference is for our users: no vendor toolbar ("Deploy Fastify"), no "Ask AI" agent or MCP
  // offer, no telemetry, no web fonts; its script is served from here (/docs/js/scalar.js), so the
  // page makes no request outside this server.
  await app.register(scalar, {
    routePrefix: '/docs',
    logLevel: 'warn',
    configuration: {
      url: '/api/v1/openapi.json',
      title: 'Automation Service API',
      pageTitle: 'Automation Service API reference',
      servers: [{ url: config.publicUrl, description: 'This server (PUBLIC_URL)' }],
      baseServerURL: config.publicUrl,
      _integration: null,
      showDeveloperTools: 'never',
      agent: { disabled: true },
      mcp: { disabled: true },
      telemetry: false,
      withDefaultFonts: false,
      documentDownloadType: 'json',
    },
  });
  const panel = await registerPanel(app, options.panelDir);
  registerNotFound(app, panel.fallback);
  return app;
}
