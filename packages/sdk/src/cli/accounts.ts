import type { Command } from 'commander';
import { createClient } from '../client.ts';
import type { operations } from '../generated/openapi.ts';
import { readConfig, writeConfig } from './config.ts';
import { CliError, clientFor, configPath, globals, orgOf, output, readSecret, settings, table, updateConfig } from './context.ts';

type Scope = operations['createApiKey']['requestBody']['content']['application/json']['scopes'][number];

const mask = (secret: string | undefined) => (secret ? `${secret.slice(0, 8)}…` : undefined);

/** Sign-in, config, users, organizations and API keys. */
export function registerAccountCommands(cli: Command): void {
  cli
    .command('login')
    .description('sign in with e-mail and password; stores a refresh token in the config file (mode 0600)')
    .option('--email <email>', 'your e-mail')
    .option('--password <password>', 'your password (else AUTOMATION_PASSWORD, else a prompt)')
    .action(async (opts: { email?: string; password?: string }, command: Command) => {
      const g = globals(command);
      const { url } = settings(g);
      if (!url) throw new CliError('Give the server: automation login --url https://… --email …');
      const email = opts.email ?? readConfig().email;
      if (!email) throw new CliError('Give --email');
      const password = opts.password ?? process.env.AUTOMATION_PASSWORD ?? (await readSecret(`Password for ${email}: `));
      if (!password) throw new CliError('No password given');
      const client = createClient({ baseUrl: url });
      const login = await client.ops.login({ body: { email, password } });
      const signedIn = createClient({ baseUrl: url, accessToken: login.tokens.accessToken });
      const me = await signedIn.ops.getCurrentUser();
      const orgId = g.org ?? me.memberships[0]?.organizationId;
      writeConfig({ url, email, refreshToken: login.tokens.refreshToken, accessToken: login.tokens.accessToken, orgId });
      output(
        g,
        { url, user: login.user, orgId: orgId ?? null, configPath: configPath() },
        () => `Signed in to ${url} as ${email}${orgId ? `; organization ${orgId}` : ''} (credentials in ${configPath()})`,
      );
    });

  cli
    .command('logout')
    .description('sign out: revoke the stored session and forget it')
    .action(async (_opts: unknown, command: Command) => {
      const g = globals(command);
      const stored = readConfig();
      if (stored.refreshToken && stored.url) {
        await createClient({ baseUrl: stored.url })
          .ops.logout({ body: { refreshToken: stored.refreshToken } })
          .catch(() => undefined);
      }
      writeConfig({ ...stored, refreshToken: undefined, accessToken: undefined });
      output(g, { ok: true }, () => 'Signed out');
    });

  cli
    .command('whoami')
    .description('who the stored credentials are, and the organization commands act on')
    .action(async (_opts: unknown, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const { apiKey } = settings(g);
      if (apiKey) {
        const orgs = await client.ops.listOrgs();
        output(
          g,
          { apiKey: mask(apiKey), organization: orgs[0] ?? null, url: client.baseUrl },
          () => `API key ${mask(apiKey)} of organization ${orgs[0]?.id} (${orgs[0]?.name}) on ${client.baseUrl}`,
        );
        return;
      }
      const me = await client.ops.getCurrentUser();
      const orgId = await orgOf(client);
      output(
        g,
        { user: me.user, memberships: me.memberships, orgId, url: client.baseUrl },
        () => `${me.user.email} on ${client.baseUrl}; organization ${orgId}`,
      );
    });

  const config = cli.command('config').description('the stored server URL and credentials');
  config
    .command('set')
    .description('store the server URL (--url), an API key (--api-key) and/or the default organization (--org)')
    .action((_opts: unknown, command: Command) => {
      const g = globals(command);
      // --url, --api-key and --org are the global options; only what is on the command line is stored.
      const root = command.parent!.parent!;
      const given = (name: string) => (root.getOptionValueSource(name) === 'cli' ? (root.getOptionValue(name) as string) : undefined);
      const url = given('url');
      const apiKey = given('apiKey');
      const org = given('org');
      if (!url && !apiKey && !org) throw new CliError('Give --url, --api-key and/or --org');
      const next = updateConfig({
        ...(url ? { url } : {}),
        ...(apiKey ? { apiKey, refreshToken: undefined, accessToken: undefined } : {}),
        ...(org ? { orgId: org } : {}),
      });
      output(
        g,
        { url: next.url ?? null, orgId: next.orgId ?? null, apiKey: mask(next.apiKey) ?? null, session: Boolean(next.refreshToken), configPath: configPath() },
        () => `Saved to ${configPath()}`,
      );
    });
  config
    .command('show')
    .description('print the stored settings (secrets shortened)')
    .action((_opts: unknown, command: Command) => {
      const g = globals(command);
      const stored = readConfig();
      const shown = {
        url: stored.url ?? null,
        orgId: stored.orgId ?? null,
        email: stored.email ?? null,
        apiKey: mask(stored.apiKey) ?? null,
        session: Boolean(stored.refreshToken),
        configPath: configPath(),
      };
      output(g, shown, () => table([['setting', 'value'], ...Object.entries(shown).map(([k, v]) => [k, String(v ?? '')])]));
    });

  // ---- users ----
  const users = cli.command('users').description('users: register, invite, list members, reset a password');
  users
    .command('register')
    .description('create a user with a new organization (POST /auth/register; needs signup enabled on the server)')
    .requiredOption('--email <email>', 'e-mail')
    .option('--password <password>', 'password (else a prompt)')
    .option('--name <name>', 'full name')
    .option('--org-name <name>', 'name of the new organization')
    .action(async (opts: { email: string; password?: string; name?: string; orgName?: string }, command: Command) => {
      const g = globals(command);
      const { url } = settings(g);
      if (!url) throw new CliError('No server URL: give --url or run `automation config set --url …`');
      const password = opts.password ?? process.env.AUTOMATION_PASSWORD ?? (await readSecret(`Password for ${opts.email}: `));
      const result = await createClient({ baseUrl: url }).ops.register({
        body: { email: opts.email, password, name: opts.name, organizationName: opts.orgName },
      });
      output(
        g,
        { user: result.user, organization: result.organization },
        () => `Registered ${result.user.email}; organization ${result.organization.id} (${result.organization.name})`,
      );
    });
  users
    .command('invite')
    .description('invite someone to the organization (a single-use link, valid 7 days; e-mailed when the server has SMTP)')
    .requiredOption('--email <email>', 'e-mail')
    .option('--role <role>', 'owner, admin, member or viewer', 'member')
    .action(async (opts: { email: string; role: string }, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const invitation = await client.ops.createInvitation({ path: { orgId: await orgOf(client) }, body: { email: opts.email, role: opts.role as 'member' } });
      output(g, invitation, () => [`Invited ${invitation.email} as ${invitation.role} (expires ${invitation.expiresAt})`, `Link: ${invitation.url}`]);
    });
  users
    .command('list')
    .description('members of the organization')
    .action(async (_opts: unknown, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const members = await client.ops.listMembers({ path: { orgId: await orgOf(client) } });
      output(g, members, () => table([['user', 'email', 'name', 'role'], ...members.map((m) => [m.userId, m.email, m.name ?? '', m.role])]));
    });
  users
    .command('reset-password')
    .description('send a password-reset link to an e-mail address (answered 202 whether or not it exists)')
    .requiredOption('--email <email>', 'e-mail')
    .action(async (opts: { email: string }, command: Command) => {
      const g = globals(command);
      const client = clientFor(g, { auth: false });
      await client.ops.requestPasswordReset({ body: { email: opts.email } });
      output(
        g,
        { requested: true, email: opts.email },
        () => `If ${opts.email} has an account, a reset link is on its way (the server e-mails it when SMTP is configured)`,
      );
    });

  // ---- organizations ----
  const orgs = cli.command('orgs').description('organizations');
  orgs
    .command('list')
    .description('the organizations you belong to (an API key: its own)')
    .action(async (_opts: unknown, command: Command) => {
      const g = globals(command);
      const list = await clientFor(g).ops.listOrgs();
      const current = settings(g).orgId;
      output(g, list, () => table([['', 'id', 'name', 'created'], ...list.map((o) => [o.id === current ? '*' : '', o.id, o.name, o.createdAt])]));
    });
  orgs
    .command('create')
    .description('create an organization (you become its owner; a "Default" project comes with it)')
    .requiredOption('--name <name>', 'its name')
    .option('--use', 'make it the default organization of later commands')
    .action(async (opts: { name: string; use?: boolean }, command: Command) => {
      const g = globals(command);
      const org = await clientFor(g).ops.createOrg({ body: { name: opts.name } });
      if (opts.use) updateConfig({ orgId: org.id });
      output(g, org, () => `Created organization ${org.id} (${org.name})${opts.use ? '; now the default' : ''}`);
    });
  orgs
    .command('use')
    .description('make an organization the default of later commands')
    .argument('<orgId>')
    .action(async (orgId: string, _opts: unknown, command: Command) => {
      const g = globals(command);
      const org = await clientFor(g).ops.getOrg({ path: { orgId } });
      updateConfig({ orgId: org.id });
      output(g, org, () => `Now using ${org.id} (${org.name})`);
    });

  // ---- API keys ----
  const keys = cli.command('keys').alias('api-keys').description('API keys of the organization');
  keys
    .command('create')
    .description('create an API key; its secret is shown once')
    .requiredOption('--name <name>', 'a name to recognise it by')
    .option('--scopes <scopes>', 'comma-separated scopes (leads:read, workflows:write, …, or *)', '*')
    .option('--project <projectId>', 'confine the key to one project')
    .action(async (opts: { name: string; scopes: string; project?: string }, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const scopes = opts.scopes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean) as Scope[];
      const key = await client.ops.createApiKey({
        path: { orgId: await orgOf(client) },
        body: { name: opts.name, scopes, ...(opts.project ? { projectId: opts.project } : {}) },
      });
      output(g, key, () => [`Created API key ${key.id} (${key.name}; scopes ${key.scopes.join(', ')})`, `Key (shown once): ${key.key}`]);
    });
  keys
    .command('list')
    .description('the API keys (no secrets)')
    .action(async (_opts: unknown, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      const list = await client.ops.listApiKeys({ path: { orgId: await orgOf(client) } });
      output(g, list, () =>
        list.length
          ? table([
              ['id', 'name', 'prefix', 'scopes', 'project', 'last used'],
              ...list.map((k) => [k.id, k.name, k.prefix, k.scopes.join(','), k.projectId ?? '', k.lastUsedAt ?? 'never']),
            ])
          : 'No API keys',
      );
    });
  keys
    .command('revoke')
    .description('revoke an API key (it stops working at once)')
    .argument('<keyId>')
    .action(async (keyId: string, _opts: unknown, command: Command) => {
      const g = globals(command);
      const client = clientFor(g);
      await client.ops.deleteApiKey({ path: { orgId: await orgOf(client), id: keyId } });
      output(g, { revoked: keyId }, () => `Revoked ${keyId}`);
    });
}
