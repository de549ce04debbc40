import { createHash } from 'node:crypto';
import type { App } from './types.ts';

/**
 * The Content-Security-Policy of the HTML pages the server renders itself (the unsubscribe page, the
 * OAuth callback's answer): no script at all, styles only inline, forms back to this origin, never
 * framed. A page that needs more sets its own policy (the panel, `platform/http/panel.ts`).
 */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Inline `<script>` blocks (no `src`): each is allowed by its hash. */
const INLINE_SCRIPT = /<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi;

/**
 * The API reference's policy (`/docs`): its script from this server and its one inline script (the
 * configuration) by hash, so no other script can run; styles inline (the reference injects its
 * stylesheet at run time), the OpenAPI document and "try it" requests to this origin only.
 */
function docsPolicy(html: string): string {
  const hashes = [...html.matchAll(INLINE_SCRIPT)].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`);
  return [
    "default-src 'self'",
    `script-src 'self' ${hashes.join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'none'",
  ].join('; ');
}

/**
 * Headers every answer carries: `X-Content-Type-Options: nosniff` (a JSON body is never sniffed into
 * HTML or script by a browser), and a Content-Security-Policy on every HTML page that has none of its
 * own — the reference's by the hashes of its inline scripts (computed once per page text), any other
 * the script-free PAGE_CSP.
 */
export function registerSecurityHeaders(app: App): void {
  const docs = new Map<string, string>();
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    if (reply.hasHeader('content-security-policy') || !String(reply.getHeader('content-type') ?? '').startsWith('text/html')) return payload;
    if (request.url.startsWith('/docs') && typeof payload === 'string') {
      let policy = docs.get(payload);
      if (!policy) {
        if (docs.size > 20) docs.clear();
        policy = docsPolicy(payload);
        docs.set(payload, policy);
      }
      reply.header('content-security-policy', policy);
    } else {
      reply.header('content-security-policy', PAGE_CSP);
    }
    return payload;
  });
}
