/**
 * `npm run dev`: the service (restarted on change, `node --watch`) on :3000 and the panel's Vite
 * dev server on :5173 with hot reload, proxying /api and /media to the service. Open
 * http://localhost:5173. The API types and route tree are regenerated first.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const port = process.env.PORT ?? '3000';

spawnSync(process.execPath, ['scripts/build-panel.ts', '--types'], { cwd: root, stdio: 'inherit' });
const service = spawn(process.execPath, ['--watch', 'src/main.ts'], { cwd: root, stdio: 'inherit', env: { ...process.env, PORT: port } });
const vite = await createServer({ configFile: `${root}/panel/vite.config.ts`, root: `${root}/panel` });
await vite.listen();
vite.printUrls();

const stop = async () => {
  service.kill('SIGTERM');
  await vite.close();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
service.on('exit', (code) => {
  if (code !== null && code !== 0) console.error(`the service exited with ${code}; fix the error and save: node --watch restarts it`);
});
