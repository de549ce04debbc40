import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
import { PG_URL, admin, withDatabase } from './_stores.ts';
await admin('drop database if exists svc_bench_bare with (force)'); await admin('create database svc_bench_bare');
const pool = new pg.Pool({ connectionString: withDatabase(PG_URL, 'svc_bench_bare'), max: 20 });
await pool.query(`create table if not exists bare_leads (
    id text primary key, org_id text not null, name text, email text, company text, source text,
    tags text[] not null default '{}', custom jsonb not null default '{}', created_at timestamptz not null default now())`);
const app = Fastify({ logger: false });
app.post('/leads', async (request, reply) => {
  const b = request.body as any;
  const { rows } = await pool.query('insert into bare_leads (id, org_id, name, email, company, source, tags, custom) values ($1, $2, $3, $4, $5, $6, $7, $8) returning *',
    [randomUUID(), 'org_bench', b.name ?? null, b.email ?? null, b.company ?? null, b.source ?? null, b.tags ?? [], b.custom ?? {}]);
  reply.code(201); return rows[0];
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
writeFileSync('/tmp/prof/job.json', JSON.stringify({ url: `${address}/leads`, kind: 'create-new', headers: {}, connections: 20, seconds: 8 }));
console.log('ready', process.pid);
