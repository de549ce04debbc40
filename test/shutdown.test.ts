import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, freePort } from './processes.ts';
import { eventually } from './helpers.ts';
import { embeddedDataDir } from './embedded-template.ts';

/**
 * Issue 10, item 5: SIGTERM ends the process within SHUTDOWN_GRACE_MS even while a request waits
 * on an outbound call that would take much longer; the call is abandoned.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EMAIL = 'owner@example.com';
const PASSWORD = 'correct horse battery staple';

let child: ChildProcess | null = null;
let silent: Server | null = null;
const sockets = new Set<Socket>();
let dir = '';

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((r) => child!.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  }
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('graceful shutdown is bounded', { timeout: 120_000 }, () => {
  it('SIGTERM with a webhook ping hung on a TLS handshake exits within SHUTDOWN_GRACE_MS', async () => {
    // A receiver that accepts the connection and never answers: the ping would wait its whole
    // 60 s time-out.
    let connections = 0;
    silent = createServer((socket) => {
      connections++;
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as { port: number }).port;

    dir = embeddedDataDir('svc-shutdown-');
    const port = await freePort();
    const GRACE_MS = 1500;
    child = spawn(process.execPath, ['src/main.ts'], {
      cwd: ROOT,
      env: childEnv({
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dir,
        BOOTSTRAP_EMAIL: EMAIL,
        BOOTSTRAP_PASSWORD: PASSWORD,
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
        WEBHOOK_TIMEOUT_MS: '60000',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr!.on('data', (c: Buffer) => {
      output += c.toString();
    });
    const exited = new Promise<number | null>((resolve) => child!.once('close', (code) => resolve(code)));
    await eventually(() => output.includes('listening on'), 60_000, 100);

    const base = `http://127.0.0.1:${port}/api/v1`;
    const login = await fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    });
    const token = ((await login.json()) as { tokens: { accessToken: string } }).tokens.accessToken;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const orgs = (await (await fetch(`${base}/orgs`, { headers })).json()) as { id: string }[] | { items: { id: string }[] };
    const orgId = (Array.isArray(orgs) ? orgs : orgs.items)[0]!.id;
    const created = await fetch(`${base}/orgs/${orgId}/webhook-endpoints`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `https://127.0.0.1:${silentPort}/hook`, events: ['*'] }),
    });
    expect(created.status).toBe(201);
    const endpointId = ((await created.json()) as { id: string }).id;

    // The ping is in flight (connected, handshake pending) when SIGTERM arrives.
    const ping = fetch(`${base}/orgs/${orgId}/webhook-endpoints/${endpointId}/test`, {
      method: 'POST',
      headers: { authorization: headers.authorization },
    }).catch(() => null);
    await eventually(() => connections > 0, 10_000);
    const started = Date.now();
    child.kill('SIGTERM');
    const code = await exited;
    const elapsed = Date.now() - started;
    await ping;

    expect(elapsed).toBeGreaterThanOrEqual(GRACE_MS - 100);
    expect(elapsed).toBeLessThan(GRACE_MS + 3000);
    expect(code).toBe(1);
    expect(output).toContain('SHUTDOWN_GRACE_MS');
  });
});
