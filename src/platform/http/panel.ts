import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Where `npm run build:panel` writes the web panel (panel/README: how it is built). */
export const PANEL_DIST = fileURLToPath(new URL('../../../panel/dist', import.meta.url));

/**
 * The panel's Content-Security-Policy: scripts only from this origin (no inline script, no eval),
 * API calls and streams only to this origin, no framing. Inline styles stay allowed: the UI
 * primitives position popovers with style attributes.
 */
export const PANEL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Paths that belong to the server: a miss there is a JSON 404, never the panel. */
const SERVER_PATHS = /^\/(api|docs|healthz|readyz|media)(\/|$)/;

export interface Panel {
  /** Answers a GET that no route took with the panel's page, when it is one of the panel's paths. */
  fallback(request: FastifyRequest, reply: FastifyReply): boolean;
}

/**
 * Serves the built panel at `/` (CONTRACT §11): hashed assets under /assets cached for a year,
 * index.html and the other top-level files never cached, every client-side path (a deep link such
 * as /orgs/x/leads) answered with index.html so the panel's router takes it. Without a build the
 * panel's paths answer 503 with the command that builds it (`npm start` builds it first).
 */
export async function registerPanel(app: FastifyInstance, dir = PANEL_DIST): Promise<Panel> {
  const built = existsSync(join(dir, 'index.html'));
  if (built) {
    await app.register(fastifyStatic, { root: dir, serve: false });
  }
  const topLevel = built
    ? new Set(
        readdirSync(dir, { withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => e.name),
      )
    : new Set<string>();
  const unbuilt =
    '<!doctype html><title>Panel not built</title><p>The web panel has not been built. Run <code>npm run build:panel</code> (or <code>npm start</code>, which builds it when it is missing) and reload.</p>';

  const page = (reply: FastifyReply, file: string) => {
    reply.header('content-security-policy', PANEL_CSP).header('x-content-type-options', 'nosniff').header('referrer-policy', 'same-origin');
    if (!built) return reply.code(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(unbuilt);
    return reply.header('cache-control', 'no-cache').sendFile(file, { cacheControl: false });
  };

  if (built) {
    app.get('/assets/*', { schema: { hide: true } }, (request, reply) => {
      const rest = (request.params as { '*': string })['*'];
      // Content-hashed names: a changed file has a new name, so the old one can be kept forever.
      reply.header('x-content-type-options', 'nosniff');
      return reply.sendFile(join('assets', rest), { maxAge: '365d', immutable: true });
    });
  }
  app.get('/', { schema: { hide: true } }, (_request, reply) => page(reply, 'index.html'));

  return {
    fallback(request, reply) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      const path = request.url.split('?')[0]!;
      if (SERVER_PATHS.test(path) || path.startsWith('/assets/')) return false;
      const name = path.slice(1);
      if (topLevel.has(name) && name !== 'index.html') {
        reply.header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').sendFile(name, { cacheControl: false });
        return true;
      }
      // A file-like path that is not a file is a 404, not the panel (a missing /favicon.png, say).
      if (/\.[a-z0-9]{1,8}$/i.test(name)) return false;
      void page(reply, 'index.html');
      return true;
    },
  };
}
