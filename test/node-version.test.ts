import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * On an older Node.js, `npm start`, `npm test` and `npm run cli` stop with one line naming the
 * required version, before anything else runs. The machine's own /usr/bin/node (20) is the old one.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
const required = pkg.engines.node.replace('>=', '');
const OLD_NODE = '/usr/bin/node';

function versionOf(node: string): number[] {
  const out = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  return out.replace(/^v/, '').split('.').map(Number);
}
const [needMajor, needMinor] = required.split('.').map(Number) as [number, number];
const oldNodeHere = existsSync(OLD_NODE) && ((v) => v[0]! < needMajor || (v[0] === needMajor && v[1]! < needMinor))(versionOf(OLD_NODE));

const expectedLine = new RegExp(
  `^This service needs Node\\.js >= ${required.replace('.', '\\.')}, but \\S+ is v\\d+\\.\\d+\\.\\d+: install Node\\.js 24 .*\\.nvmrc.*\\n$`,
);

describe('Node.js version check', () => {
  it('passes silently on this Node.js', () => {
    const run = spawnSync(process.execPath, ['scripts/check-node.cjs'], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout + run.stderr).toBe('');
  });

  it.skipIf(!oldNodeHere)(`an older Node.js (${OLD_NODE}) exits 1 with one line naming the required version`, () => {
    const run = spawnSync(OLD_NODE, ['scripts/check-node.cjs'], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(expectedLine);
  });

  // npm runs the pre-scripts with the `node` first on PATH, as a user whose PATH finds the old one.
  it.skipIf(!oldNodeHere)('npm start, npm test and npm run cli print that line, not a stack trace, with the old Node.js on PATH', { timeout: 60_000 }, () => {
    const env = { PATH: `/usr/bin:/bin`, HOME: process.env.HOME ?? '/tmp', npm_config_update_notifier: 'false' };
    for (const args of [['start'], ['test'], ['run', 'cli', '--', '--help']]) {
      const run = spawnSync('npm', args, { cwd: ROOT, env, encoding: 'utf8' });
      expect(run.status, args.join(' ')).not.toBe(0);
      const lines = run.stderr.split('\n').filter((l) => l.startsWith('This service needs Node.js'));
      expect(lines, run.stderr).toHaveLength(1);
      expect(lines[0] + '\n').toMatch(expectedLine);
      expect(run.stderr).not.toContain('Unknown file extension');
      expect(run.stdout + run.stderr).not.toMatch(/\bat .*\(node:/);
    }
  });

  it('npm refuses installs on an unsupported Node.js (engine-strict), and .nvmrc names 24', () => {
    expect(readFileSync(new URL('../.npmrc', import.meta.url), 'utf8')).toMatch(/^engine-strict=true$/m);
    expect(readFileSync(new URL('../.nvmrc', import.meta.url), 'utf8').trim()).toBe('24');
  });
});
