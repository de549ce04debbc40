import { writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openStore } from './_stores.ts';
const store = await openStore('postgres', 'prof');
const config = loadConfig({ NODE_ENV: 'development', APP_SECRET: 'bench-secret-that-is-long-enough', DATA_DIR: store.dataDir, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000000', AUTH_RATE_LIMIT_MAX: '100000000' });
const app = await buildApp({ config, database: store.database, workers: process.env.NO_WORKERS ? false : true });
const { organization } = await app.services.auth.createUserWithOrg({ email: 'bench@example.com', password: 'bench password', organizationName: 'Bench' });
const { key } = await app.services.apiKeys.create(organization.id, { name: 'bench', scopes: ['leads:read', 'leads:write'] });
const address = await app.listen({ port: 0, host: '127.0.0.1' });
writeFileSync('/tmp/prof/job.json', JSON.stringify({ url: `${address}/api/v1/orgs/${organization.id}/leads`, kind: 'create-new', headers: { 'x-api-key': key }, connections: 20, seconds: 8 }));
console.log('ready', process.pid);
process.on('SIGTERM', async () => { await app.close(); await store.dispose(); process.exit(0); });
import { Session } from 'node:inspector/promises';
let session: Session | null = null;
process.on('SIGUSR2', async () => {
  if (!session) { session = new Session(); session.connect(); await session.post('Profiler.enable'); await session.post('Profiler.start'); console.log('profiling'); return; }
  const { profile } = await session.post('Profiler.stop');
  writeFileSync('/tmp/prof/cpu2/p.cpuprofile', JSON.stringify(profile)); session.disconnect(); session = null; console.log('profile written');
});
process.on('SIGUSR1', () => { console.log(JSON.stringify({ d: (globalThis as any).__d, e: (globalThis as any).__e, t: (globalThis as any).__t })); });
