import { configDefaults, defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

/**
 * The server's tests that never touch TEST_DATABASE_URL: they start `node src/main.ts` or the CLI on
 * an embedded DATA_DIR of their own, or check files. The PostgreSQL pass (TEST_DATABASE_URL set)
 * leaves them out: they would run exactly as in the embedded pass, a sixth of its time.
 */
const STORE_FREE = [
  'test/startup.test.ts',
  'test/shutdown.test.ts',
  'test/conversations-crash.test.ts',
  'test/container.test.ts',
  'test/node-version.test.ts',
  'test/readme.test.ts',
];

// Three projects: the server's tests (on PGlite, or on PostgreSQL when TEST_DATABASE_URL is set),
// the panel's component tests (jsdom), and the end-to-end tests (the real server and the built
// panel in headless Chromium). The last two do not depend on the store: CI runs them once
// (`npm test -- --project server` for the PostgreSQL pass). The end-to-end tests run after the
// others, not beside them: a browser and a server per file next to the server's tests starve both.
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {
        test: {
          name: 'server',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...(process.env.TEST_DATABASE_URL ? STORE_FREE : [])],
          sequence: { groupOrder: 0 },
          // A worker runs its files one after another on the modules it imported once: importing the
          // app anew for every file was a third of the server tests' time. What is process-wide (the
          // metrics registry, the node catalog) is reset or cleaned up by the files that change it.
          isolate: false,
          // As src/main.ts sets it: Node 24's V8 aborts a process now and then when its WebAssembly
          // code collector frees code another thread uses (PGlite and fetch are WebAssembly).
          execArgv: ['--no-wasm-code-gc'],
          globalSetup: ['./test/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        plugins: [react()],
        test: {
          name: 'panel',
          include: ['panel/src/**/*.test.{ts,tsx}'],
          sequence: { groupOrder: 0 },
          environment: 'jsdom',
          setupFiles: ['panel/src/test-setup.ts'],
          testTimeout: 15_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['e2e/**/*.test.ts'],
          globalSetup: ['./e2e/global-setup.ts'],
          sequence: { groupOrder: 1 },
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // A page that waits on a live update can take seconds under CI's load; vitest's default
          // of one second failed a run page's first render there.
          expect: { poll: { timeout: 15_000 } },
        },
      },
    ],
  },
});
