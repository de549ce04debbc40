import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from './helpers.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A port nothing listens on right now, for a child process of the test to take. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A clean environment for a child `node src/main.ts`: nothing of the caller's DATABASE_URL, TEST_DATABASE_URL or BOOTSTRAP_* leaks in. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: dirname(process.execPath) + delimiter + (process.env.PATH ?? ''),
    HOME: process.env.HOME ?? tmpdir(),
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

const stderrTails = new WeakMap<ChildProcess, string>();

/** The last 4 KB the child wrote to stderr (for a failing test to say what the server said). */
export function stderrOf(child: ChildProcess): string {
  return stderrTails.get(child) ?? '';
}

/**
 * `node src/main.ts` on `port` with `env` (over childEnv); its stderr is read (a pipe nobody reads
 * would stop the child once full) and its tail kept for stderrOf. Resolves once /readyz answers. The
 * child is added to `children` so the test's afterAll can SIGKILL what is left.
 */
export async function startServer(port: number, env: Record<string, string>, children: Set<ChildProcess>, readyWithinMs = 30_000): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: ROOT,
    env: childEnv({ LOG_LEVEL: 'warn', PORT: String(port), HOST: '127.0.0.1', ...env }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  child.stderr!.on('data', (chunk: Buffer) => stderrTails.set(child, (stderrOf(child) + chunk.toString()).slice(-4096)));
  await eventually(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.ok, readyWithinMs, 100);
  return child;
}

/**
 * The bootstrap owner of a server process, signed in over real HTTP: `call` answers the JSON of a
 * 2xx on the owner's first organization (any other status throws, saying what came back), on
 * `port` or on another instance's; `signIn` signs in again (after a restart).
 */
export async function ownerClient(port: number, email: string, password: string) {
  const base = (on: number) => `http://127.0.0.1:${on}/api/v1`;
  const login = async () =>
    (
      (await (
        await fetch(`${base(port)}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })
      ).json()) as { tokens: { accessToken: string } }
    ).tokens.accessToken;
  let token = await login();
  const me = (await (await fetch(`${base(port)}/auth/me`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
    memberships: { organizationId: string }[];
  };
  const orgPath = `/orgs/${me.memberships[0]!.organizationId}`;
  return {
    /** The organization's API base URL on `port`. */
    org: `${base(port)}${orgPath}`,
    async signIn(): Promise<void> {
      token = await login();
    },
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async call(method: string, path: string, body?: unknown, on = port): Promise<any> {
      const res = await fetch(`${base(on)}${orgPath}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = await res.json();
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    },
  };
}
