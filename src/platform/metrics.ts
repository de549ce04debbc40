import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { fillPlaceholders, sql, type SQL } from 'drizzle-orm';
import client from 'prom-client';
import type { Clock } from './clock.ts';
import { fixedFragment, type Database } from './db.ts';

/**
 * Prometheus metrics, served on their own port (METRICS_PORT), never on the public one. The metric
 * objects are process-wide, as prom-client means them to be (one registry, the counters incremented
 * where the numbers are: webhook deliveries, run ends, model usage, streams); what a scrape reads
 * from the database (queue depths, the pool) is bound when the metrics server starts.
 */
export const registry = new client.Registry();

const httpRequests = new client.Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});
const httpDuration = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time to answer an HTTP request, by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

/** Webhook delivery attempts by outcome: `succeeded`, `failed` (the receiver was tried and failed) or `skipped` (endpoint inactive or event gone). */
export const webhookDeliveryOutcomes = new client.Counter({
  name: 'webhook_deliveries_total',
  help: 'Webhook delivery attempts by outcome',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Workflow runs that ended, by final status, from start to end. */
export const workflowRunDuration = new client.Histogram({
  name: 'workflow_run_duration_seconds',
  help: 'Duration of finished workflow runs (started to finished) by final status',
  labelNames: ['status'] as const,
  buckets: [0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 86400],
  registers: [registry],
});

export const aiTokens = new client.Counter({
  name: 'ai_tokens_total',
  help: 'Model tokens used, by model and direction (input, output)',
  labelNames: ['model', 'direction'] as const,
  registers: [registry],
});
export const aiCost = new client.Counter({
  name: 'ai_cost_usd_total',
  help: 'Model cost in USD (at the configured prices), by model',
  labelNames: ['model'] as const,
  registers: [registry],
});

/** Open Server-Sent-Events streams of this instance (organization, run, agent-run and widget streams). */
export const sseConnections = new client.Gauge({
  name: 'sse_connections_open',
  help: 'Open Server-Sent-Events streams',
  registers: [registry],
});

/** One model call's usage, as recorded in usage_records. */
export function recordModelUsage(model: string, inputTokens: number, outputTokens: number, costUsd: number): void {
  aiTokens.inc({ model, direction: 'input' }, inputTokens);
  aiTokens.inc({ model, direction: 'output' }, outputTokens);
  aiCost.inc({ model }, costUsd);
}

// ------------------------------------------------------------------ scrape-time readings

interface Source {
  database: Database;
  clock: Clock;
}
let source: Source | null = null;

/**
 * A worker loop's queue, registered by the module that owns its rows (registerQueueGauge): `queues`
 * are the `queue` labels it answers for, and `sample(now)` a select of rows of `queue`, `depth`
 * (int) and `age` (seconds the oldest due item has waited, float8) — what is due at `now` (a
 * timestamptz expression) and not taken, read off the index its loop claims with. A queue with no
 * row reads 0.
 */
export interface QueueGauge {
  queues: readonly string[];
  sample(now: SQL): SQL;
}

/** The registered queues, in the order of registration, by their labels (registering again replaces). */
const queueGauges = new Map<string, QueueGauge>();
/** Every registered queue's part in one statement of fixed text (built again only after a registration), and its name. */
let queuesStatement: { name: string; text: string; params: unknown[] } | null = null;

/**
 * Adds a queue to `worker_queue_depth` and `worker_queue_oldest_age_seconds`: the modules that own
 * the worker loops' rows register theirs (services.ts), the platform knows no module's tables.
 */
export function registerQueueGauge(gauge: QueueGauge): void {
  queueGauges.set(gauge.queues.join(','), gauge);
  queuesStatement = null;
  queueReading = null;
}

function queuesSql(): { name: string; text: string; params: unknown[] } {
  if (!queuesStatement) {
    const now = sql`${sql.placeholder('now')}::timestamptz`;
    const { text, params } = fixedFragment(
      sql.join(
        [...queueGauges.values()].map((g) => sql`(${g.sample(now)})`),
        sql`\n  union all\n`,
      ),
      1,
    );
    // Named by its text: a connection that prepared another set of queues' statement never runs it for this one.
    queuesStatement = { name: `metrics_queues_${createHash('sha256').update(text).digest('hex').slice(0, 12)}`, text, params };
  }
  return queuesStatement;
}

/** Scrapes within this long of the last reading get that reading: a busy Prometheus does not load the database. */
const QUEUE_CACHE_MS = 5000;

type QueueRow = { queue: string; depth: number; age: number | null };
let queueReading: { at: number; rows: Promise<QueueRow[]> } | null = null;

/** Every registered queue, in one statement per scrape. */
function readQueues(): Promise<QueueRow[]> {
  const now = performance.now();
  if (queueReading && now - queueReading.at < QUEUE_CACHE_MS) return queueReading.rows;
  const current = source;
  const statement = queueGauges.size ? queuesSql() : null;
  const rows =
    current && statement
      ? current.database.prepared<QueueRow>(statement.name, statement.text, fillPlaceholders(statement.params, { now: current.clock.now().toISOString() }))
      : Promise.resolve([]);
  queueReading = { at: now, rows };
  // A failed reading is not kept: the next scrape tries again.
  rows.catch(() => {
    if (queueReading?.rows === rows) queueReading = null;
  });
  return rows;
}

async function queueValues(pick: (row: QueueRow | undefined) => number): Promise<{ queue: string; value: number }[]> {
  const rows = await readQueues();
  return [...queueGauges.values()].flatMap((g) => g.queues).map((queue) => ({ queue, value: pick(rows.find((r) => r.queue === queue)) }));
}

new client.Gauge({
  name: 'worker_queue_depth',
  help: 'Items due and waiting for a worker loop, per queue',
  labelNames: ['queue'] as const,
  registers: [registry],
  async collect() {
    for (const { queue, value } of await queueValues((r) => Number(r?.depth ?? 0))) this.set({ queue }, value);
  },
});
new client.Gauge({
  name: 'worker_queue_oldest_age_seconds',
  help: 'How long the oldest due item of each queue has waited (0 when empty)',
  labelNames: ['queue'] as const,
  registers: [registry],
  async collect() {
    for (const { queue, value } of await queueValues((r) => Math.max(0, Number(r?.age ?? 0)))) this.set({ queue }, value);
  },
});

new client.Gauge({
  name: 'db_pool_connections',
  help: 'Database connections by state (total, idle); the embedded database is one connection',
  labelNames: ['state'] as const,
  registers: [registry],
  collect() {
    const pool = source?.database.pool;
    this.set({ state: 'total' }, pool ? pool.totalCount : source ? 1 : 0);
    this.set({ state: 'idle' }, pool ? pool.idleCount : 0);
  },
});
new client.Gauge({
  name: 'db_pool_waiting_requests',
  help: 'Queries waiting for a free pooled connection',
  registers: [registry],
  collect() {
    this.set(source?.database.pool?.waitingCount ?? 0);
  },
});

// ------------------------------------------------------------------ the HTTP hook

type Child = { count: { inc(): void }; duration: { observe(value: number): void } };
/** route → method → status → the metric children: after the first request of a kind, a lookup and no allocation of our own. */
const children = new Map<string, Map<string, Map<number, Child>>>();

function childFor(method: string, route: string, status: number): Child {
  let byMethod = children.get(route);
  if (!byMethod) children.set(route, (byMethod = new Map()));
  let byStatus = byMethod.get(method);
  if (!byStatus) byMethod.set(method, (byStatus = new Map()));
  let child = byStatus.get(status);
  if (!child) {
    const labels = { method, route, status: String(status) };
    child = { count: httpRequests.labels(labels), duration: httpDuration.labels(labels) };
    byStatus.set(status, child);
  }
  return child;
}

/** Counts every answered request under its route pattern (`/api/v1/orgs/:orgId/leads`), never the raw URL; `unmatched` for 404s outside any route. */
export function registerHttpMetrics(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    const child = childFor(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode);
    child.count.inc();
    child.duration.observe(reply.elapsedTime / 1000);
    done();
  });
}

