import { Type } from 'typebox';
import { outboundRequest, OutboundError } from '../../../platform/http-client.ts';
import type { ToolDef } from './types.ts';

const MAX_BYTES = 512 * 1024;
const MAX_TEXT = 20_000;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, code: string) => {
    if (code[0] === '#') {
      const n = code[1] === 'x' || code[1] === 'X' ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
      return Number.isFinite(n) && n > 0 && n < 0x110000 ? String.fromCodePoint(n) : whole;
    }
    return ENTITIES[code.toLowerCase()] ?? whole;
  });
}

/** Visible text of an HTML page: scripts, styles and tags removed, entities decoded, whitespace collapsed. */
export function htmlToText(html: string): { title: string | null; text: string } {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  const text = html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|noscript|svg|template|head)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<\/(p|div|h[1-6]|li|tr|section|article|header|footer|br)\s*>|<br\s*\/?>/gi, '\n')
    .replace(/<[^>]+>/g, ' ');
  const clean = decode(text)
    .replace(/[ \t\f\v\r]+/g, ' ')
    .replace(/\s*\n\s*/g, '\n')
    .replace(/\n{2,}/g, '\n')
    .trim();
  return { title: title ? decode(title).replace(/\s+/g, ' ').trim() : null, text: clean };
}

export const fetchWebPage: ToolDef = {
  name: 'fetch_web_page',
  description:
    'Fetch a public web page (http/https) and return its title and visible text (HTML stripped, at most 20,000 characters). Private and internal addresses are refused.',
  input: Type.Object({ url: Type.String({ minLength: 8, maxLength: 2048 }) }, { additionalProperties: false }),
  async execute(ctx, input) {
    const url = String(input.url);
    try {
      const res = await outboundRequest({
        url,
        method: 'GET',
        headers: { accept: 'text/html, text/plain;q=0.9, */*;q=0.1', 'user-agent': 'Service-Agent/1.0' },
        allowPrivate: ctx.config.agentWebAllowPrivate,
        timeoutMs: 10_000,
        readBytes: MAX_BYTES,
        signal: ctx.signal,
      });
      const type = String(res.headers['content-type'] ?? '').toLowerCase();
      if (res.status >= 400) return { url, status: res.status, error: `The page answered HTTP ${res.status}` };
      if (res.status >= 300) return { url, status: res.status, error: 'Redirects are not followed', location: res.headers.location ?? null };
      if (type && !/^text\/|application\/(xhtml\+xml|json|xml)/.test(type))
        return { url, status: res.status, error: `Not a text page (${type.split(';')[0]})` };
      const page = /html|xml/.test(type) || /^\s*</.test(res.body) ? htmlToText(res.body) : { title: null, text: res.body.trim() };
      const cut = page.text.length > MAX_TEXT;
      return { url, status: res.status, title: page.title, text: cut ? page.text.slice(0, MAX_TEXT) : page.text, truncated: cut || res.truncated };
    } catch (error) {
      if (error instanceof OutboundError) return { url, error: `${error.code}: ${error.message}` };
      throw error;
    }
  },
};
