import { request } from 'node:http';

/**
 * The latency client of bench/conversations.ts, in its own process: one SSE connection to the
 * organization stream, then `count` inbound messages posted one after another (`gapMs` apart);
 * for each, the time from sending the POST to the `conversation.message` frame carrying it.
 * Prints one JSON line `{ latencies, missing }`.
 */
const [streamUrl, token, inboundUrl, apiKey, countArg, gapArg] = process.argv.slice(2);
const count = Number(countArg);
const gapMs = Number(gapArg);
const sentAt = new Map<string, number>();
const latencies: number[] = [];

await new Promise<void>((resolve, reject) => {
  const req = request(streamUrl!, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
    if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
    resolve();
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const now = performance.now();
      buffer += chunk;
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) !== -1) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (!frame.includes('event: conversation.message')) continue;
        const data = JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as {
          data?: { message?: { externalId?: string } };
          message?: { externalId?: string };
        };
        const id = (data.data?.message ?? data.message)?.externalId;
        const at = id ? sentAt.get(id) : undefined;
        if (at !== undefined) {
          latencies.push(now - at);
          sentAt.delete(id!);
        }
      }
    });
  });
  req.on('error', reject);
  req.end();
});
await new Promise((r) => setTimeout(r, 300));

const run = Math.random().toString(36).slice(2, 8);
for (let i = 0; i < count; i++) {
  const externalId = `lat-${run}-${i}`;
  sentAt.set(externalId, performance.now());
  const res = await fetch(inboundUrl!, {
    method: 'POST',
    headers: { 'x-api-key': apiKey!, 'content-type': 'application/json' },
    body: JSON.stringify({ contact: { address: `lat-${run}-${i % 20}@bench.example` }, text: `latency ${i}`, externalId }),
  });
  await res.arrayBuffer();
  await new Promise((r) => setTimeout(r, gapMs));
}
await new Promise((r) => setTimeout(r, 1000));
process.stdout.write(JSON.stringify({ latencies, missing: sentAt.size }) + '\n');
process.exit(0);
