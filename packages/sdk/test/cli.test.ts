import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import { eventually } from '../../../test/helpers.ts';
import { Receiver } from '../../../test/receiver.ts';
import { createClient, type AutomationClient } from '../src/index.ts';
import { listeningApp } from './server.ts';

const BIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));

let t: TestApp;
let url: string;
let dir: string;
let sdk: AutomationClient;
let receiver: Receiver;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** Runs the `automation` bin as a user would: its own process, a config file in a temporary config dir. */
function automation(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: dirname(process.execPath), HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), NODE_NO_WARNINGS: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

const configFile = () => join(dir, 'config', 'automation', 'config.json');

beforeAll(async () => {
  ({ t, url } = await listeningApp({ WEBHOOK_RETRY_DELAYS_S: '0,0,0,0' }));
  dir = mkdtempSync(join(tmpdir(), 'automation-cli-'));
  sdk = createClient({ baseUrl: url, apiKey: t.orgA.apiKey, orgId: t.orgA.orgId });
  receiver = await new Receiver().start();
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('automation (the CLI)', () => {
  it('signs in and keeps the session in a config file only its owner can read', async () => {
    const login = await automation(['login', '--url', url, '--email', t.orgA.ownerEmail, '--json'], { AUTOMATION_PASSWORD: t.orgA.password });
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.json.user.email).toBe(t.orgA.ownerEmail);
    expect(login.json.orgId).toBe(t.orgA.orgId);
    expect(statSync(configFile()).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(configFile(), 'utf8'));
    expect(stored).toMatchObject({ url, email: t.orgA.ownerEmail, orgId: t.orgA.orgId });
    expect(stored.refreshToken).toBeTruthy();
    expect(JSON.stringify(stored)).not.toContain(t.orgA.password);

    const whoami = await automation(['whoami', '--json']);
    expect(whoami.json.user.email).toBe(t.orgA.ownerEmail);

    const wrong = await automation(['login', '--url', url, '--email', t.orgA.ownerEmail, '--password', 'not the password', '--json']);
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stderr).error.code).toBe('UNAUTHORIZED');
  });

  it('creates, lists and revokes API keys; AUTOMATION_API_KEY overrides the stored session', async () => {
    const created = await automation(['keys', 'create', '--name', 'ci', '--scopes', 'leads:read,workflows:read', '--json']);
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ name: 'ci', scopes: ['leads:read', 'workflows:read'] });
    const key: string = created.json.key;

    const listed = await automation(['keys', 'list', '--json']);
    const row = listed.json.find((k: { id: string }) => k.id === created.json.id);
    expect(row).toMatchObject({ name: 'ci', prefix: created.json.prefix });
    expect(row.key).toBeUndefined();

    const asKey = await automation(['orgs', 'list', '--json'], { AUTOMATION_API_KEY: key });
    expect(asKey.json.map((o: { id: string }) => o.id)).toEqual([t.orgA.orgId]);

    const text = await automation(['keys', 'list']);
    expect(text.stdout).toMatch(/id\s+name\s+prefix/);

    expect((await automation(['keys', 'revoke', created.json.id, '--json'])).json).toEqual({ revoked: created.json.id });
    expect((await automation(['keys', 'list', '--json'])).json.map((k: { id: string }) => k.id)).not.toContain(created.json.id);
    const refused = await automation(['orgs', 'list', '--json'], { AUTOMATION_API_KEY: key });
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr).error).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('exports a workflow to a file and imports it back', async () => {
    const original = await sdk.ops.createWorkflow({
      body: {
        name: 'Round trip',
        description: 'exported and imported',
        nodes: [
          { id: 'start', type: 'trigger.manual', position: { x: 0, y: 0 } },
          { id: 'set', type: 'data.set', name: 'Set it', params: { fields: { greeting: '{{ "hi " & $.name }}' } } },
        ],
        edges: [{ from: 'start', to: 'set' }],
      },
    });
    const file = join(dir, 'workflow.json');
    const exported = await automation(['workflows', 'export', original.id, '-o', file, '--json']);
    expect(exported.code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({
      format: 'automation.workflow/v1',
      name: 'Round trip',
      nodes: original.nodes,
      edges: original.edges,
    });

    const imported = await automation(['workflows', 'import', file, '--name', 'Round trip (copy)', '--json']);
    expect(imported.code).toBe(0);
    expect(imported.json.id).not.toBe(original.id);
    const copy = await sdk.ops.getWorkflow({ path: { id: imported.json.id } });
    expect(copy).toMatchObject({ name: 'Round trip (copy)', description: 'exported and imported', nodes: original.nodes, edges: original.edges });

    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ name: 'x', nodes: [{ id: 'a', type: 'no.such.type' }], edges: [] }));
    const bad = await automation(['workflows', 'import', join(dir, 'bad.json')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('WORKFLOW_INVALID');
  });

  it('runs a workflow and follows it to the end: exit 0 when it succeeds, 1 when it fails', async () => {
    const ok = await sdk.ops.createWorkflow({
      body: {
        name: 'Follow me',
        nodes: [
          { id: 'start', type: 'trigger.manual' },
          { id: 'a', type: 'data.set', name: 'First', params: { fields: { a: 1 } } },
          { id: 'b', type: 'data.set', params: { fields: { b: '{{ $.name }}' } } },
        ],
        edges: [
          { from: 'start', to: 'a' },
          { from: 'a', to: 'b' },
        ],
      },
    });
    const followed = await automation(['workflows', 'run', ok.id, '--input', '{"name":"Ada"}', '--follow']);
    expect(followed.code).toBe(0);
    expect(followed.stderr).toContain('✓ First');
    expect(followed.stderr).toMatch(/\[3\/3\] ✓ b/);
    expect(followed.stdout).toMatch(/Run run_\w+ SUCCEEDED/);

    const asJson = await automation(['workflows', 'run', ok.id, '--follow', '--json']);
    expect(asJson.code).toBe(0);
    expect(asJson.json).toMatchObject({ status: 'SUCCEEDED', workflowId: ok.id });
    expect(asJson.stderr).toBe('');

    receiver.behaviour = () => ({ status: 500, body: 'down' });
    const failing = await sdk.ops.createWorkflow({
      body: {
        name: 'Fail me',
        nodes: [
          { id: 'start', type: 'trigger.manual' },
          { id: 'call', type: 'utility.httpRequest', params: { method: 'GET', url: receiver.url('/down') } },
        ],
        edges: [{ from: 'start', to: 'call' }],
      },
    });
    const failed = await automation(['workflows', 'run', failing.id, '--follow', '--json']);
    expect(failed.code).toBe(1);
    expect(failed.json.status).toBe('FAILED');
    receiver.behaviour = () => ({ status: 200, body: 'ok' });
  });

  it('imports leads from a CSV in chunks and sums up created, merged and rejected rows', async () => {
    const tag = `csv${Date.now()}`;
    const csv = [
      'name,email,company,tags',
      `Ada,ada-${tag}@example.com,Acme,${tag}`,
      `Bob,bob-${tag}@example.com,Acme,${tag}`,
      `"Ada L.",ADA-${tag}@EXAMPLE.COM,"Acme, Inc.",${tag};vip`,
      '',
      `Cy,cy-${tag}@example.com,,${tag}`,
      `,,Only a company,${tag}`,
      `Di,di-${tag}@example.com,,${tag}`,
    ].join('\n');
    const file = join(dir, 'leads.csv');
    writeFileSync(file, csv);
    const result = await automation(['leads', 'import', file, '--chunk-size', '2', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({ rows: 6, created: 4, merged: 1, dryRun: false });
    expect(result.json.rejected).toHaveLength(1);
    expect(result.json.rejected[0].row).toBe(5);

    const ada = await sdk.ops.listLeads({ query: { q: `ada-${tag}` } });
    expect(ada.items).toHaveLength(1);
    expect(ada.items[0]).toMatchObject({ name: 'Ada L.', company: 'Acme, Inc.' });
    expect(ada.items[0]!.tags.sort()).toEqual([tag, 'vip'].sort());

    const text = await automation(['leads', 'import', file]);
    expect(text.stdout).toContain('Imported 6 rows: 0 created, 5 merged, 1 rejected');
    expect(text.stdout).toContain('row 5:');
  });

  // Store-independent on the client's side (chunks of 1,000) and ~10 s of inserts: once, on the embedded store's pass.
  it.skipIf(Boolean(process.env.TEST_DATABASE_URL))(
    'imports 10,000 rows in chunks with the right summary',
    async () => {
      const tag = `big${Date.now()}`;
      const rows = ['name,email,tags'];
      for (let i = 1; i <= 9_999; i++) rows.push(`Lead ${i},lead-${i}-${tag}@example.com,${tag}`);
      rows.push(`Lead 1 again,LEAD-1-${tag}@example.com,${tag}`);
      const file = join(dir, 'big.csv');
      writeFileSync(file, rows.join('\n') + '\n');
      const result = await automation(['leads', 'import', file, '--json'], { AUTOMATION_URL: url, AUTOMATION_API_KEY: t.orgA.apiKey });
      expect(result.stderr).toBe('');
      expect(result.json).toMatchObject({ rows: 10_000, created: 9_999, merged: 1, rejected: [] });
      expect((await sdk.ops.listLeads({ query: { tags: tag, pageSize: 1 } })).total).toBe(9_999);
    },
    120_000,
  );

  it('lists, tests and replays failed webhook deliveries since a time', async () => {
    receiver.behaviour = (req) => (req.url === '/cli-hook' ? { status: 500, body: 'down' } : { status: 200 });
    const endpoint = await sdk.ops.createWebhookEndpoint({ body: { url: receiver.url('/cli-hook'), events: ['lead.created'] } });
    const lead = await sdk.ops.createLead({ body: { name: 'Hooked', email: `hooked-${Date.now()}@example.com` } });
    const attempts = () =>
      receiver.received.filter((r) => r.url === '/cli-hook' && (r.json as { payload?: { lead?: { id: string } } })?.payload?.lead?.id === lead.id);
    // Five attempts (no waits between them here), all failed.
    await eventually(
      async () => {
        const failed = await sdk.ops.listWebhookEndpointDeliveries({ path: { id: endpoint.id }, query: { status: 'failed' } });
        return failed.items.length === 5;
      },
      20_000,
      100,
    );
    expect(attempts()).toHaveLength(5);

    const listed = await automation(['webhooks', 'list', '--json']);
    expect(listed.json.map((e: { id: string }) => e.id)).toContain(endpoint.id);

    receiver.behaviour = () => ({ status: 200, body: 'ok' });
    const dry = await automation(['webhooks', 'replay', endpoint.id, '--since', '10m', '--dry-run', '--json']);
    expect(dry.json).toMatchObject({ dryRun: true, count: 1 });

    const replay = await automation(['webhooks', 'replay', endpoint.id, '--since', '10m', '--json']);
    expect(replay.code).toBe(0);
    expect(replay.json).toMatchObject({ count: 1, errors: 0 });
    const envelopeId = replay.json.deliveries[0].eventId;
    await eventually(() => attempts().length === 6);
    expect((attempts()[5]!.json as { id: string }).id).toBe(envelopeId);
    // Delivered now: a second replay has nothing to send.
    await eventually(
      async () => (await sdk.ops.listWebhookEndpointDeliveries({ path: { id: endpoint.id }, query: { status: 'succeeded' } })).items.length === 1,
    );
    expect((await automation(['webhooks', 'replay', endpoint.id, '--since', '10m', '--json'])).json.count).toBe(0);

    const ping = await automation(['webhooks', 'test', endpoint.id, '--json']);
    expect(ping.json).toMatchObject({ ok: true, statusCode: 200 });
  });

  it('registers and invites users, requests a password reset, creates organizations', async () => {
    const email = `cli-user-${Date.now()}@example.com`;
    const registered = await automation(['users', 'register', '--email', email, '--password', 'a long enough password 42', '--org-name', 'CLI Org', '--json']);
    expect(registered.code).toBe(0);
    expect(registered.json).toMatchObject({ user: { email }, organization: { name: 'CLI Org' } });

    const invited = await automation(['users', 'invite', '--email', `invitee-${Date.now()}@example.com`, '--role', 'viewer', '--json']);
    expect(invited.code).toBe(0);
    expect(invited.json).toMatchObject({ role: 'viewer' });
    expect(invited.json.url).toContain('token');

    expect((await automation(['users', 'reset-password', '--email', email, '--json'])).json).toEqual({ requested: true, email });

    const org = await automation(['orgs', 'create', '--name', 'Second org', '--json']);
    expect(org.json.name).toBe('Second org');
    const orgs = await automation(['orgs', 'list', '--json']);
    expect(orgs.json.map((o: { id: string }) => o.id)).toEqual(expect.arrayContaining([t.orgA.orgId, org.json.id]));
    // The stored default organization is still the first one.
    expect((await automation(['keys', 'list', '--json'], { AUTOMATION_ORG: org.json.id })).json).toEqual([]);

    const badRole = await automation(['users', 'invite', '--email', 'x@example.com', '--role', 'emperor']);
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toContain('VALIDATION_ERROR');
  });

  it('stores an API key with config set and says clearly when nothing is configured', async () => {
    const key = await t.key(t.orgA.orgId, ['*']);
    const set = await automation(['config', 'set', '--url', url, '--api-key', key, '--json']);
    expect(set.json).toMatchObject({ url, session: false });
    expect(statSync(configFile()).mode & 0o777).toBe(0o600);
    expect((await automation(['whoami', '--json'])).json.organization.id).toBe(t.orgA.orgId);

    const empty = await automation(['orgs', 'list'], { XDG_CONFIG_HOME: join(dir, 'nothing-here') });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('No server URL');
  });
});
