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

/**
 * `node src/main.ts` on `port` with `env` (over childEnv), stderr piped; resolves once /readyz
 * answers. The child is added to `children` so the test's afterAll can SIGKILL what is left.
 */
export async function startServer(port: number, env: Record<string, string>, children: Set<ChildProcess>, readyWithinMs = 30_000): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: ROOT,
    env: childEnv({ LOG_LEVEL: 'warn', PORT: String(port), HOST: '127.0.0.1', ...env }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  await eventually(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.ok, readyWithinMs, 100);
  return child;
}
