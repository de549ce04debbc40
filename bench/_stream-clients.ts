import { request } from 'node:http';

/**
 * The clients of bench/org-stream.ts, in their own process: opens `count` SSE connections to the
 * organization stream and records, for every `lead.created` frame, arrival time minus the
 * envelope's `at`. Talks to the parent over IPC.
 */
const [url, token, countArg] = process.argv.slice(2);
const count = Number(countArg);
const latencies: number[] = [];
let open = 0;

function connect(): void {
  const req = request(url!, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
    if (res.statusCode !== 200) {
      process.send!({ error: `status ${res.statusCode}` });
      return;
    }
    open++;
    if (open === count) process.send!({ connected: open });
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) !== -1) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (!frame.startsWith('event: lead.created')) continue;
        const data = frame.slice(frame.indexOf('data: ') + 6);
        latencies.push(Date.now() - Date.parse((JSON.parse(data) as { at: string }).at));
      }
    });
  });
  req.on('error', (e) => process.send!({ error: e.message }));
  req.end();
}

for (let i = 0; i < count; i++) connect();
process.on('message', (m: string) => {
  if (m === 'report') process.send!({ latencies });
});
