import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, freePort } from './processes.ts';
import { eventually } from './helpers.ts';

/** The service as a user runs it: `node src/main.ts` and `npm run cli -- …`, as child processes on a temporary DATA_DIR. */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dirs: string[] = [];
const running = new Set<ChildProcess>();

afterAll(async () => {
  for (const child of running) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }
  running.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-startup-'));
  dirs.push(dir);
  return dir;
}

const env = childEnv;

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

interface Server {
  child: ChildProcess;
  base: string;
  logs: LogLine[];
  /** Resolves with the exit code once the process ended. */
  exited: Promise<number | null>;
}

async function startServer(dir: string, extra: Record<string, string> = {}): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: ROOT,
    env: env({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, ...extra }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const logs: LogLine[] = [];
  let stderr = '';
  // 'close' comes after the last output line, unlike 'exit'.
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const listening = new Promise<void>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        try {
          const entry = JSON.parse(line) as LogLine;
          logs.push(entry);
          if (typeof entry.msg === 'string' && entry.msg.startsWith('listening on')) resolve();
        } catch {
          logs.push({ level: 30, msg: line });
        }
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    void exited.then((code) => reject(new Error(`server exited with ${code} before listening:\n${stderr}\n${logs.map((l) => l.msg).join('\n')}`)));
  });
  await listening;
  return { child, base: `http://127.0.0.1:${port}`, logs, exited };
}

async function stop(server: Server, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  server.child.kill(signal);
  return server.exited;
}

