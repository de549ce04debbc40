import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, request, type Dispatcher } from 'undici';
import { AppError } from './errors.ts';

/**
 * Outbound HTTP for everything the service sends to URLs its users chose (webhooks, HTTP steps,
 * connectors): private, loopback and link-local targets refused unless allowed, the address checked
 * at connect time (so DNS rebinding cannot slip past a check made earlier), redirects never
 * followed, a hard time-out, and response bodies read only as far as asked.
 */

export class OutboundError extends Error {
  readonly code: 'BLOCKED' | 'TIMEOUT' | 'CONNECT' | 'INVALID_URL';
  constructor(code: OutboundError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return parsed.range() === 'unicast';
}

function guardedLookup(allowPrivate: boolean): LookupFunction {
  return ((hostname: string, options: object, callback: (err: Error | null, address: string | { address: string; family: number }[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as { address: string; family: number }[];
      if (!allowPrivate) {
        const blocked = list.find((a) => !isPublicAddress(a.address));
        if (blocked) return callback(new OutboundError('BLOCKED', `${hostname} resolves to a private or reserved address (${blocked.address})`), '', 0);
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(new OutboundError('CONNECT', `${hostname} has no address`), '', 0);
      callback(null, first.address, first.family);
    });
  }) as unknown as LookupFunction;
}

const agents = new Map<boolean, Agent>();
function agentFor(allowPrivate: boolean): Agent {
  let agent = agents.get(allowPrivate);
  if (!agent) {
    agent = new Agent({ connect: { lookup: guardedLookup(allowPrivate) }, keepAliveTimeout: 10_000, connections: 64 });
    agents.set(allowPrivate, agent);
  }
  return agent;
}

/** Checks a URL's form and, for literal addresses and resolvable names, where it points. */
export async function checkOutboundUrl(raw: string, options: { allowPrivate: boolean; requireHttps?: boolean }): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError('INVALID_URL', 'not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OutboundError('INVALID_URL', 'only http and https URLs are allowed');
  if (url.username || url.password) throw new OutboundError('INVALID_URL', 'credentials in the URL are not allowed');
  if (options.allowPrivate) return url;
  if ((options.requireHttps ?? true) && url.protocol !== 'https:') throw new OutboundError('BLOCKED', 'only https URLs are allowed');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    if (!isPublicAddress(host)) throw new OutboundError('BLOCKED', `${host} is a private or reserved address`);
    return url;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) throw new OutboundError('BLOCKED', `${host} is a loopback name`);
  const addresses = await new Promise<{ address: string }[]>((resolve) => {
    dnsLookup(host, { all: true }, (err, list) => resolve(err ? [] : (list as { address: string }[])));
  });
  const blocked = addresses.find((a) => !isPublicAddress(a.address));
  if (blocked) throw new OutboundError('BLOCKED', `${host} resolves to a private or reserved address (${blocked.address})`);
  return url;
}

/** The same check as an API error: 400 naming the problem. */
export async function assertOutboundUrl(raw: string, field: string, options: { allowPrivate: boolean; requireHttps?: boolean }): Promise<URL> {
  try {
    return await checkOutboundUrl(raw, options);
  } catch (error) {
    if (error instanceof OutboundError) throw new AppError(400, 'VALIDATION_ERROR', `${field}: ${error.message}`, [{ field, message: error.message }]);
    throw error;
  }
}

export interface OutboundRequest {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  allowPrivate: boolean;
  timeoutMs?: number;
  /** How much of the response body to read: bytes for a preview, or the limit for a full read. */
  readBytes?: number;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** True when the body was longer than readBytes and was cut. */
  truncated: boolean;
  durationMs: number;
}

async function readLimited(body: Dispatcher.ResponseData['body'], limit: number): Promise<{ text: string; truncated: boolean }> {
  if (limit <= 0) {
    body.destroy();
    return { text: '', truncated: true };
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    if (size + buf.length > limit) {
      chunks.push(buf.subarray(0, limit - size));
      truncated = true;
      break;
    }
    chunks.push(buf);
    size += buf.length;
  }
  if (truncated) body.destroy();
  return { text: Buffer.concat(chunks).toString('utf8'), truncated };
}

export async function outboundRequest(req: OutboundRequest): Promise<OutboundResponse> {
  const url = await checkOutboundUrl(req.url, { allowPrivate: req.allowPrivate });
  const timeoutMs = req.timeoutMs ?? 10_000;
  const started = performance.now();
  // A timer we clear, not AbortSignal.timeout: an abort firing after the exchange ended would
  // surface as an unhandled error on the finished body.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  const signal = req.signal ? AbortSignal.any([timeout.signal, req.signal]) : timeout.signal;
  try {
    const res = await request(url, {
      method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: req.headers,
      body: req.body,
      dispatcher: agentFor(req.allowPrivate),
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    res.body.on('error', () => {});
    const { text, truncated } = await readLimited(res.body, req.readBytes ?? 0);
    return { status: res.statusCode, headers: res.headers, body: text, truncated, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    if (error instanceof OutboundError) throw error;
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof OutboundError) throw cause;
    if (timeout.signal.aborted) throw new OutboundError('TIMEOUT', `no answer within ${timeoutMs} ms`);
    if (req.signal?.aborted) throw error;
    throw new OutboundError('CONNECT', (error as Error).message || 'connection failed');
  } finally {
    clearTimeout(timer);
  }
}
