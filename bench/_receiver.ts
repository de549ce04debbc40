import { createServer } from 'node:http';

/**
 * The webhook receiver of bench/webhooks.ts, in its own process so it does not share the service's
 * event loop. Records, per request, when it arrived and the envelope's `at`; answers 204 at once.
 * Reports over IPC when `expected` requests have arrived. Requests to /warm/… are answered and not
 * recorded: a new receiver process is warmed up before it is measured against.
 */
const expected = Number(process.argv[2]);
const samples: [number, number][] = [];
let first = 0;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    if (!first && !req.url?.startsWith('/warm/')) first = now;
    res.writeHead(204).end();
    if (req.url?.startsWith('/warm/')) return;
    const at = Date.parse((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { at: string }).at);
    samples.push([at, now]);
    if (samples.length === expected) process.send!({ samples, first, last: now });
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
