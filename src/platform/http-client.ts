import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, request, type Dispatcher } from 'undici';
import { AppError } from './errors.ts';
import { SpanKind } from '@opentelemetry/api';
import { withSpan } from './tracing.ts';

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

/**
 * IPv6 forms that carry an IPv4 address inside them. Stacks and gateways may route them to that IPv4
 * address (`::7f00:1` reaches 127.0.0.1 on some hosts, a NAT64 gateway turns 64:ff9b::a00:1 into
 * 10.0.0.1), so they are refused outright: no legitimate receiver needs them. IPv4-mapped
 * (::ffff:0:0/96) is not here: it is unwrapped and judged as the IPv4 address it is.
 */
const EMBEDDED_IPV4: [string, [ipaddr.IPv6, number]][] = (
  [
    ['IPv4-compatible', '::/96'],
    ['IPv4-translated', '::ffff:0:0:0/96'],
    ['NAT64', '64:ff9b::/96'],
    ['NAT64 (local use)', '64:ff9b:1::/48'],
    ['6to4', '2002::/16'],
    ['Teredo', '2001::/32'],
  ] as const
).map(([name, cidr]) => [name, ipaddr.IPv6.parseCIDR(cidr)]);

/** Why an address may not be a target (private, reserved, or an IPv6 form embedding IPv4), or null when it is public. */
export function addressProblem(address: string): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const parsed = ipaddr.process(address);
  const range = parsed.range();
  // :: and ::1 sit inside ::/96 but are named for what they are.
  if (parsed.kind() === 'ipv6' && range !== 'loopback' && range !== 'unspecified') {
    const v6 = parsed as ipaddr.IPv6;
    const embedded = EMBEDDED_IPV4.find(([, cidr]) => v6.match(cidr));
    if (embedded) return `${address} embeds an IPv4 address (${embedded[0]} form)`;
  }
  return range === 'unicast' ? null : `${address} is a private or reserved address (${range})`;
}

export function isPublicAddress(address: string): boolean {
  return addressProblem(address) === null;
}

/**
 * Host names refused before any lookup: loopback names, and names that resolve through the local
 * resolver's rules rather than the public DNS (`localhost.`, `internal.`: a trailing dot skips the
 * search list and defeats string comparisons; a single label is completed by the search domains).
 */
export function hostNameProblem(host: string): string | null {
  const name = host.toLowerCase();
  if (name.endsWith('.')) return `${host}: host names ending in a dot are not allowed`;
  if (name === 'localhost' || name.endsWith('.localhost')) return `${host} is a loopback name`;
  if (!name.includes('.')) return `${host}: single-label host names are not allowed`;
  return null;
}

function guardedLookup(allowPrivate: boolean): LookupFunction {
  return ((
    hostname: string,
    options: object,
    callback: (err: Error | null, address: string | { address: string; family: number }[], family?: number) => void,
  ) => {
    if (!allowPrivate) {
      const problem = hostNameProblem(hostname);
      if (problem) return callback(new OutboundError('BLOCKED', problem), '', 0);
    }
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

/**
 * undici does not abandon a connection attempt (TCP or TLS handshake) when the request's signal
 * aborts; it waits for its own connect time-out. The call itself ends at its deadline regardless
 * (see outboundRequest), and this bounds how long the orphaned attempt lingers: the agent's connect
 * time-out is the call's time-out rounded up to a few steps, so a handful of agents cover all calls.
 */
const CONNECT_STEPS_MS = [1_000, 2_000, 5_000, 10_000, 30_000];
function connectTimeoutFor(timeoutMs: number): number {
  return CONNECT_STEPS_MS.find((step) => step >= timeoutMs) ?? Math.ceil(timeoutMs / 30_000) * 30_000;
}

const agents = new Map<string, Agent>();
function agentFor(allowPrivate: boolean, timeoutMs: number): Agent {
  const connectTimeout = connectTimeoutFor(timeoutMs);
  const key = `${allowPrivate}:${connectTimeout}`;
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ connect: { lookup: guardedLookup(allowPrivate), timeout: connectTimeout }, keepAliveTimeout: 10_000, connections: 64 });
    agents.set(key, agent);
  }
  return agent;
}

/**
 * The checks that need no lookup: the URL's form, a literal address, the host name's shape. Used
 * where a URL is saved without being resolved (workflow node params) and as the first half of
 * checkOutboundUrl. Returns the URL and the host when it is a name still to resolve.
 */
