import { Writable } from 'node:stream';
import type { FastifyLoggerOptions } from 'fastify';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, loggerOptions } from '../src/app.ts';
import type { App } from '../src/platform/http/types.ts';
import type { Database } from '../src/platform/db.ts';
import { serializeError, statementName } from '../src/platform/log.ts';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { freshDatabase, onPostgres } from './database.ts';
import { testConfig, TEST_PASSWORD } from './harness.ts';

/** Issue 10 item 9: what the access and error logs must never contain. */

let output = '';
let app: App;
let database: Database;
let orgId: string;
let apiKey: string;

beforeAll(async () => {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      output += chunk.toString();
      done();
    },
  });
  database = await freshDatabase();
  app = await buildApp({ config: testConfig(), database, workers: false, logger: { ...(loggerOptions('info') as FastifyLoggerOptions), stream } });
  await app.ready();
  const { organization } = await app.services.auth.createUserWithOrg({ email: 'logs@example.com', password: TEST_PASSWORD, organizationName: 'Logs' });
  orgId = organization.id;
  apiKey = (await app.services.apiKeys.create(orgId, { name: 'logs', scopes: ['*'] })).key;
});
afterAll(async () => {
  await app.close();
  await database.close();
});

describe('logs', () => {
  it('mask the workflow trigger token and the media signature in request paths', async () => {
    const token = 'hooktoken' + 'Z'.repeat(30);
    const res = await app.inject({ method: 'POST', url: `/api/v1/hooks/wf_logged/${token}?x=1`, payload: {} });
    expect(res.statusCode).toBe(404);
    const signature = 'mediasignature' + 'Q'.repeat(20);
    expect((await app.inject({ url: `/api/v1/media/med_logged/${signature}.png` })).statusCode).toBe(404);
    expect(output).toContain('/api/v1/hooks/wf_logged/[masked]?[masked]');
    expect(output).toContain('/api/v1/media/med_logged/[masked]');
    expect(output).not.toContain(token);
    expect(output).not.toContain(signature);
  });

  it('log a failed query by statement and constraint, without its parameters or the row', async () => {
    // A real failure of the database on insert: a constraint the service does not know of.
    await database.db.execute(sql.raw(`alter table leads add constraint logs_test_refuse check (email is null or email not like '%@pii.example')`));
    const email = 'jane.secret-person@pii.example';
    const phone = '+14155550123';
    const res = await app.inject({
      method: 'POST',
      url: `/api/v1/orgs/${orgId}/leads`,
      headers: { 'x-api-key': apiKey },
      payload: { name: 'Jane Secretperson', email, phone, company: 'Hidden Company Name' },
    });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ code: 'INTERNAL' });
    const lines = output.split('\n').filter((l) => l.includes('unhandled error'));
    expect(lines.length).toBeGreaterThan(0);
    const logged = lines.join('\n');
    for (const secret of ['jane.secret-person', 'pii.example', 'Jane Secretperson', '4155550123', 'Hidden Company Name']) {
      expect(output, secret).not.toContain(secret);
    }
    // PGlite's errors carry the statement (named here without its text); node-postgres's do not.
    if (!onPostgres) expect(logged).toMatch(/"statement":"insert /);
    expect(logged).toContain('"table":"leads"');
    expect(logged).toContain('logs_test_refuse');
    // Nor the hash of the API key that made the request.
    const hash = (await import('../src/platform/crypto.ts')).sha256Hex(apiKey);
    expect(output).not.toContain(hash);
  });
});

describe('statementName', () => {
  it('names the verb and the first table, never values', () => {
    expect(statementName('insert into "leads" ("id", "email") values ($1, $2)')).toBe('insert "leads"');
    expect(statementName('select "id" from "api_keys" where "key_hash" = $1')).toBe('select "api_keys"');
    expect(statementName('update "workflow_runs" set "status" = $1')).toBe('update "workflow_runs"');
    expect(statementName('delete from "public"."media" where "id" = $1')).toBe('delete "public"."media"');
    expect(statementName('with keys as (select "id" from "leads" where "email" = $1) insert into "leads" ("id") values ($2)')).toBe('insert "leads"');
    expect(statementName('begin')).toBe('begin');
  });
});

describe('serializeError', () => {
  it("keeps a drizzle query error's statement and cause, drops its parameters and the row in detail", () => {
    const cause = Object.assign(new Error('duplicate key value violates unique constraint "users_email_key"'), {
      severity: 'ERROR',
      code: '23505',
      constraint: 'users_email_key',
      detail: 'Key (email)=(someone@private.example) already exists.',
    });
    const error = new DrizzleQueryError('insert into "users" ("id", "email") values ($1, $2)', ['usr_1', 'someone@private.example'], cause);
    const logged = JSON.stringify(serializeError(error));
    expect(logged).not.toContain('private.example');
    expect(serializeError(error)).toMatchObject({
      type: 'DrizzleQueryError',
      message: 'Failed query',
      statement: 'insert "users"',
      cause: { code: '23505', constraint: 'users_email_key', message: 'duplicate key value violates unique constraint "users_email_key"' },
    });
    // A bad value quoted at the end of a database message is masked too.
    const syntax = Object.assign(new Error('invalid input syntax for type uuid: "someone@private.example"'), { severity: 'ERROR', code: '22P02' });
    expect(serializeError(syntax).message).toBe('invalid input syntax for type uuid: [value]');
  });
});
