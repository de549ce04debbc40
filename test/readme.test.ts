import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, configTable } from '../src/config-variables.ts';

/** The README is the user's first contact: it must not drift from what the code reads and runs. */
const root = new URL('..', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');
const config = readFileSync(new URL('src/config.ts', root), 'utf8');
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: Record<string, string>; engines: { node: string } };

describe('README', () => {
  it('opens with the two commands a new user runs: install and start, install and test', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
    const commands = firstBlock
      .split('\n')
      .map((l) => l.replace(/#.*$/, '').trim())
      .filter(Boolean);
    expect(commands).toEqual(['npm install && npm start', 'npm install && npm test']);
    expect(readme.indexOf('```sh')).toBeLessThan(readme.indexOf('\n## '));
    expect(readme).toContain(`Node.js ≥ ${pkg.engines.node.replace('>=', '')}`);
    expect(pkg.scripts.start).toBe('node src/main.ts');
  });

  it('documents every environment variable src/config.ts reads, once, in the table generated from src/config-variables.ts', () => {
    const read = new Set([...config.matchAll(/(?:str|int|bool|url)\(env, '([A-Z0-9_]+)'/g)].map((m) => m[1]!));
    expect(read.size).toBeGreaterThan(20);
    const documented = CONFIG_VARIABLES.flatMap((v) => v.names);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...read].filter((name) => !documented.includes(name))).toEqual([]);
    expect(documented.filter((name) => !read.has(name))).toEqual([]);
    // `npm run docs:config` writes it; a hand edit or a new variable without it fails here.
    expect(readme).toContain(configTable());
    // An integer's documented default is the one config.ts applies.
    for (const [, name, fallback] of config.matchAll(/int\(env, '([A-Z0-9_]+)', ([\d_]+)\b(?!\s*\*)/g)) {
      const variable = CONFIG_VARIABLES.find((v) => v.names.includes(name!))!;
      expect(variable.default, name).toMatch(new RegExp('^`' + Number(fallback!.replaceAll('_', '')) + '`'));
    }
  });

  it('names only npm scripts that exist', () => {
    const used = [...readme.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]!);
    expect(used.length).toBeGreaterThan(3);
    for (const script of used) expect(Object.keys(pkg.scripts)).toContain(script);
  });
});
