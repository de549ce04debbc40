import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { EmbeddedDatabaseBusy, openDatabase } from './platform/db.ts';

async function main(): Promise<void> {
  const config = loadConfig();
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await database.migrate();
  const app = await buildApp({ config, database });
  const { services } = app;

  if (config.bootstrap && !(await services.auth.findByEmail(config.bootstrap.email))) {
    const { user, organization } = await services.auth.createUserWithOrg({
      email: config.bootstrap.email,
      password: config.bootstrap.password,
      organizationName: config.bootstrap.org,
    });
    app.log.info({ userId: user.id, organizationId: organization.id }, `created owner ${user.email} of "${organization.name}"`);
  }

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info(`${signal} received: finishing in-flight requests`);
    try {
      await app.close();
      await database.close();
      process.exit(0);
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  const store = database.kind === 'postgres' ? 'PostgreSQL' : config.databaseUrl === 'memory://' ? 'embedded PGlite (in memory)' : `embedded PGlite in ${config.dataDir}`;
  app.log.info(`listening on ${config.publicUrl}/api/v1 (store: ${store}); API reference at ${config.publicUrl}/docs`);
  if ((await services.orgs.countUsers()) === 0) {
    app.log.warn(
      'No user exists yet. Create the first owner with BOOTSTRAP_EMAIL / BOOTSTRAP_PASSWORD (and BOOTSTRAP_ORG) at start, ' +
      'or: npm run cli -- create-owner --email you@example.com --password "a long password" --org "My organization"',
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