export function checkOutboundUrlForm(raw: string, options: { allowPrivate: boolean; requireHttps?: boolean }): { url: URL; name: string | null } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError('INVALID_URL', 'not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OutboundError('INVALID_URL', 'only http and https URLs are allowed');
  if (url.username || url.password) throw new OutboundError('INVALID_URL', 'credentials in the URL are not allowed');
  if (options.allowPrivate) return { url, name: null };
  if ((options.requireHttps ?? true) && url.protocol !== 'https:') throw new OutboundError('BLOCKED', 'only https URLs are allowed');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    const problem = addressProblem(host);
    if (problem) throw new OutboundError('BLOCKED', problem);
    return { url, name: null };
  }
  const nameProblem = hostNameProblem(host);
  if (nameProblem) throw new OutboundError('BLOCKED', nameProblem);
  return { url, name: host };
}

/** Checks a URL's form and, for literal addresses and resolvable names, where it points. */
export async function checkOutboundUrl(raw: string, options: { allowPrivate: boolean; requireHttps?: boolean }): Promise<URL> {
  const { url, name } = checkOutboundUrlForm(raw, options);
  if (!name) return url;
  const addresses = await new Promise<{ address: string }[]>((resolve) => {
    dnsLookup(name, { all: true }, (err, list) => resolve(err ? [] : (list as { address: string }[])));
  });
  const blocked = addresses.find((a) => !isPublicAddress(a.address));
  if (blocked) throw new OutboundError('BLOCKED', `${name} resolves to a private or reserved address (${blocked.address})`);
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

/** The most of an unwanted response body read to keep its connection for the next request. */
const DRAIN_BYTES = 64 * 1024;

async function readLimited(body: Dispatcher.ResponseData['body'], limit: number): Promise<{ text: string; truncated: boolean }> {
  if (limit <= 0) {
    // Read and dropped rather than destroyed: a short answer leaves the connection reusable (and
    // builds no abort error); past DRAIN_BYTES the body is cut and the connection closed.
    await body.dump({ limit: DRAIN_BYTES }).catch(() => {});
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

/** Settles with the promise, or rejects with the signal's reason as soon as it aborts, whatever the promise is waiting for. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      // The abandoned work settles later (undici's own time-outs); nobody waits for it any more.
      work.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function exchange(req: OutboundRequest, signal: AbortSignal, timeoutMs: number, started: number): Promise<OutboundResponse> {
  const url = await checkOutboundUrl(req.url, { allowPrivate: req.allowPrivate });
  const res = await request(url, {
    method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
    headers: req.headers,
    body: req.body,
    dispatcher: agentFor(req.allowPrivate, timeoutMs),
    signal,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  res.body.on('error', () => {});
  if (signal.aborted) {
    res.body.destroy();
    throw signal.reason;
  }
  const { text, truncated } = await readLimited(res.body, req.readBytes ?? 0);
  return { status: res.statusCode, headers: res.headers, body: text, truncated, durationMs: Math.round(performance.now() - started) };
}

/**
 * One outbound call with a total deadline: the URL check (DNS included), connect, TLS handshake,
 * headers and body all end by `timeoutMs`, enforced by an abort signal that also ends the wait for
 * a connection undici would otherwise keep waiting on.
 */
export async function outboundRequest(req: OutboundRequest): Promise<OutboundResponse> {
  const method = req.method ?? 'GET';
  // The span names the target without its path or query, which may carry tokens.
  let origin = '';
  try {
    origin = new URL(req.url).origin;
  } catch {
    /* refused below as INVALID_URL */
  }
  return withSpan(method, SpanKind.CLIENT, { 'http.request.method': method, 'server.address': origin }, async (span) => {
    const response = await guardedRequest(req);
    span?.setAttribute('http.response.status_code', response.status);
    return response;
  });
}

async function guardedRequest(req: OutboundRequest): Promise<OutboundResponse> {
  const timeoutMs = req.timeoutMs ?? 10_000;
  const started = performance.now();
  // A timer we clear, not AbortSignal.timeout: an abort firing after the exchange ended would
  // surface as an unhandled error on the finished body.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new OutboundError('TIMEOUT', `no answer within ${timeoutMs} ms`)), timeoutMs);
  const signal = req.signal ? AbortSignal.any([deadline.signal, req.signal]) : deadline.signal;
  try {
    return await untilAborted(exchange(req, signal, timeoutMs, started), signal);
  } catch (error) {
    if (deadline.signal.aborted) throw new OutboundError('TIMEOUT', `no answer within ${timeoutMs} ms`);
    if (error instanceof OutboundError) throw error;
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof OutboundError) throw cause;
    if (req.signal?.aborted) throw req.signal.reason ?? error;
    throw new OutboundError('CONNECT', (error as Error).message || 'connection failed');
  } finally {
    clearTimeout(timer);
  }
}
