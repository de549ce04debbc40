import type { FastifyReply, FastifyRequest } from 'fastify';
import { rateLimited } from './errors.ts';
import { sseConnections } from './metrics.ts';

export interface SseOptions {
  pingMs: number;
  /** Bytes queued for a slow client before the stream gives up on it. */
  maxBufferBytes?: number;
}

// One message fanned out to thousands of connections is serialized once.
const serialized = new WeakMap<object, string>();
function serialize(data: unknown): string {
  if (data === null || typeof data !== 'object') return JSON.stringify(data);
  let json = serialized.get(data);
  if (json === undefined) {
    json = JSON.stringify(data);
    serialized.set(data, json);
  }
  return json;
}

/**
 * One Server-Sent-Events response: `event:`, `id:`, `data:` frames and a `: ping` comment every
 * pingMs. The server applies no timeout of its own.
 */
export class SseStream {
  private readonly reply: FastifyReply;
  private readonly maxBuffer: number;
  private readonly ping: NodeJS.Timeout;
  private readonly closers: (() => void)[] = [];
  private ended = false;

  constructor(request: FastifyRequest, reply: FastifyReply, options: SseOptions) {
    this.reply = reply;
    this.maxBuffer = options.maxBufferBytes ?? 1024 * 1024;
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      // Headers set before the stream took over (the rate-limit ones) still go out.
      ...(reply.getHeaders() as Record<string, string | number | string[]>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    raw.flushHeaders();
    request.raw.socket.setTimeout(0);
    request.raw.socket.setNoDelay(true);
    this.ping = setInterval(() => this.write(': ping\n\n'), options.pingMs);
    sseConnections.inc();
    const onGone = () => this.close();
    request.raw.on('close', onGone);
    raw.on('error', onGone);
  }

  get closed(): boolean {
    return this.ended;
  }

  /** True when the client reads slower than events arrive and its buffer passed the limit. */
  get overflowing(): boolean {
    return this.reply.raw.writableLength > this.maxBuffer;
  }

  send(event: string, data: unknown, id?: number | string): void {
    let frame = `event: ${event}\n`;
    if (id !== undefined) frame += `id: ${id}\n`;
    frame += `data: ${serialize(data)}\n\n`;
    this.write(frame);
  }

  comment(text: string): void {
    this.write(`: ${text}\n\n`);
  }

  onClose(fn: () => void): void {
    if (this.ended) fn();
    else this.closers.push(fn);
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.ping);
    sseConnections.dec();
    for (const fn of this.closers.splice(0)) {
      try {
        fn();
      } catch {
        // a closer failing must not keep the others from running
      }
    }
    if (!this.reply.raw.writableEnded) this.reply.raw.end();
  }

  private write(chunk: string): void {
    if (this.ended) return;
    this.reply.raw.write(chunk);
  }
}

export interface SseLimits {
  perCredential: number;
  perOrg: number;
  /** Retry-After of a refused stream, seconds. */
  retryAfterS?: number;
}

/** Who holds a stream: the credential (see principalKey) and its organization. */
export interface SseOwner {
  credential: string;
  orgId: string;
}

/**
 * Every open stream of this instance, counted per credential and per organization: a stream
 * holds a socket and subscriptions for as long as the client likes, so their number is capped
 * (CONTRACT §12). Iterating gives the open streams (closed on shutdown).
 */
export class SseStreams implements Iterable<SseStream> {
  private readonly open_ = new Set<SseStream>();
  private readonly perCredential = new Map<string, number>();
  private readonly perOrg = new Map<string, number>();
  private readonly limits: SseLimits;
  private closing = false;

  constructor(limits: SseLimits) {
    this.limits = limits;
  }

  get size(): number {
    return this.open_.size;
  }

  [Symbol.iterator](): Iterator<SseStream> {
    return [...this.open_][Symbol.iterator]();
  }

  /** Opens a stream, or throws 429 RATE_LIMIT (with Retry-After) when the owner's credential or organization is at its cap. */
  open(request: FastifyRequest, reply: FastifyReply, owner: SseOwner, options: SseOptions): SseStream {
    const retry = this.limits.retryAfterS ?? 30;
    if ((this.perCredential.get(owner.credential) ?? 0) >= this.limits.perCredential) {
      throw rateLimited(retry, 'RATE_LIMIT', `At most ${this.limits.perCredential} event streams may be open per credential; close one first`);
    }
    if ((this.perOrg.get(owner.orgId) ?? 0) >= this.limits.perOrg) {
      throw rateLimited(retry, 'RATE_LIMIT', `At most ${this.limits.perOrg} event streams may be open per organization`);
    }
    const stream = new SseStream(request, reply, options);
    bump(this.perCredential, owner.credential, 1);
    bump(this.perOrg, owner.orgId, 1);
    this.open_.add(stream);
    stream.onClose(() => {
      this.open_.delete(stream);
      bump(this.perCredential, owner.credential, -1);
      bump(this.perOrg, owner.orgId, -1);
    });
    // A request already in its handler when the shutdown closed the streams opens its own after:
    // it ends at once (the client reconnects elsewhere), or it would hold the shutdown open.
    if (this.closing) stream.close();
    return stream;
  }

  /** At shutdown: closes every open stream, and every stream opened from now on as it opens. */
  closeAll(): void {
    this.closing = true;
    for (const stream of this) stream.close();
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
