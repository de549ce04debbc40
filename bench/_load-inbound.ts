import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import type { LoadResult } from './load.ts';

/**
 * The load generator of bench/conversations.ts, in its own process (as bench/load.ts): inbound
 * api-channel messages, each with its own provider id, from `contacts` people (0: a new person
 * every message, so every message opens a conversation and a lead). Prints one JSON line.
 */
export interface InboundJob {
  url: string;
  apiKey: string;
  contacts: number;
  connections: number;
  seconds: number;
}

const run = randomBytes(4).toString('hex');
let n = 0;

function message(contacts: number): string {
  const i = n++;
  const who = contacts > 0 ? i % contacts : i;
  return JSON.stringify({ contact: { name: `Person ${who}`, address: `p-${run}-${who}@bench.example` }, text: `Message ${i}: when do you open tomorrow?`, externalId: `${run}-${i}` });
}

const job = JSON.parse(process.argv[2]!) as InboundJob;
const result = await autocannon({
  url: job.url, connections: job.connections, duration: job.seconds,
  requests: [{ method: 'POST', headers: { 'x-api-key': job.apiKey, 'content-type': 'application/json' }, setupRequest: (request: object) => ({ ...request, body: message(job.contacts) }) }],
});
const statusCodes: Record<string, number> = {};
for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count;
const out: LoadResult = {
  rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99,
  ok: result['2xx'], non2xx: result.non2xx, errors: result.errors + result.timeouts, statusCodes,
};
process.stdout.write(JSON.stringify(out) + '\n');
