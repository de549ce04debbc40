import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const sdk = fileURLToPath(new URL('..', import.meta.url));
const root = join(sdk, '..', '..');
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

describe('the SDK package', () => {
  // Store-independent and some seconds each (the document, tsc): once, on the embedded store's pass,
  // side by side, as child processes (Node strips the types itself, faster than the test's transform).
  (onPostgres ? it.skip : it.concurrent)('has generated files that match the OpenAPI document the service serves (else: npm run sdk:generate)', async () => {
    // generate.ts also refuses an operation without an operationId.
    const check = await run(process.execPath, [join(sdk, 'scripts', 'generate.ts'), '--check'], { cwd: root }).catch((error: { stderr?: string }) => ({
      stdout: '',
      stderr: error.stderr ?? String(error),
    }));
    expect(check.stderr.replace(/.*ExperimentalWarning.*\n?|.*node --trace-warnings.*\n?/g, '')).toBe('');
    expect(check.stdout).toContain('up to date');
  });

  it.concurrent("declares the root project's versions of its dependencies (the root installs them for its tests)", () => {
    const pkg = JSON.parse(readFileSync(join(sdk, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; license: string };
    const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
      license: string;
    };
    expect(pkg.license).toBe(rootPkg.license);
    for (const [name, range] of Object.entries(pkg.dependencies)) {
      const installed = (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
      const wanted = (rootPkg.dependencies[name] ?? rootPkg.devDependencies[name])?.replace(/^[\^~]/, '');
      expect(wanted, `${name} is in the root package.json`).toBeDefined();
      expect(range.replace(/^[\^~]/, '').split('.')[0], `${name}: same major as the root`).toBe(wanted!.split('.')[0]);
      expect(installed.split('.')[0], `${name}: installed major`).toBe(range.replace(/^[\^~]/, '').split('.')[0]);
    }
  });

  (onPostgres ? it.skip : it.concurrent)('builds to dist with declarations, and the built bin and exports work', async () => {
    const out = join(sdk, `.build-test-${process.pid}`);
    try {
      await run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(sdk, 'tsconfig.json'), '--outDir', out], { cwd: sdk });
      for (const file of ['index.js', 'index.d.ts', 'client.d.ts', 'streams.d.ts', 'webhooks.d.ts', 'generated/openapi.d.ts', 'cli/main.js'])
        expect(existsSync(join(out, file)), file).toBe(true);
      const pkg = JSON.parse(readFileSync(join(sdk, 'package.json'), 'utf8')) as {
        exports: { '.': { types: string; import: string } };
        bin: { automation: string };
      };
      expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' });
      expect(pkg.bin.automation).toBe('./dist/cli/main.js');
      const built = (await import(join(out, 'index.js'))) as Record<string, unknown>;
      expect(Object.keys(built)).toEqual(
        expect.arrayContaining([
          'createClient',
          'ApiError',
          'streamRunEvents',
          'streamAgentRunEvents',
          'streamOrgEvents',
          'verifyWebhook',
          'WebhookVerificationError',
          'operations',
        ]),
      );
      const help = await run(process.execPath, [join(out, 'cli', 'main.js'), '--help']);
      expect(help.stdout).toContain('Usage: automation');
      expect(readFileSync(join(out, 'cli', 'main.js'), 'utf8').startsWith('#!/usr/bin/env node')).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
