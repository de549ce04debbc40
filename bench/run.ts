/** `npm run bench -- <name>`: runs bench/<name>.ts. */
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const available = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !['run.ts', 'load.ts'].includes(f) && !f.startsWith('_'))
  .map((f) => f.slice(0, -3));
const name = process.argv[2];

if (!name || !available.includes(name) || !existsSync(new URL(`./${name}.ts`, import.meta.url))) {
  console.error(`usage: npm run bench -- <name>   (available: ${available.join(', ')})`);
  process.exit(2);
}
const bench = (await import(`./${name}.ts`)) as { main(args: string[]): Promise<void> };
await bench.main(process.argv.slice(3));
