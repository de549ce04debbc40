import { createServer } from 'node:http';

/**
 * The receiver of bench/executions.ts, in its own process: answers 204 at once and keeps, per
 * request, the trigger's `sentAt` (found anywhere in the body: the workflow passes it through) and
 * when it arrived. Over IPC: `{ report: true }` → `{ samples }` (and forgets them).
 */
let samples: [number, number][] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    res.writeHead(204).end();
    let sentAt = 0;
    JSON.parse(Buffer.concat(chunks).toString('utf8'), (key, value: unknown) => {
      if (key === 'sentAt' && typeof value === 'number') sentAt = value;
      return value;
    });
    samples.push([sentAt, now]);
  });
});
server.keepAliveTimeout = 30_000;
process.on('message', () => {
  process.send!({ samples });
  samples = [];
});
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