/** `npm run cli -- …` exactly as the README says; returns its output. */
async function cli(dir: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('npm', ['run', 'cli', '--', ...args], { cwd: ROOT, env: env({ DATA_DIR: dir }), stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  running.delete(child);
  return { code, stdout, stderr };
}

async function login(base: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { tokens: { accessToken: string } }).tokens.accessToken;
}

async function firstOrg(base: string, token: string): Promise<{ id: string; name: string }> {
  const res = await fetch(`${base}/api/v1/orgs`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { id: string; name: string }[] | { items: { id: string; name: string }[] };
  const list = Array.isArray(body) ? body : body.items;
  expect(list).toHaveLength(1);
  return list[0]!;
}

const messages = (server: Server) => server.logs.map((l) => l.msg).join('\n');

// The tests of a describe run in order and share one DATA_DIR: every process start costs module
// loading and, on a fresh DATA_DIR, PGlite's initdb, so they are spent sparingly. A few seconds
// each alone; the generous limit only matters on a loaded machine.
const slow = { timeout: 120_000 };

describe('npm start with BOOTSTRAP_*', slow, () => {
  const dir = dataDir();
  const bootstrap = { BOOTSTRAP_EMAIL: 'boss@example.com', BOOTSTRAP_PASSWORD: 'bootstrap password', BOOTSTRAP_ORG: 'Bootstrapped Inc' };
  let server: Server;
  let orgId: string;
  let leadId: string;

  it('creates the owner, its organization and project, and logs the base URL and /docs', async () => {
    server = await startServer(dir, bootstrap);
    const port = new URL(server.base).port;
    expect(messages(server)).toContain('created owner boss@example.com of "Bootstrapped Inc"');
    expect(messages(server)).toContain(`http://localhost:${port}/api/v1`);
    expect(messages(server)).toContain(`http://localhost:${port}/docs`);
    expect(messages(server)).not.toContain('No user exists yet');

    const token = await login(server.base, bootstrap.BOOTSTRAP_EMAIL, bootstrap.BOOTSTRAP_PASSWORD);
    const org = await firstOrg(server.base, token);
    expect(org.name).toBe('Bootstrapped Inc');
    orgId = org.id;
    const projects = await fetch(`${server.base}/api/v1/orgs/${orgId}/projects`, { headers: { authorization: `Bearer ${token}` } });
    expect(JSON.stringify(await projects.json())).toContain('"Default"');
    expect((await fetch(`${server.base}/docs/`)).status).toBe(200);

    const created = await fetch(`${server.base}/api/v1/orgs/${orgId}/leads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Durable Dora', email: 'dora@example.com', tags: ['kept'] }),
    });
    expect(created.status).toBe(201);
    leadId = ((await created.json()) as { id: string }).id;
  });

  it('exits 0 on SIGTERM and stops listening', async () => {
    expect(await stop(server, 'SIGTERM')).toBe(0);
    expect(messages(server)).toContain('SIGTERM received');
    await expect(fetch(`${server.base}/healthz`)).rejects.toThrow();
  });

  it('keeps the embedded data across the restart, and does not create the owner twice', async () => {
    server = await startServer(dir, bootstrap);
    expect(messages(server)).not.toContain('created owner');
    const token = await login(server.base, bootstrap.BOOTSTRAP_EMAIL, bootstrap.BOOTSTRAP_PASSWORD);
    expect((await firstOrg(server.base, token)).id).toBe(orgId);
    const read = await fetch(`${server.base}/api/v1/orgs/${orgId}/leads/${leadId}`, { headers: { authorization: `Bearer ${token}` } });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: leadId, name: 'Durable Dora', email: 'dora@example.com', tags: ['kept'] });
    expect(await stop(server)).toBe(0);
  });
});

describe('first owner from the command line', slow, () => {
  const dir = dataDir();

  it('without any user, the log says how to create one; SIGINT exits 0', async () => {
    const server = await startServer(dir);
    // Logged once the server listens and has counted its users.
    const warning = await eventually(() => server.logs.find((l) => l.msg.includes('No user exists yet')));
    expect(warning!.msg).toContain('BOOTSTRAP_EMAIL');
    expect(warning!.msg).toContain('npm run cli -- create-owner --email');
    expect(await stop(server, 'SIGINT')).toBe(0);
    expect(messages(server)).toContain('SIGINT received');
  });

  it('create-owner, then create-api-key prints a key once that works against the server with its scopes', async () => {
    const owner = await cli(dir, ['create-owner', '--email', 'cli@example.com', '--password', 'cli password 1', '--org', 'CLI Org']);
    expect(owner.code, owner.stderr).toBe(0);
    expect(owner.stdout).toMatch(/Created owner cli@example\.com \(usr_\w+\) of organization "CLI Org" \(org_\w+\)/);
    const orgId = /\((org_\w+)\)/.exec(owner.stdout)![1]!;

    const created = await cli(dir, ['create-api-key', '--org', 'CLI Org', '--name', 'reader', '--scopes', 'leads:read']);
    expect(created.code, created.stderr).toBe(0);
    const keys = created.stdout.match(/svc_[\w-]+/g) ?? [];
    expect(keys).toHaveLength(1);
    const key = keys[0]!;
    expect(created.stdout).toContain('not shown again');

    const server = await startServer(dir);
    expect(messages(server)).not.toContain('No user exists yet');
    const headers = { 'x-api-key': key, 'content-type': 'application/json' };
    const list = await fetch(`${server.base}/api/v1/orgs/${orgId}/leads`, { headers });
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({ items: [], total: 0 });
    const write = await fetch(`${server.base}/api/v1/orgs/${orgId}/leads`, { method: 'POST', headers, body: JSON.stringify({ name: 'Nope' }) });
    expect(write.status).toBe(403);
    expect(await write.json()).toMatchObject({ code: 'INSUFFICIENT_SCOPE' });
    // The key is stored only as a hash: the listing shows its prefix, never the key.
    const token = await login(server.base, 'cli@example.com', 'cli password 1');
    const listed = await (await fetch(`${server.base}/api/v1/orgs/${orgId}/api-keys`, { headers: { authorization: `Bearer ${token}` } })).text();
    expect(listed).toContain('"reader"');
    expect(listed).not.toContain(key);
    // While the server holds the embedded database, the CLI does not open it (its writes would be
    // lost): the server runs the command for it.
    const through = await cli(dir, ['create-owner', '--email', 'second@example.com', '--password', 'cli password 2']);
    expect(through.code, through.stderr).toBe(0);
    expect(through.stderr).toContain(`process ${server.child.pid}, holds the embedded database: done through it`);
    await login(server.base, 'second@example.com', 'cli password 2');
    expect(await stop(server)).toBe(0);
    const after = await cli(dir, ['create-owner', '--email', 'third@example.com', '--password', 'cli password 3']);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).not.toContain('done through it');
  });

  it('create-api-key refuses an unknown scope', async () => {
    const bad = await cli(dir, ['create-api-key', '--org', 'CLI Org', '--name', 'bad', '--scopes', 'leads:fly']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('unknown scope');
  });
});

describe('npm start logs its steps; the first owner while it runs', slow, () => {
  const dir = dataDir();
  const migrationCount = (JSON.parse(readFileSync(join(ROOT, 'migrations/meta/_journal.json'), 'utf8')) as { entries: unknown[] }).entries.length;
  let server: Server;

  it('logs opening the database, the migrations applied with their count and time, the modules, listening, then the workers', async () => {
    server = await startServer(dir);
    await eventually(() => server.logs.find((l) => l.msg.includes('No user exists yet')) && server.logs.find((l) => l.msg.startsWith('workers started')));
    const steps = server.logs.map((l) => l.msg);
    const at = (pattern: RegExp) => steps.findIndex((m) => pattern.test(m));
    const order = [
      at(/^starting: opening the database \(embedded PGlite in /),
      at(/^database opened in \d+ ms$/),
      at(new RegExp(`^migrations applied: ${migrationCount} \\(of ${migrationCount}\\) in \\d+ ms$`)),
      at(/^service modules loaded in \d+ ms$/),
      at(/^API built in \d+ ms$/),
      at(/^listening on http:\/\/localhost:\d+\/api\/v1 .*; started in \d+\.\d s$/),
      // Stored work resumes only once the server answers.
      at(/^workers started: dispatcher, webhooks, .*runs/),
    ];
    expect(
      order.every((i) => i >= 0),
      steps.join('\n'),
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const migrated = server.logs.find((l) => l.msg.startsWith('migrations applied'))!;
    expect(migrated.migrations).toMatchObject({ applied: migrationCount, total: migrationCount, ms: expect.any(Number) });
    // In development the warning also points at sign-up over the API.
    const warning = server.logs.find((l) => l.msg.includes('No user exists yet'))!;
    expect(warning.msg).toContain(`POST http://localhost:${new URL(server.base).port}/api/v1/auth/register`);
    expect(warning.msg).toContain('works while this server runs');
  });

  it('create-owner and create-api-key work while the server holds the embedded database; the owner logs in over HTTP', async () => {
    const owner = await cli(dir, ['create-owner', '--email', 'live@example.com', '--password', 'live password 1', '--org', 'Live Org']);
    expect(owner.code, owner.stderr).toBe(0);
    expect(owner.stdout).toMatch(/Created owner live@example\.com \(usr_\w+\) of organization "Live Org" \(org_\w+\)/);
    const token = await login(server.base, 'live@example.com', 'live password 1');
    const org = await firstOrg(server.base, token);
    expect(org.name).toBe('Live Org');

    const created = await cli(dir, ['create-api-key', '--org', 'Live Org', '--name', 'writer', '--scopes', 'leads:read,leads:write']);
    expect(created.code, created.stderr).toBe(0);
    const key = /svc_[\w-]+/.exec(created.stdout)![0];
    const lead = await fetch(`${server.base}/api/v1/orgs/${org.id}/leads`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Live Lead' }),
    });
    expect(lead.status).toBe(201);

    // The same errors as on the database itself.
    const twice = await cli(dir, ['create-owner', '--email', 'live@example.com', '--password', 'live password 1']);
    expect(twice.code).not.toBe(0);
    expect(twice.stderr).toContain('Error: An account with this email already exists');
    const unknownOrg = await cli(dir, ['create-api-key', '--org', 'No Such Org', '--name', 'x', '--scopes', 'leads:read']);
    expect(unknownOrg.code).not.toBe(0);
    expect(unknownOrg.stderr).toContain('Error: No organization with id or name "No Such Org"');
  });

  it('the admin channel is a 0600 file in DATA_DIR; its routes refuse any other token and are not in the OpenAPI document', async () => {
    const file = join(dir, 'admin.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const channel = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; url: string; token: string };
    expect(channel.pid).toBe(server.child.pid);
    expect(channel.token.length).toBeGreaterThanOrEqual(43);
    const body = JSON.stringify({ email: 'intruder@example.com', password: 'intruder password', organizationName: 'X' });
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${channel.token}x`]) {
      const res = await fetch(`${server.base}/_admin/owners`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body,
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED' });
    }
    const spec = await (await fetch(`${server.base}/api/v1/openapi.json`)).text();
    expect(spec).not.toContain('_admin');
  });

  it('a second server on the same data directory is refused; after a stop the channel is gone and the restart applies no migration', async () => {
    const port = await freePort();
    const second = spawn(process.execPath, ['src/main.ts'], { cwd: ROOT, env: env({ PORT: String(port), DATA_DIR: dir }), stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(second);
    let stderr = '';
    second.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const code = await new Promise<number | null>((resolve) => second.once('close', resolve));
    running.delete(second);
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`in use by process ${server.child.pid}`));

    expect(await stop(server)).toBe(0);
    expect(existsSync(join(dir, 'admin.json'))).toBe(false);
    server = await startServer(dir);
    expect(messages(server)).toContain(`migrations: all ${migrationCount} already applied`);
    expect(messages(server)).not.toContain('No user exists yet');
    expect(await stop(server)).toBe(0);
  });
});

describe('logs on a terminal', slow, () => {
  it('are readable lines when standard output is a terminal (a real pseudo-terminal, through script(1)), JSON lines otherwise', async () => {
    const port = await freePort();
    // script(1) runs the server on a pseudo-terminal of its own: process.stdout.isTTY is true there.
    const child = spawn('script', ['-qefc', `${JSON.stringify(process.execPath)} src/main.ts`, '/dev/null'], {
      cwd: ROOT,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: env({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir(), NO_COLOR: '1' }),
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    try {
      await eventually(() => output.includes('listening on'), 90_000);
      const lines = output
        .replace(/\x1b\[[0-9;]*m/g, '')
        .split(/\r?\n/)
        .filter((line) => line.trim() !== '');
      expect(
        lines.some((line) => /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: .*listening on http:\/\/localhost:\d+\/api\/v1/.test(line)),
        lines.join('\n'),
      ).toBe(true);
      expect(lines.some((line) => /INFO: starting: opening the database/.test(line))).toBe(true);
      expect(lines.filter((line) => line.trimStart().startsWith('{"level"'))).toEqual([]);
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    // The same server with its output in a pipe (every other test here) logs JSON lines.
  });
});
