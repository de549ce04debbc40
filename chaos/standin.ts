import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StandIn, StandInAnswer, StandInRequest } from './world.ts';

export type FaultMode = 'ok' | 'hang' | 'fail';

/**
 * A loopback HTTP server whose answers come from `handle`, and which the run's faults can make hang
 * (requests held unanswered until the fault ends, then their connections dropped, as a provider
 * that stopped answering) or answer 500 for a while.
 */
export class LoopbackStandIn implements StandIn {
  handle: (req: StandInRequest) => StandInAnswer | Promise<StandInAnswer> = () => ({ status: 200, body: 'ok' });
  readonly counts = { handled: 0, faulted: 0 };
  private server: Server | null = null;
  private mode: FaultMode = 'ok';
  private held = new Set<ServerResponse>();

  readonly name: string;
  /** Whether the run's stand-in faults may pick this one. */
  readonly faultable: boolean;

  constructor(name: string, faultable: boolean) {
    this.name = name;
    this.faultable = faultable;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.serve(req, res));
    this.server.keepAliveTimeout = 2000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  url(path = '/'): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}${path.startsWith('/') ? path : `/${path}`}`;
  }

  setMode(mode: FaultMode): void {
    this.mode = mode;
    if (mode !== 'hang') {
      for (const res of this.held) res.destroy();
      this.held.clear();
    }
  }

  get currentMode(): FaultMode {
    return this.mode;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      return;
    }
    if (this.mode === 'hang') {
      this.counts.faulted++;
      this.held.add(res);
      res.on('close', () => this.held.delete(res));
      return;
    }
    if (this.mode === 'fail') {
      this.counts.faulted++;
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"stand-in failing on purpose"}');
      return;
    }
    const raw = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = raw ? JSON.parse(raw) : undefined;
    } catch {
      json = undefined;
    }
    let answer: StandInAnswer;
    try {
      answer = await this.handle({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, json, at: Date.now() });
    } catch (error) {
      answer = { status: 500, body: String(error) };
    }
    this.counts.handled++;
    if (res.destroyed) return;
    res.writeHead(answer?.status ?? 200, { 'content-type': 'application/json', ...answer?.headers });
    res.end(answer?.body ?? '{}');
  }

  async stop(): Promise<void> {
    this.setMode('ok');
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
