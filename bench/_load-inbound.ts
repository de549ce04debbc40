import { createHmac, randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import type { LoadResult } from './load.ts';

/**
 * The load generator of bench/conversations.ts, in its own process (as bench/load.ts): inbound
 * messages, each with its own provider id, from `contacts` people (0: a new person every message,
 * so every message opens a conversation and a lead) — api-channel messages with an API key, or with
 * `whatsapp` the Cloud API's webhook (one message per delivery) signed as Meta signs it. Prints one
 * JSON line.
 */
export interface InboundJob {
  url: string;
  apiKey?: string;
  whatsapp?: { appSecret: string; phoneNumberId: string };
  contacts: number;
  connections: number;
  seconds: number;
}

const run = randomBytes(4).toString('hex');
let n = 0;

function message(contacts: number): string {
  const i = n++;
  const who = contacts > 0 ? i % contacts : i;
  return JSON.stringify({
    contact: { name: `Person ${who}`, address: `p-${run}-${who}@bench.example` },
    text: `Message ${i}: when do you open tomorrow?`,
    externalId: `${run}-${i}`,
  });
}

/** One Cloud API delivery: one entry, one change, one message from one of the contacts. */
function whatsappDelivery(contacts: number, phoneNumberId: string): string {
  const i = n++;
  const who = 14150000000 + (contacts > 0 ? i % contacts : i);
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'WABA_ID',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550000000', phone_number_id: phoneNumberId },
              contacts: [{ profile: { name: `Person ${who}` }, wa_id: String(who) }],
              messages: [
                {
                  from: String(who),
                  id: `wamid.${run}${i}`,
                  timestamp: String(Math.floor(Date.now() / 1000)),
                  type: 'text',
                  text: { body: `Message ${i}: when do you open tomorrow?` },
                },
              ],
            },
          },
        ],
      },
    ],
  });
}

const job = JSON.parse(process.argv[2]!) as InboundJob;
const wa = job.whatsapp;
const setupRequest = wa
  ? (request: { headers?: Record<string, string> }) => {
      const body = whatsappDelivery(job.contacts, wa.phoneNumberId);
      const signature = 'sha256=' + createHmac('sha256', wa.appSecret).update(body).digest('hex');
      return { ...request, body, headers: { ...request.headers, 'content-type': 'application/json', 'x-hub-signature-256': signature } };
    }
  : (request: object) => ({ ...request, body: message(job.contacts) });
const result = await autocannon({
  url: job.url,
  connections: job.connections,
  duration: job.seconds,
  requests: [
    {
      method: 'POST',
      headers: { ...(job.apiKey ? { 'x-api-key': job.apiKey } : {}), 'content-type': 'application/json' },
      setupRequest: setupRequest as never,
    },
  ],
});
const statusCodes: Record<string, number> = {};
for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count;
const out: LoadResult = {
  rps: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  ok: result['2xx'],
  non2xx: result.non2xx,
  errors: result.errors + result.timeouts,
  statusCodes,
};
process.stdout.write(JSON.stringify(out) + '\n');