// ------------------------------------------------------------------ the server

declare module 'fastify' {
  interface FastifyInstance {
    /** The port the metrics server listens on, once the app is ready; null when METRICS_PORT is unset. */
    metricsPort: number | null;
  }
}

/**
 * With METRICS_PORT set: the HTTP hook, and the metrics server started when the app is ready and
 * closed with it. Unset: nothing at all (no hook on the request path, no listener).
 */
export function registerMetrics(app: FastifyInstance, options: Omit<MetricsOptions, 'log'> | null): void {
  app.decorate('metricsPort', null);
  if (!options) return;
  registerHttpMetrics(app);
  let server: MetricsServer | null = null;
  app.addHook('onReady', async () => {
    server = await startMetricsServer({ ...options, log: app.log });
    app.metricsPort = server.port;
    app.log.info(`metrics on http://${options.host}:${server.port}/metrics${options.token ? ' (bearer token required)' : ''}`);
  });
  app.addHook('onClose', async () => {
    await server?.close();
  });
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

let defaultsCollected = false;

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether the request carries `Authorization: Bearer <token>`, compared in constant time (hashes of equal length). */
function authorized(request: IncomingMessage, token: string | undefined): boolean {
  if (!token) return true;
  const header = request.headers.authorization ?? '';
  const given = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0;
}

async function answer(request: IncomingMessage, response: ServerResponse, token: string | undefined, log: FastifyBaseLogger): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  if (path !== '/metrics') {
    response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: metrics are at /metrics\n');
    return;
  }
  if (!authorized(request, token)) {
    response
      .writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer realm="metrics"' })
      .end('Unauthorized: send Authorization: Bearer <METRICS_TOKEN>\n');
    return;
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('Method not allowed\n');
    return;
  }
  try {
    const body = await registry.metrics();
    response.writeHead(200, { 'content-type': registry.contentType });
    response.end(request.method === 'HEAD' ? undefined : body);
  } catch (error) {
    log.error({ err: error }, 'metrics scrape failed');
    response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Metrics could not be read\n');
  }
}

export interface MetricsOptions {
  port: number;
  host: string;
  token?: string;
  database: Database;
  clock: Clock;
  log: FastifyBaseLogger;
}

/** Starts the metrics server (its own small HTTP server on METRICS_PORT; port 0: any free port). */
export async function startMetricsServer(options: MetricsOptions): Promise<MetricsServer> {
  if (!defaultsCollected) {
    client.collectDefaultMetrics({ register: registry });
    defaultsCollected = true;
  }
  const bound: Source = { database: options.database, clock: options.clock };
  source = bound;
  queueReading = null;
  const server: Server = createServer((request, response) => void answer(request, response, options.token, options.log));
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      if (source === bound) source = null;
      queueReading = null;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
