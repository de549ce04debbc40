import { OutboundError, outboundRequest, type OutboundResponse } from '../../../platform/http-client.ts';
import type { ConnectorContext, PublishOutcome } from './types.ts';

type Failure = Extract<PublishOutcome, { ok: false }>;

/** Seconds from a Retry-After header: delta-seconds or an HTTP date. */
export function retryAfterSeconds(value: unknown, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  const n = Number(raw.trim());
  if (Number.isFinite(n) && n >= 0) return n;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

function preview(body: string): string {
  const text = body.replace(/\s+/g, ' ').trim();
  return text.length > 300 ? text.slice(0, 300) + '…' : text;
}

/** Maps a platform answer that is not a success to a publishing failure: what went wrong and whether trying again can help. */
export function failureOf(platform: string, res: OutboundResponse): Failure {
  const detail = preview(res.body);
  const suffix = detail ? `: ${detail}` : '';
  if (res.status === 401 || res.status === 403) {
    return { ok: false, code: 'INTEGRATION_AUTH', message: `${platform} refused the credentials (HTTP ${res.status})${suffix}`, retryable: false, auth: true };
  }
  if (res.status === 429) {
    return {
      ok: false,
      code: 'RATE_LIMIT',
      message: `${platform} rate limit (HTTP 429)${suffix}`,
      retryable: true,
      retryAfterS: retryAfterSeconds(res.headers['retry-after']),
    };
  }
  if (res.status >= 500) return { ok: false, code: 'UPSTREAM', message: `${platform} failed (HTTP ${res.status})${suffix}`, retryable: true };
  return { ok: false, code: 'UPSTREAM_REJECTED', message: `${platform} rejected the post (HTTP ${res.status})${suffix}`, retryable: false };
}

/** One outbound call through the SSRF-safe client; transport failures become publishing failures. */
export async function send(
  ctx: ConnectorContext,
  platform: string,
  req: { method: string; url: string; headers: Record<string, string>; body?: string | Buffer },
): Promise<{ ok: true; res: OutboundResponse } | Failure> {
  try {
    const res = await outboundRequest({ ...req, allowPrivate: ctx.allowPrivate, timeoutMs: ctx.timeoutMs, readBytes: 64 * 1024, signal: ctx.signal });
    return { ok: true, res };
  } catch (error) {
    if (error instanceof OutboundError) {
      if (error.code === 'TIMEOUT') return { ok: false, code: 'TIMEOUT', message: `${platform} did not answer in time (${error.message})`, retryable: true };
      if (error.code === 'CONNECT') return { ok: false, code: 'UPSTREAM_UNREACHABLE', message: `${platform} unreachable: ${error.message}`, retryable: true };
      return { ok: false, code: 'BLOCKED', message: `${platform} address refused: ${error.message}`, retryable: false };
    }
    throw error;
  }
}

export function header(res: OutboundResponse, name: string): string | undefined {
  const value = res.headers[name.toLowerCase()];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first.trim() !== '' ? first.trim() : undefined;
}

export function json(res: OutboundResponse): unknown {
  try {
    return JSON.parse(res.body);
  } catch {
    return undefined;
  }
}

/** A multipart/form-data body built by hand: outboundRequest sends bytes. */
export function formData(
  fields: Record<string, string>,
  file: { name: string; filename: string; contentType: string; bytes: Buffer },
): { body: Buffer; contentType: string } {
  const boundary = '----svc' + Math.random().toString(16).slice(2) + Date.now().toString(16);
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: ${file.contentType}\r\n\r\n`,
    ),
  );
  parts.push(file.bytes, Buffer.from(`\r\n--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}
