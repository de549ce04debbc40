/**
 * A lead import beside another organization's reads: organization A imports BENCH_IMPORT_ROWS new
 * people (POST …/leads/import, JSON), then the same rows again with a changed field (every row
 * merges), while organization B lists its one lead again and again, one request at a time, over a
 * real listening server with its workers running. Prints the import's rows/s, B's list p50/p99
 * during the import against B's alone (before it) with the ratios, how many lists B got answered
 * while the import ran, and how many rows an import of 10,000 goes on writing after its client
 * disconnects (aborted after BENCH_ABORT_MS).
 *
 *   npm run bench -- import
 *
 * Environment: BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres; a throwaway
 * database svc_bench_import is created and dropped), BENCH_STORES (`postgres,pglite`),
 * BENCH_IMPORT_ROWS (2000), BENCH_ABORT_MS (1000), BENCH_BASELINE_LISTS (200).
 *
 * B's client runs in this process: its figures include any time the server's event loop (which it
 * shares) was busy, which is what a client of a blocked server sees too.
 */
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openStore, percentile, postgresReachable, printTable, type BenchStore } from './_stores.ts';

const STORES = (process.env.BENCH_STORES ?? 'postgres,pglite').split(',').map((s) => s.trim());
const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 2000);
const ABORT_MS = Number(process.env.BENCH_ABORT_MS ?? 1000);
/** The largest import there is (IMPORT_MAX_ROWS), so that it is still under way when its client leaves. */
const ABORT_ROWS = 10_000;
const BASELINE_LISTS = Number(process.env.BENCH_BASELINE_LISTS ?? 200);

interface Org {
  url: string;
  headers: Record<string, string>;
}

async function start(store: BenchStore) {
  const config = loadConfig({
    NODE_ENV: 'development',
    APP_SECRET: 'bench-secret-that-is-long-enough',
    DATA_DIR: store.dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000000',
    AUTH_RATE_LIMIT_MAX: '100000000',
  });
  const app = await buildApp({ config, database: store.database });
  const org = async (name: string): Promise<Org> => {
    const { organization } = await app.services.auth.createUserWithOrg({ email: `${name}@example.com`, password: 'bench password', organizationName: name });
    const { key } = await app.services.apiKeys.create(organization.id, { name: 'bench', scopes: ['leads:read', 'leads:write'] });
    return { url: `/api/v1/orgs/${organization.id}/leads`, headers: { 'x-api-key': key, 'content-type': 'application/json' } };
  };
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, address, a: await org('importer'), b: await org('reader') };
}

const rowsOf = (tag: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    name: `Person ${tag} ${i}`,
    email: `p${i}@${tag}.example`,
    company: i % 5 === 0 ? 'Acme Corp' : 'Globex Ltd',
    source: 'import',
    tags: ['bench'],
  }));

async function count(address: string, org: Org): Promise<number> {
  const res = await fetch(`${address}${org.url}?pageSize=1`, { headers: org.headers });
  return ((await res.json()) as { total: number }).total;
}

/** B's lists one after another until `until` says stop (or `limit` are done); each one's latency in ms. */
async function lists(address: string, b: Org, until: () => boolean, limit = Infinity): Promise<number[]> {
  const times: number[] = [];
  while (!until() && times.length < limit) {
    const t0 = performance.now();
    const res = await fetch(`${address}${b.url}`, { headers: b.headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`list answered ${res.status}`);
    times.push(performance.now() - t0);
  }
  return times.sort((x, y) => x - y);
}

async function benchStore(name: BenchStore['name']) {
  const store = await openStore(name, 'import');
  const { app, address, a, b } = await start(store);
  try {
    await fetch(`${address}${b.url}`, { method: 'POST', headers: b.headers, body: JSON.stringify({ name: 'Only lead', email: 'only@reader.example' }) });
    // Warm: the routes, the statements, the JIT.
    await fetch(`${address}${a.url}/import`, { method: 'POST', headers: a.headers, body: JSON.stringify({ rows: rowsOf('warm', 50) }) });
    const alone = await lists(address, b, () => false, BASELINE_LISTS);
    const p = (xs: number[], q: number) => percentile(xs, q).toFixed(1);
    const results: Record<string, string | number>[] = [];
    // New people, then the same people again with a changed field: every row merges (the locked way).
    for (const [label, rows] of [
      ['new people', rowsOf('run', ROWS)],
      ['re-import: all merge', rowsOf('run', ROWS).map((r) => ({ ...r, company: 'Initech' }))],
    ] as const) {
      let done = false;
      const t0 = performance.now();
      const imported = fetch(`${address}${a.url}/import`, { method: 'POST', headers: a.headers, body: JSON.stringify({ rows }) })
        .then(async (res) => {
          const body = (await res.json()) as { created: number; merged: number };
          if (body.created + body.merged !== ROWS) throw new Error(`import took ${body.created} + ${body.merged} of ${ROWS}`);
          return performance.now() - t0;
        })
        .finally(() => {
          done = true;
        });
      // The import's request first, so B's lists meet it under way.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const during = await lists(address, b, () => done);
      const importMs = await imported;
      results.push({
        store: name,
        case: label,
        rows: ROWS,
        'import s': (importMs / 1000).toFixed(1),
        'rows/s': Math.round(ROWS / (importMs / 1000)),
        'B p50 alone': p(alone, 50),
        'B p99 alone': p(alone, 99),
        'B p50 during': p(during, 50),
        'B p99 during': p(during, 99),
        'B max during': p(during, 100),
        'p50 ×': (percentile(during, 50) / percentile(alone, 50)).toFixed(1),
        'p99 ×': (percentile(during, 99) / percentile(alone, 99)).toFixed(1),
        'B lists during': during.length,
      });
    }

    // A client that leaves: how many rows are written after it has gone.
    const before = await count(address, a);
    const abort = new AbortController();
    const leaving = fetch(`${address}${a.url}/import`, {
      method: 'POST',
      headers: a.headers,
      body: JSON.stringify({ rows: rowsOf('gone', ABORT_ROWS) }),
      signal: abort.signal,
    }).catch(() => null);
    await new Promise((resolve) => setTimeout(resolve, ABORT_MS));
    abort.abort();
    await leaving;
    const atAbort = (await count(address, a)) - before;
    // Until the count stops growing (or every row is in).
    let after = atAbort;
    const left = performance.now();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const now = (await count(address, a)) - before;
      if (now === after || now >= ABORT_ROWS) {
        after = now;
        break;
      }
      after = now;
    }
    return {
      results,
      abort: {
        store: name,
        rows: ABORT_ROWS,
        'abort after ms': ABORT_MS,
        'rows at abort': atAbort,
        'rows after abort': after - atAbort,
        'settled s': ((performance.now() - left) / 1000).toFixed(1),
      },
    };
  } finally {
    await app.close();
    await store.dispose();
  }
}

export async function main(): Promise<void> {
  const results = [];
  const aborts = [];
  for (const store of STORES) {
    if (store === 'postgres' && !(await postgresReachable())) {
      console.log('PostgreSQL is not reachable (BENCH_PG_URL): skipped');
      continue;
    }
    const { results: rows, abort } = await benchStore(store === 'postgres' ? 'postgres' : 'embedded');
    printTable(rows);
    console.log('');
    results.push(...rows);
    aborts.push(abort);
  }
  console.log('');
  printTable(results);
  console.log('\nA client that leaves after BENCH_ABORT_MS:');
  printTable(aborts);
}
