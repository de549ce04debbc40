import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * OpenTelemetry traces, exported over OTLP/HTTP (JSON) when OTEL_EXPORTER_OTLP_ENDPOINT is set; off
 * otherwise, and then the SDK is never loaded and every hook below is a flag test.
 *
 * The spans are made here by hand, at the few places that matter (the HTTP server, the database
 * drivers, outbound HTTP, model calls), not by the auto-instrumentations: the service runs as ESM by
 * type stripping, where require-hook patching does not see `import pg from 'pg'` without a loader
 * hook given on the command line. Hand-made spans work however the process is started.
 */
const tracer = trace.getTracer('automation-service');
let enabled = false;

export const tracingEnabled = (): boolean => enabled;

export interface Tracing {
  /** Exports the spans ended so far. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** OTLP base URL (`http://collector:4318`); spans go to `<endpoint>/v1/traces`. */
  endpoint: string;
  serviceName?: string;
  /** Export each span at once (tests) rather than in batches. */
  immediate?: boolean;
}

let started: Tracing | null = null;

/** Starts the SDK once per process: the tracer provider, the async context, the database drivers' spans. */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  if (started) return started;
  const [
    { TracerProvider, BatchSpanProcessor, SimpleSpanProcessor },
    { OTLPTraceExporter },
    { AsyncLocalStorageContextManager },
    { resourceFromAttributes },
    { W3CTraceContextPropagator },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/core'),
  ]);
  const exporter = new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName ?? 'automation-service' }),
    spanProcessors: [options.immediate ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  await patchDatabaseDrivers();
  enabled = true;
  started = {
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      enabled = false;
      await provider.shutdown();
    },
  };
  return started;
}

function fail(span: Span, error: unknown): void {
  span.recordException(error as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
}

/** Runs `fn` inside a span (ended when it settles, marked failed when it throws); just `fn` when tracing is off. */
export async function withSpan<T>(name: string, kind: SpanKind, attributes: Attributes, fn: (span: Span | null) => Promise<T>): Promise<T> {
  if (!enabled) return fn(null);
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      fail(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

// ------------------------------------------------------------------ HTTP server spans

const spans = new WeakMap<FastifyRequest, Span>();

/**
 * A server span per request, named by its route pattern, with the rest of the request's work
 * (hooks, handler, queries, outbound calls) running inside it. A `traceparent` header continues
 * the caller's trace.
 */
export function registerHttpTracing(app: FastifyInstance): void {
  if (!enabled) return;
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    const parent = propagation.extract(context.active(), request.headers);
    const span = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          ...(route ? { 'http.route': route } : {}),
          'url.scheme': request.protocol,
          'server.address': request.hostname,
        },
      },
      parent,
    );
    spans.set(request, span);
    context.with(trace.setSpan(parent, span), done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      spans.delete(request);
    }
    done();
  });
}

// ------------------------------------------------------------------ database spans

/** `select`, `insert`, … : the statement's first word, as the span's name (never its values). */
function operation(text: unknown): string {
  const match = typeof text === 'string' ? /^\s*(?:with\b[\s\S]*?\)\s*)?([a-z]+)/i.exec(text) : null;
  return (match?.[1] ?? 'query').toLowerCase();
}

function dbSpan(system: 'postgresql', text: unknown): Span | null {
  // Only inside a trace: the workers' polling would otherwise fill the collector with lone queries.
  if (!enabled || !trace.getSpan(context.active())) return null;
  const statement = typeof text === 'string' ? text : (text as { text?: string } | null)?.text;
  return tracer.startSpan(`${operation(statement)}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'db.system.name': system, ...(statement ? { 'db.query.text': statement.length > 2000 ? `${statement.slice(0, 2000)}…` : statement } : {}) },
  });
}

function settle<T>(span: Span, result: Promise<T>): Promise<T> {
  return result.then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      fail(span, error);
      span.end();
      throw error;
    },
  );
}

let patched = false;

/**
 * node-postgres: every Client's query (the pool's too), promise or callback form. PGlite: its
 * query and exec, and a transaction as one span (the statements inside run on an object PGlite
 * makes per transaction, out of reach).
 */
async function patchDatabaseDrivers(): Promise<void> {
  if (patched) return;
  patched = true;
  const [{ default: pg }, { PGlite }] = await Promise.all([import('pg'), import('@electric-sql/pglite')]);
  type Query = (...args: unknown[]) => unknown;
  const clientProto = pg.Client.prototype as unknown as { query: Query };
  const pgQuery = clientProto.query;
  clientProto.query = function (this: unknown, ...args: unknown[]) {
    const span = dbSpan('postgresql', args[0]);
    if (!span) return pgQuery.apply(this, args);
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = function (this: unknown, error: unknown, ...rest: unknown[]) {
        if (error) fail(span, error);
        span.end();
        return (callback as Query).call(this, error, ...rest);
      };
      return pgQuery.apply(this, args);
    }
    const result = pgQuery.apply(this, args);
    if (result && typeof (result as Promise<unknown>).then === 'function') return settle(span, result as Promise<unknown>);
    span.end();
    return result;
  };
  const liteProto = PGlite.prototype as unknown as Record<'query' | 'exec' | 'transaction', Query>;
  for (const method of ['query', 'exec', 'transaction'] as const) {
    const original = liteProto[method];
    liteProto[method] = function (this: unknown, ...args: unknown[]) {
      const span = dbSpan('postgresql', method === 'transaction' ? 'transaction' : args[0]);
      if (!span) return original.apply(this, args);
      return context.with(trace.setSpan(context.active(), span), () => settle(span, original.apply(this, args) as Promise<unknown>));
    };
  }
}
