import { setFlagsFromString } from 'node:v8';
import pino from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { EmbeddedDatabaseBusy, openDatabase } from './platform/db.ts';
import { startTracing } from './platform/tracing.ts';
import { PRETTY_TRANSPORT, prettyLogs } from './platform/log.ts';

const msSince = (t: number) => Math.round(performance.now() - t);

// Node 24's V8 can abort the process (`Check failed: jit_page_->allocations_.erase(addr) == 1` in
// ThreadIsolation::UnregisterWasmAllocation) when its WebAssembly code collector frees an import
// wrapper that another thread is tiering up (nodejs/node#64500). The embedded store (PGlite) and
// fetch (undici's llhttp) are WebAssembly, and the expression workers are threads: the test
// processes hit it about once in four CI runs. Without the collector the code of a module stays
// until the process ends; the service compiles a handful of modules once.
setFlagsFromString('--no-wasm-code-gc');

async function main(): Promise<void> {
  const config = loadConfig();
  // Fastify's logger exists only once the app is built, seconds from now: the steps before it log
  // through pino directly, as the same lines on stdout (JSON, or pretty on a terminal: LOG_FORMAT).
  const early = prettyLogs(config.logFormat)
    ? pino({ level: config.logLevel }, pino.transport(PRETTY_TRANSPORT))
    : pino({ level: config.logLevel }, pino.destination({ dest: 1, sync: true }));
  const embeddedOnDisk = !config.databaseUrl || config.databaseUrl.startsWith('file://');
  const store = config.databaseUrl?.startsWith('postgres')
    ? 'PostgreSQL'
    : config.databaseUrl === 'memory://'
      ? 'embedded PGlite (in memory)'
      : `embedded PGlite in ${config.dataDir}`;

  // Before the database opens and the service modules load: their queries and calls are traced.
  const tracing = config.otlpEndpoint ? await startTracing({ endpoint: config.otlpEndpoint, serviceName: process.env.OTEL_SERVICE_NAME }) : null;
  if (tracing) early.info(`tracing: exporting spans over OTLP/HTTP to ${config.otlpEndpoint}/v1/traces`);

  early.info(`starting: opening the database (${store})`);
  let t = performance.now();
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await database.ping();
  early.info({ ms: msSince(t) }, `database opened in ${msSince(t)} ms`);
  const migrations = await database.migrate();
  early.info(
    { migrations },
    migrations.applied > 0
      ? `migrations applied: ${migrations.applied} (of ${migrations.total}) in ${migrations.ms} ms`
      : `migrations: all ${migrations.total} already applied (checked in ${migrations.ms} ms)`,
  );

  t = performance.now();
  // Loaded only now, so that the lines above come out before the second or two this takes.
  const [{ buildApp }, { newAdminToken, adminRoutes, writeChannel, localUrl }, { closeExpressionPool }, { passwordProblem }] = await Promise.all([
    import('./app.ts'),
    import('./modules/admin/index.ts'),
    import('./platform/expressions/pool.ts'),
    import('./modules/auth/index.ts'),
  ]);
  early.info({ ms: msSince(t) }, `service modules loaded in ${msSince(t)} ms`);
  t = performance.now();
  // Workers start once the server listens: /healthz answers however long resumed work takes.
  const app = await buildApp({ config, database, workers: 'deferred' });
  const { services } = app;
  const adminToken = embeddedOnDisk ? newAdminToken() : null;
  // While this process holds the embedded database the CLI cannot open it: it asks us instead.
  if (adminToken)
    await app.register(adminRoutes, { token: adminToken, auth: services.auth, orgs: services.orgs, apiKeys: services.apiKeys, plans: services.plans });
  await app.ready();
  app.log.info({ ms: msSince(t) }, `API built in ${msSince(t)} ms`);

  if (config.bootstrap && !(await services.auth.findByEmail(config.bootstrap.email))) {
    const problem = passwordProblem(config.bootstrap.password);
    if (problem) throw new ConfigError(`BOOTSTRAP_PASSWORD ${problem}`);
    const { user, organization } = await services.auth.createUserWithOrg({
      email: config.bootstrap.email,
      password: config.bootstrap.password,
      organizationName: config.bootstrap.org,
    });
    app.log.info({ userId: user.id, organizationId: organization.id }, `created owner ${user.email} of "${organization.name}"`);
  }

  let removeChannel = () => {};
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info(`${signal} received: finishing in-flight requests (at most ${config.shutdownGraceMs} ms)`);
    // A hung call or a long node must not keep the process alive: after the grace period it exits,
    // and work still in flight is taken over by a new claim once its lease expires.
    let phase = 'closing the server (requests in flight, then the workers)';
    setTimeout(() => {
      const waiting = app.workers?.stopping() ?? [];
      app.log.warn(
        { phase, waitingFor: waiting },
        `shutdown did not finish within SHUTDOWN_GRACE_MS (${config.shutdownGraceMs} ms) while ${phase}${waiting.length ? ` (workers still stopping: ${waiting.join(', ')})` : ''}: exiting; unfinished work is left to its lease`,
      );
      process.exit(1);
    }, config.shutdownGraceMs).unref();
    removeChannel();
    try {
      await app.close();
      phase = 'closing the expression workers';
      await closeExpressionPool();
      phase = 'closing the database (its pool waits for every connection in use)';
      await database.close();
      await tracing?.shutdown();
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  if (adminToken) {
    removeChannel = writeChannel(config.dataDir, { pid: process.pid, url: localUrl(app.server.address()), token: adminToken });
    process.on('exit', () => removeChannel());
  }
  app.log.info(
    { startupMs: Math.round(process.uptime() * 1000) },
    `listening on ${config.publicUrl}/api/v1 (store: ${store}); web panel at ${config.publicUrl}/, API reference at ${config.publicUrl}/docs; started in ${process.uptime().toFixed(1)} s`,
  );
  if (!closing) {
    const workers = app.startWorkers();
    app.log.info(`workers started: ${Object.keys(workers.loops).join(', ')}`);
  }
  if ((await services.orgs.countUsers()) === 0) {
    const register = config.allowSignup
      ? `, or create an account in the web panel (${config.publicUrl}/register) or over the API: POST ${config.publicUrl}/api/v1/auth/register with {"email","password","organizationName"} (ALLOW_SIGNUP is on)`
      : '';
    app.log.warn(
      'No user exists yet. Create the first owner (works while this server runs): ' +
        'npm run cli -- create-owner --email you@example.com --password "a long password" --org "My organization"' +
        `${register}; or set BOOTSTRAP_EMAIL / BOOTSTRAP_PASSWORD (and BOOTSTRAP_ORG) at start.`,
    );
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof EmbeddedDatabaseBusy) {
    console.error(`Configuration error: ${error.message}`);
  } else {
    console.error(error);
  }
  process.exit(1);
});
