import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, freePort } from './processes.ts';

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

interface LogLine { level: number; msg: string; [key: string]: unknown }

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
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => { running.delete(child); resolve(code); }));
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
    child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
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
  child.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  running.delete(child);
  return { code, stdout, stderr };
}

async function login(base: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
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
    const warning = server.logs.find((l) => l.msg.includes('No user exists yet'));
    expect(warning).toBeDefined();
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
    // While the server holds the embedded database, the CLI refuses to open it rather than write into the void.
    const busy = await cli(dir, ['create-owner', '--email', 'second@example.com', '--password', 'cli password 2']);
    expect(busy.code).not.toBe(0);
    expect(busy.stderr).toMatch(/in use by process \d+/);
    expect(await stop(server)).toBe(0);
    const after = await cli(dir, ['create-owner', '--email', 'second@example.com', '--password', 'cli password 2']);
    expect(after.code, after.stderr).toBe(0);
  });

  it('create-api-key refuses an unknown scope', async () => {
    const bad = await cli(dir, ['create-api-key', '--org', 'CLI Org', '--name', 'bad', '--scopes', 'leads:fly']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('unknown scope');
  });
});
