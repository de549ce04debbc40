import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest, FastifySchema, RouteShorthandOptions } from 'fastify';
import { rateLimited, type AppError } from './errors.ts';
import type { App } from './http/types.ts';

/**
 * Public inbound routes: the URLs other systems call without our credentials (the workflow webhook
 * trigger today; provider webhooks for channels, OAuth callbacks next). Each one declares how a
 * request proves where it comes from, and this file makes every such route behave the same way:
 *
 * - the raw bytes of the body are kept (`request.rawBody`), because signatures are computed over
 *   the bytes sent and fail on a re-serialized body;
 * - the verifier runs before the handler and fails closed: a sender that does not verify (null), or
 *   a verifier that throws, never reaches the handler, and the refusal says nothing more;
 * - limits (body size, requests per window) are declared with the route, not found elsewhere.
 *
 * Nothing here knows a module: the module passes its verifier and handler in.
 */

declare module 'fastify' {
  interface FastifyRequest {
    /** The body as received, on inbound routes only (JSON parsed from these same bytes). */
    rawBody?: Buffer;
  }
}

export interface InboundRequest<Params> {
  params: Params;
  /** The query string, for senders that put their credential there (`?token=…`). */
  query: Record<string, unknown>;
  headers: FastifyRequest['headers'];
  /** Empty when the request had no body. */
  rawBody: Buffer;
}

export interface InboundRoute<Params, Body, Sender> {
  /** Under the API prefix, e.g. `/hooks/:workflowId/:token`. */
  path: string;
  /** Params, body and response schemas, tags and summary, as for any route (they make the OpenAPI entry). */
  schema: FastifySchema;
  /** Who sent this request: the verified sender (a workflow, a channel account), or null to refuse. */
  verify(request: InboundRequest<Params>): Promise<Sender | null>;
  /** What a refusal answers; the same for every reason, so it reveals nothing (e.g. a 404). */
  refusal: () => AppError;
  handle(sender: Sender, request: FastifyRequest & { params: Params; body: Body }, reply: FastifyReply): Promise<unknown>;
  /** Wraps the whole handling, verification included (e.g. a bound on requests in flight that refuses before any work). */
  gate?: <T>(handle: () => Promise<T>) => Promise<T>;
  /**
   * Content types taken besides JSON, as bytes only (e.g. `message/rfc822`): the handler reads them
   * from `request.rawBody` and `request.body` stays undefined, so nothing parses or walks them first.
   */
  rawContentTypes?: string[];
  limits?: {
    /** Largest body accepted, in bytes; the server's BODY_LIMIT_BYTES when not given. */
    bodyBytes?: number;
    /**
     * Requests per client address in `windowMs`, instead of the general limit (providers send from
     * few addresses, in bursts). The general limit when not given.
     */
    rate?: { max: number; windowMs: number };
  };
}

/** Registers a POST inbound route in its own scope, so the raw-body parser applies to it alone. */
export function inboundRoute<Params, Body, Sender>(app: App, route: InboundRoute<Params, Body, Sender>): void {
  app.register(async (scope: App) => {
    const json = scope.getDefaultJsonParser('error', 'error');
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      request.rawBody = body as Buffer;
      // Fastify's own JSON parser (prototype-poisoning checks, its error codes), on the same bytes.
      json(request, (body as Buffer).toString('utf8'), done);
    });
    for (const type of route.rawContentTypes ?? []) {
      scope.addContentTypeParser(type, { parseAs: 'buffer' }, (request, body, done) => {
        request.rawBody = body as Buffer;
        done(null, undefined);
      });
    }
    const options: RouteShorthandOptions = { schema: route.schema };
    if (route.limits?.bodyBytes !== undefined) options.bodyLimit = route.limits.bodyBytes;
    const rate = route.limits?.rate;
    if (rate) {
      // @fastify/rate-limit is registered at the root (registerRateLimits); this route counts apart.
      const limit = scope.createRateLimit({
        max: rate.max,
        timeWindow: rate.windowMs,
        keyGenerator: (request) => `inbound:${route.path}:${normalizeIP(request.ip)}`,
      });
      options.config = { rateLimit: false };
      options.onRequest = async (request, reply) => {
        const state = await limit(request);
        if (state.isAllowed || !state.isExceeded) return;
        reply.header('ratelimit-limit', state.max);
        reply.header('ratelimit-remaining', state.remaining);
        reply.header('ratelimit-reset', state.ttlInSeconds);
        throw rateLimited(state.ttlInSeconds, 'RATE_LIMIT', `Rate limit of ${state.max} requests exceeded; retry in ${Math.max(1, state.ttlInSeconds)} s`);
      };
    }
    scope.post(route.path, options, async (request, reply) => {
      const req = request as FastifyRequest & { params: Params; body: Body };
      const handle = async () => {
        const sender = await route.verify({
          params: req.params,
          query: (req.query ?? {}) as Record<string, unknown>,
          headers: req.headers,
          rawBody: req.rawBody ?? Buffer.alloc(0),
        });
        if (sender === null) throw route.refusal();
        return route.handle(sender, req, reply);
      };
      return route.gate ? route.gate(handle) : handle();
    });
  });
}
