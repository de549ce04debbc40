import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';

/**
 * The load generator, run as its own process (`node bench/load.ts '<job json>'`) so it does not
 * share an event loop with the server under test; it prints the figures as one JSON line.
 * (Not a worker thread: autocannon inside a worker thread takes itself for one of its own workers.)
 */
export interface LoadJob {
  url: string;
  /** hook: a workflow's webhook trigger, each body `{ sentAt, n }` (sentAt: epoch ms when sent). */
  kind: 'create-new' | 'create-duplicate' | 'list' | 'hook';
  headers: Record<string, string>;
  connections: number;
  seconds: number;
  /** Requests a second over all connections (paced); as fast as answered when absent. */
  rate?: number;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
}

const run = randomBytes(4).toString('hex');
let n = 0;

/** A new person every request: unique e-mail, a tag `x` on half of them, "Acme" in a fifth. */
function newPerson(): string {
  const i = n++;
  return JSON.stringify({
    name: `Person ${run} ${i}`,
    email: `p-${run}-${i}@bench.example`,
    company: i % 5 === 0 ? 'Acme Corp' : 'Globex Ltd',
    source: 'bench',
    tags: i % 2 === 0 ? ['x', 'bench'] : ['bench'],
    custom: { seq: i },
  });
}

/** The same ten people again and again: every request after the first ten is a de-duplicated update. */
function knownPerson(): string {
  const i = n++ % 10;
  return JSON.stringify({ name: `Known ${i}`, email: `known-${i}@bench.example`, company: 'Acme Corp', tags: ['x', `round-${n % 3}`] });
}

async function load(job: LoadJob): Promise<LoadResult> {
  const headers = { ...job.headers, 'content-type': 'application/json' };
  const requests =
    job.kind === 'list'
      ? [{ method: 'GET', headers: job.headers }]
      : [
          {
            method: 'POST',
            headers,
            setupRequest: (request: object) => ({
              ...request,
              body: job.kind === 'hook' ? JSON.stringify({ sentAt: Date.now(), n: n++ }) : job.kind === 'create-new' ? newPerson() : knownPerson(),
            }),
          },
        ];
  const result = await autocannon({
    url: job.url,
    connections: job.connections,
    duration: job.seconds,
    requests,
    ...(job.rate ? { overallRate: job.rate } : {}),
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statusCodes,
  };
}

const result = await load(JSON.parse(process.argv[2]!) as LoadJob);
process.stdout.write(JSON.stringify(result) + '\n');
