import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** The raw bytes as received: signatures are checked against these. */
  raw: string;
  json: unknown;
  at: number;
}

export type Behaviour = (req: Received, n: number) => { status?: number; body?: string; headers?: Record<string, string>; delayMs?: number } | void;

/** A real HTTP server on loopback that records every request (a webhook receiver, a CRM, an API stand-in). */
export class Receiver {
  readonly received: Received[] = [];
  behaviour: Behaviour = () => ({ status: 200, body: 'ok' });
  private server: Server | null = null;
  private waiters: { count: number; resolve: () => void }[] = [];

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let json: unknown = undefined;
    try {
      json = raw ? JSON.parse(raw) : undefined;
    } catch {
      json = undefined;
    }
    const entry: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, json, at: Date.now() };
    this.received.push(entry);
    const plan = this.behaviour(entry, this.received.length) ?? {};
    if (plan.delayMs) await new Promise((r) => setTimeout(r, plan.delayMs));
    if (!res.destroyed) {
      res.writeHead(plan.status ?? 200, { 'content-type': 'text/plain', ...plan.headers });
      res.end(plan.body ?? '');
    }
    this.waiters = this.waiters.filter((w) => {
      if (this.received.length >= w.count) w.resolve();
      return this.received.length < w.count;
    });
  }

  /** Resolves once `count` requests have arrived in total (fails after timeoutMs). */
  waitFor(count: number, timeoutMs = 10_000): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`receiver got ${this.received.length} of ${count} requests`)), timeoutMs);
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
