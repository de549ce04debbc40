import type { FastifyReply, FastifyRequest } from 'fastify';

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
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    raw.flushHeaders();
    request.raw.socket.setTimeout(0);
    request.raw.socket.setNoDelay(true);
    this.ping = setInterval(() => this.write(': ping\n\n'), options.pingMs);
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
