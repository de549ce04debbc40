import { Command, InvalidArgumentError } from 'commander';
import pino from 'pino';
import { ConfigError, loadConfig } from '../config.ts';
import { EmbeddedDatabaseBusy, openDatabase } from '../platform/db.ts';
import { systemClock } from '../platform/clock.ts';
import { AppError } from '../platform/errors.ts';
import { createServices, type Services } from '../services.ts';
import { SCOPES } from '../modules/api-keys/index.ts';
import { passwordProblem } from '../modules/auth/index.ts';
import { readChannel, type AdminChannel } from '../modules/admin/index.ts';
import { createApiKey, createOwner, setPlan } from '../modules/admin/index.ts';

/**
 * Runs a command on the database itself; when a running server holds the embedded database, asks
 * that server to run it (through its admin routes and the token it left in DATA_DIR/admin.json).
 */
async function run<T>(local: (services: Services) => Promise<T>, remote: (server: AdminChannel) => Promise<T>): Promise<T> {
  const config = loadConfig();
  let database;
  try {
    database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  } catch (error) {
    const server = error instanceof EmbeddedDatabaseBusy ? readChannel(config.dataDir, error.owner) : null;
    if (!server) throw error;
    return remote(server);
  }
  try {
    await database.migrate();
    return await local(createServices({ config, database, db: database.db, clock: systemClock, log: pino({ level: 'silent' }) }));
  } finally {
    await database.close();
  }
}

/** One admin request to the running server; its error body becomes the CLI's error. */
async function ask<T>(server: AdminChannel, path: string, body: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (error) {
    throw new AppError(
      503,
      'UNAVAILABLE',
      `The server (process ${server.pid}) holds the embedded database but does not answer at ${server.url}: ${(error as Error).message}`,
    );
  }
  const json = (await res.json().catch(() => ({}))) as { message?: string; code?: string };
  if (!res.ok) throw new AppError(res.status, json.code ?? 'ERROR', json.message ?? `the server answered ${res.status}`);
  return json as T;
}

const via = (server: AdminChannel) => console.error(`(the server, process ${server.pid}, holds the embedded database: done through it)`);

function scopesOf(value: string): string[] {
  const scopes = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length) throw new InvalidArgumentError(`unknown scope(s) ${unknown.join(', ')}; allowed: ${SCOPES.join(', ')}`);
  return scopes;
}

const program = new Command('cli').description(
  'Administration commands for the automation service (uses the same DATABASE_URL / DATA_DIR as the server; while the server runs on the embedded database, they go through it)',
);

program
  .command('create-owner')
  .description('Create a user, an organization owned by them, and its "Default" project')
  .requiredOption('--email <email>', "the owner's e-mail address")
  .requiredOption('--password <password>', 'at least 8 characters, not all blank, not a common password')
  .option('--org <name>', 'organization name', 'My organization')
  .option('--name <name>', "the owner's display name")
  .action(async (opts: { email: string; password: string; org: string; name?: string }) => {
    const problem = passwordProblem(opts.password);
    if (problem) throw new InvalidArgumentError(`--password ${problem}`);
    const input = { email: opts.email, password: opts.password, name: opts.name, organizationName: opts.org };
    const { user, organization } = await run(
      (services) => createOwner(services, input),
      (server) => {
        via(server);
        return ask<Awaited<ReturnType<typeof createOwner>>>(server, '/_admin/owners', input);
      },
    );
    console.log(`Created owner ${user.email} (${user.id}) of organization "${organization.name}" (${organization.id}).`);
  });

program
  .command('create-api-key')
  .description('Create an API key for an organization; the key is printed once')
  .requiredOption('--org <idOrName>', 'organization id or exact name')
  .requiredOption('--name <name>', 'a label for the key')
  .requiredOption('--scopes <scopes>', `comma-separated: ${SCOPES.join(', ')}`, scopesOf)
  .option('--project <projectId>', 'limit the key to one project')
  .action(async (opts: { org: string; name: string; scopes: string[]; project?: string }) => {
    const input = { org: opts.org, name: opts.name, scopes: opts.scopes, projectId: opts.project };
    const key = await run(
      (services) => createApiKey(services, input),
      (server) => {
        via(server);
        return ask<Awaited<ReturnType<typeof createApiKey>>>(server, '/_admin/api-keys', input);
      },
    );
    console.log(`API key ${key.id} for "${key.organization.name}" with scopes ${key.scopes.join(', ')}:`);
    console.log(key.key);
    console.log('Store it now: it is not shown again.');
  });

program
  .command('set-plan')
  .description('Assign one of the plans in PLANS to an organization (CONTRACT §12); it applies at once')
  .requiredOption('--org <idOrName>', 'organization id or exact name')
  .requiredOption('--plan <name>', 'a plan named in PLANS')
  .action(async (opts: { org: string; plan: string }) => {
    const input = { org: opts.org, plan: opts.plan };
    const result = await run(
      (services) => setPlan(services, input),
      (server) => {
        via(server);
        return ask<Awaited<ReturnType<typeof setPlan>>>(server, '/_admin/plans', input);
      },
    );
    console.log(`Organization "${result.organization.name}" (${result.organization.id}) is now on plan "${result.plan}".`);
  });

program.parseAsync().catch((error: unknown) => {
  if (error instanceof AppError || error instanceof ConfigError || error instanceof InvalidArgumentError || error instanceof EmbeddedDatabaseBusy) {
    console.error(`Error: ${error.message}`);
  } else {
    console.error(error);
  }
  process.exit(1);
});
