import { connect, createServer, type Server, type Socket } from 'node:net';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';

/** A test app listening on a loopback port (the SDK and the CLI talk HTTP to it). */
export async function listeningApp(env: Record<string, string> = {}): Promise<{ t: TestApp; url: string }> {
  const t = await buildTestApp({ env: { WORKFLOW_POLL_MS: '100', SSE_PING_MS: '200', ...env } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { t, url: `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}` };
}

/**
 * A TCP proxy in front of the server that can cut a connection the way a network does: the first
 * event-stream response through it is severed after `cutAfterEvents` events (`id:` lines) have
 * passed; everything else passes untouched.
 */
export class CuttingProxy {
  cuts = 0;
  cutAfterEvents: number;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly target: URL;

  constructor(target: string, cutAfterEvents: number) {
    this.target = new URL(target);
    this.cutAfterEvents = cutAfterEvents;
  }

  async start(): Promise<string> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      this.sockets.add(client).add(upstream);
      let stream = false;
      let seen = 0;
      client.on('data', (chunk) => upstream.write(chunk));
      upstream.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        if (text.includes('text/event-stream')) stream = true;
        client.write(chunk);
        if (stream && this.cuts === 0) {
          seen += (text.match(/^id: /gm) ?? []).length;
          if (seen >= this.cutAfterEvents) {
            this.cuts++;
            client.destroy();
            upstream.destroy();
          }
        }
      });
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server!.address() as { port: number }).port}`;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
