import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The README is the user's first contact: it must not drift from what the code reads and runs. */
const root = new URL('..', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');
const config = readFileSync(new URL('src/config.ts', root), 'utf8');
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string>; engines: { node: string } };

describe('README', () => {
  it('opens with the two commands a new user runs: install and start, install and test', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
    const commands = firstBlock.split('\n').map((l) => l.replace(/#.*$/, '').trim()).filter(Boolean);
    expect(commands).toEqual(['npm install && npm start', 'npm install && npm test']);
    expect(readme.indexOf('```sh')).toBeLessThan(readme.indexOf('\n## '));
    expect(readme).toContain(`Node.js ≥ ${pkg.engines.node.replace('>=', '')}`);
    expect(pkg.scripts.start).toBe('node src/main.ts');
  });

  it('documents every environment variable src/config.ts reads', () => {
    const names = new Set([...config.matchAll(/(?:str|int|bool)\(env, '([A-Z0-9_]+)'/g)].map((m) => m[1]!));
    expect(names.size).toBeGreaterThan(20);
    const undocumented = [...names].filter((name) => !readme.includes(`\`${name}\``));
    expect(undocumented).toEqual([]);
  });

  it('names only npm scripts that exist', () => {
    const used = [...readme.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]!);
    expect(used.length).toBeGreaterThan(3);
    for (const script of used) expect(Object.keys(pkg.scripts)).toContain(script);
  });
});
