import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on 127.0.0.1 (any free port) for a provider's stand-in: start, stop (open
 * connections closed at once) and its base URL; the stand-in answers in `handle`.
 */
export abstract class LoopbackServer {
  private server: Server | null = null;

  protected abstract handle(req: IncomingMessage, res: ServerResponse): Promise<void>;

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }
}
