import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname } from 'node:path';

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
