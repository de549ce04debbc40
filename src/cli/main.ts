import { Command, InvalidArgumentError } from 'commander';
import pino from 'pino';
import { eq, or } from 'drizzle-orm';
import { ConfigError, loadConfig } from '../config.ts';
import { EmbeddedDatabaseBusy, openDatabase } from '../platform/db.ts';
import { systemClock } from '../platform/clock.ts';
import { AppError } from '../platform/errors.ts';
import { createServices } from '../services.ts';
import { SCOPES } from '../modules/api-keys/service.ts';
import { organizations } from '../modules/orgs/tables.ts';

async function withServices<T>(fn: (services: ReturnType<typeof createServices>) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  await database.migrate();
  try {
    return await fn(createServices({ config, database, db: database.db, clock: systemClock, log: pino({ level: 'silent' }) }));
  } finally {
    await database.close();
  }
}

function scopesOf(value: string): string[] {
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length) throw new InvalidArgumentError(`unknown scope(s) ${unknown.join(', ')}; allowed: ${SCOPES.join(', ')}`);
  return scopes;
}

const program = new Command('cli').description('Administration commands for the automation service (uses the same DATABASE_URL / DATA_DIR as the server)');

program.command('create-owner')
  .description('Create a user, an organization owned by them, and its "Default" project')
  .requiredOption('--email <email>', 'the owner\'s e-mail address')
  .requiredOption('--password <password>', 'at least 8 characters')
  .option('--org <name>', 'organization name', 'My organization')
  .option('--name <name>', 'the owner\'s display name')
  .action(async (opts: { email: string; password: string; org: string; name?: string }) => {
    if (opts.password.length < 8) throw new InvalidArgumentError('--password must be at least 8 characters');
    await withServices(async ({ auth }) => {
      const { user, organization } = await auth.createUserWithOrg({ email: opts.email, password: opts.password, name: opts.name, organizationName: opts.org });
      console.log(`Created owner ${user.email} (${user.id}) of organization "${organization.name}" (${organization.id}).`);
    });
  });

program.command('create-api-key')
  .description('Create an API key for an organization; the key is printed once')
  .requiredOption('--org <idOrName>', 'organization id or exact name')
  .requiredOption('--name <name>', 'a label for the key')
  .requiredOption('--scopes <scopes>', `comma-separated: ${SCOPES.join(', ')}`, scopesOf)
  .option('--project <projectId>', 'limit the key to one project')
  .action(async (opts: { org: string; name: string; scopes: string[]; project?: string }) => {
    await withServices(async ({ apiKeys, orgs, db }) => {
      const found = await db.select().from(organizations).where(or(eq(organizations.id, opts.org), eq(organizations.name, opts.org)));
      if (found.length === 0) throw new AppError(404, 'NOT_FOUND', `No organization with id or name "${opts.org}"`);
      if (found.length > 1) throw new AppError(409, 'CONFLICT', `Several organizations are named "${opts.org}"; pass the id`);
      const org = found[0]!;
      if (opts.project) await orgs.assertProject(org.id, opts.project);
      const key = await apiKeys.create(org.id, { name: opts.name, scopes: opts.scopes, projectId: opts.project });
      console.log(`API key ${key.id} for "${org.name}" with scopes ${key.scopes.join(', ')}:`);
      console.log(key.key);
      console.log('Store it now: it is not shown again.');
    });
  });

program.parseAsync().catch((error: unknown) => {
  if (error instanceof AppError || error instanceof ConfigError || error instanceof InvalidArgumentError || error instanceof EmbeddedDatabaseBusy) {
    console.error(`Error: ${error.message}`);
  } else {
    console.error(error);
  }
  process.exit(1);
});
