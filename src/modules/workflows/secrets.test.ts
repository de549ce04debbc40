import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../test/harness.ts';
import type { Receiver } from '../../../test/receiver.ts';
import { api, manual, startWorkflowApp } from '../../../test/workflows.ts';

const VALUE = 'sk_live_7hP2qv9XkLmN4rT8';
const OTHER = 'sk_live_orgB_only_value_42';
const BEARER = 'Bearer tok_literal_3f9a8b7c6d5e';

describe('organization secrets', () => {
  let t: TestApp;
  let receiver: Receiver;
  let close: () => Promise<void>;
  let base: string;
  beforeAll(async () => {
    ({ t, receiver, close } = await startWorkflowApp());
    base = `/api/v1/orgs/${t.orgA.orgId}`;
  });
  afterAll(() => close());

  const put = (name: string, value: string, auth: { token?: string; apiKey?: string }, orgBase = base) =>
    t.call({ method: 'PUT', url: `${orgBase}/secrets/${name}`, auth, payload: { value } });
  /** Every text the database holds for an organization's secrets, workflows and runs. */
  const stored = async () => {
    const rows = (await t.database.db.execute(sql`select (select coalesce(string_agg(s::text, ' '), '') from org_secrets s) as secrets,
      (select coalesce(string_agg(w::text, ' '), '') from workflows w) as workflows,
      (select coalesce(string_agg(r.definition::text, ' '), '') from workflow_runs r) as runs`)) as unknown as {
      rows: { secrets: string; workflows: string; runs: string }[];
    };
    return rows.rows[0]!;
  };

  it('PUT creates (201) then replaces (200); GET lists names and times; DELETE removes; the value is in no answer', async () => {
    const auth = { token: t.orgA.token };
    const created = await put('CRUD_KEY', 'first value 123', auth);
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({ name: 'CRUD_KEY', createdAt: expect.stringMatching(/Z$/), updatedAt: expect.stringMatching(/Z$/) });
    const replaced = await put('CRUD_KEY', 'second value 456', auth);
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json().createdAt).toBe(created.json().createdAt);
    expect(replaced.body).not.toContain('value');

    const list = await t.call({ url: `${base}/secrets`, auth });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ total: 1, items: [{ name: 'CRUD_KEY' }] });
    expect(Object.keys(list.json().items[0]).sort()).toEqual(['createdAt', 'name', 'updatedAt']);
    expect(list.body).not.toContain('second value');

    expect((await t.call({ method: 'DELETE', url: `${base}/secrets/CRUD_KEY`, auth })).statusCode).toBe(204);
    const again = await t.call({ method: 'DELETE', url: `${base}/secrets/CRUD_KEY`, auth });
    expect(again.statusCode).toBe(404);
    expect(again.json().code).toBe('NOT_FOUND');
    expect((await t.call({ url: `${base}/secrets`, auth })).json().total).toBe(0);

    // Names are usable as $secrets.NAME; the mask is not a value.
    expect((await put('1BAD', 'x', auth)).statusCode).toBe(400);
    expect((await put('has-dash', 'x', auth)).statusCode).toBe(400);
    expect((await put('MASKED', '********', auth)).json().code).toBe('VALIDATION_ERROR');
    expect((await t.call({ method: 'PUT', url: `${base}/secrets/EMPTY`, auth, payload: { value: '' } })).statusCode).toBe(400);
  });

  it('the database holds the value sealed, never in plaintext', async () => {
    expect((await put('API_KEY', VALUE, { token: t.orgA.token })).statusCode).toBe(201);
    const rows = (await t.database.db.execute(sql`select name, value from org_secrets where org_id = ${t.orgA.orgId} and name = 'API_KEY'`)) as unknown as {
      rows: { name: string; value: string }[];
    };
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0]!.value).toMatch(/^v1\./);
    expect((await stored()).secrets).not.toContain(VALUE);
  });

  it('{{ $secrets.NAME }} reaches the receiver in a header and the URL; the run record shows the mask instead', async () => {
    const w = api(t);
    await put('API_KEY', VALUE, { token: t.orgA.token });
    receiver.received.length = 0;
    // The receiver echoes the key back: the step's items must not show it either.
    receiver.behaviour = (req) => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ echoed: req.headers['x-api-key'] }),
    });
    const wf = await w.create(
      [
        manual,
        {
          id: 'call',
          type: 'utility.httpRequest',
          params: {
            method: 'GET',
            url: receiver.url('/secret?token={{ $secrets.API_KEY }}'),
            headers: { 'X-Api-Key': '{{ $secrets.API_KEY }}', Authorization: 'Bearer {{ $secrets.API_KEY }}' },
          },
        },
        { id: 'copy', type: 'data.set', params: { fields: { leaked: '{{ $secrets.API_KEY }}' } } },
      ],
      [
        { from: 'start', to: 'call' },
        { from: 'call', to: 'copy' },
      ],
    );
    const run = await w.run(wf.id);
    const done = await w.until(run.id);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.headers['x-api-key']).toBe(VALUE);
    expect(receiver.received[0]!.headers.authorization).toBe(`Bearer ${VALUE}`);
    expect(receiver.received[0]!.url).toBe(`/secret?token=${VALUE}`);

    const record = await t.call({ url: `${base}/runs/${run.id}`, auth: { token: t.orgA.token } });
    expect(record.body).not.toContain(VALUE);
    expect(w.step(done, 'call')!.items![0]!.body).toEqual({ echoed: '********' });
    expect(w.step(done, 'copy')!.items![0]!.leaked).toBe('********');
    const workflow = await t.call({ url: `${base}/workflows/${wf.id}`, auth: { token: t.orgA.token } });
    expect(workflow.body).not.toContain(VALUE);

    // A failure message names the URL: the secret in it is masked there too.
    receiver.behaviour = () => ({ status: 500, body: 'nope' });
    const failed = await w.until((await w.run(wf.id)).id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error!.message).toContain('token=********');
    expect((await t.call({ url: `${base}/runs/${failed.id}`, auth: { token: t.orgA.token } })).body).not.toContain(VALUE);
  });

  it('a missing secret fails the node with SECRET_MISSING naming it; setting it lets the next run through', async () => {
    const w = api(t);
    receiver.received.length = 0;
    receiver.behaviour = () => ({ status: 200 });
    const wf = await w.create(
      [
        manual,
        { id: 'call', type: 'utility.httpRequest', params: { method: 'POST', url: receiver.url('/missing'), body: { key: '{{ $secrets.NOT_SET_YET }}' } } },
      ],
      [{ from: 'start', to: 'call' }],
    );
    const failed = await w.until((await w.run(wf.id)).id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toMatchObject({ code: 'SECRET_MISSING', nodeId: 'call' });
    expect(failed.error!.message).toContain('NOT_SET_YET');
    expect(receiver.received).toHaveLength(0);

    await put('NOT_SET_YET', 'now-it-is-set', { token: t.orgA.token });
    const ok = await w.until((await w.run(wf.id)).id);
    expect(ok.status).toBe('SUCCEEDED');
    expect(receiver.received[0]!.json).toEqual({ key: 'now-it-is-set' });
  });

  it('utility.httpRequest header values are sealed: read back as ********, stored encrypted in the workflow and the run, still sent; the mask sent back keeps them', async () => {
    const w = api(t);
    receiver.received.length = 0;
    receiver.behaviour = () => ({ status: 200 });
    const wf = await w.create(
      [
        manual,
        {
          id: 'call',
          type: 'utility.httpRequest',
          params: { method: 'POST', url: receiver.url('/sealed'), headers: { Authorization: BEARER, 'X-Tenant': 'tenant-17' }, body: { n: 1 } },
        },
      ],
      [{ from: 'start', to: 'call' }],
    );
    const node = (body: { nodes: { id: string; params?: Record<string, unknown> }[] }) => body.nodes.find((n) => n.id === 'call')!;
    expect(node(wf as never).params!.headers).toEqual({ Authorization: '********', 'X-Tenant': '********' });
    for (const auth of [
      { token: t.orgA.token },
      { apiKey: await t.key(t.orgA.orgId, ['workflows:read']) },
      { token: (await t.member(t.orgA.orgId, 'viewer')).token },
    ]) {
      const read = await t.call({ url: `${base}/workflows/${wf.id}`, auth });
      expect(read.statusCode).toBe(200);
      expect(read.body).not.toContain('tok_literal');
      expect(node(read.json()).params!.headers).toEqual({ Authorization: '********', 'X-Tenant': '********' });
    }
    const list = await t.call({ url: `${base}/workflows`, auth: { token: t.orgA.token } });
    expect(list.body).not.toContain('tok_literal');

    const first = await w.until((await w.run(wf.id)).id);
    expect(first.status).toBe('SUCCEEDED');
    expect(receiver.received[0]!.headers.authorization).toBe(BEARER);
    expect(receiver.received[0]!.headers['x-tenant']).toBe('tenant-17');
    const db = await stored();
    expect(db.workflows).not.toContain('tok_literal');
    expect(db.runs).not.toContain('tok_literal');
    expect(db.runs).toContain('$sealed');

    // An editor saves what it read (masked) with another change: the stored header stays.
    const read = (await t.call({ url: `${base}/workflows/${wf.id}`, auth: { token: t.orgA.token } })).json();
    const nodes = read.nodes.map((n: { id: string; params?: Record<string, unknown> }) =>
      n.id === 'call' ? { ...n, params: { ...n.params, body: { n: 2 } } } : n,
    );
    const patched = await t.call({ method: 'PATCH', url: `${base}/workflows/${wf.id}`, auth: { token: t.orgA.token }, payload: { nodes } });
    expect(patched.statusCode).toBe(200);
    expect((await w.until((await w.run(wf.id)).id)).status).toBe('SUCCEEDED');
    expect(receiver.received[1]!.headers.authorization).toBe(BEARER);
    expect(receiver.received[1]!.json).toEqual({ n: 2 });

    // A new value replaces it.
    const changed = nodes.map((n: { id: string; params?: Record<string, unknown> }) =>
      n.id === 'call' ? { ...n, params: { ...n.params, headers: { Authorization: 'Bearer rotated_token_99', 'X-Tenant': '********' } } } : n,
    );
    expect((await t.call({ method: 'PATCH', url: `${base}/workflows/${wf.id}`, auth: { token: t.orgA.token }, payload: { nodes: changed } })).statusCode).toBe(
      200,
    );
    expect((await w.until((await w.run(wf.id)).id)).status).toBe('SUCCEEDED');
    expect(receiver.received[2]!.headers.authorization).toBe('Bearer rotated_token_99');
    expect(receiver.received[2]!.headers['x-tenant']).toBe('tenant-17');

    // A client cannot hand the engine a sealed value of its own.
    const forged = await t.call({
      method: 'POST',
      url: `${base}/workflows`,
      auth: { token: t.orgA.token },
      payload: {
        name: 'forged',
        edges: [{ from: 'start', to: 'call' }],
        nodes: [manual, { id: 'call', type: 'utility.httpRequest', params: { method: 'POST', url: receiver.url('/x'), body: { $sealed: 'v1.a.b.c' } } }],
      },
    });
    expect(forged.statusCode).toBe(422);
    expect(forged.json().code, forged.body).toBe('WORKFLOW_INVALID');
  });

  it('scopes: workflows:write keys and members manage secrets; viewers, other scopes and project-bound keys cannot change them', async () => {
    const url = `${base}/secrets`;
    const viewer = (await t.member(t.orgA.orgId, 'viewer')).token;
    const member = (await t.member(t.orgA.orgId, 'member')).token;
    const readKey = await t.key(t.orgA.orgId, ['workflows:read']);
    const writeKey = await t.key(t.orgA.orgId, ['workflows:write']);
    const boundKey = await t.key(t.orgA.orgId, ['workflows:write'], t.orgA.projectId);

    expect((await t.call({ url, auth: { token: viewer } })).statusCode).toBe(403);
    expect((await put('BY_VIEWER', 'v-value', { token: viewer })).json().code).toBe('FORBIDDEN');
    expect((await t.call({ url, auth: { apiKey: readKey } })).json().code).toBe('INSUFFICIENT_SCOPE');
    expect((await put('BY_READER', 'r-value', { apiKey: readKey })).json().code).toBe('INSUFFICIENT_SCOPE');

    expect((await put('BY_MEMBER', 'm-value', { token: member })).statusCode).toBe(201);
    expect((await put('BY_KEY', 'k-value', { apiKey: writeKey })).statusCode).toBe(201);
    expect((await t.call({ url, auth: { apiKey: writeKey } })).statusCode).toBe(200);

    // Organization-wide: a key bound to a project reads the names only.
    const bound = await t.call({ url, auth: { apiKey: boundKey } });
    expect(bound.statusCode).toBe(200);
    expect(bound.json().items.map((s: { name: string }) => s.name)).toContain('BY_KEY');
    expect((await put('BY_BOUND', 'b-value', { apiKey: boundKey })).json().code).toBe('FORBIDDEN');
    expect((await put('BY_KEY', 'b-value', { apiKey: boundKey })).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: `${url}/BY_KEY`, auth: { apiKey: boundKey } })).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: `${url}/BY_MEMBER`, auth: { apiKey: writeKey } })).statusCode).toBe(204);
  });

  it('another organization neither sees nor uses them', async () => {
    await put('API_KEY', VALUE, { token: t.orgA.token });
    const baseB = `/api/v1/orgs/${t.orgB.orgId}`;
    // Org A's path with org B's credentials: not found.
    expect((await t.call({ url: `${base}/secrets`, auth: { token: t.orgB.token } })).statusCode).toBe(404);
    expect((await put('API_KEY', OTHER, { token: t.orgB.token })).statusCode).toBe(404);
    expect((await put('API_KEY', OTHER, { apiKey: t.orgB.apiKey })).statusCode).toBe(404);
    expect((await t.call({ method: 'DELETE', url: `${base}/secrets/API_KEY`, auth: { token: t.orgB.token } })).statusCode).toBe(404);
    expect((await t.call({ url: `${baseB}/secrets`, auth: { token: t.orgB.token } })).json().total).toBe(0);

    // Org B's workflow naming the same secret fails until org B sets its own, which is what it gets.
    receiver.received.length = 0;
    receiver.behaviour = () => ({ status: 200 });
    const create = await t.call({
      method: 'POST',
      url: `${baseB}/workflows`,
      auth: { token: t.orgB.token },
      payload: {
        name: 'b',
        edges: [{ from: 'start', to: 'call' }],
        nodes: [
          manual,
          { id: 'call', type: 'utility.httpRequest', params: { method: 'GET', url: receiver.url('/b'), headers: { 'X-Api-Key': '{{ $secrets.API_KEY }}' } } },
        ],
      },
    });
    const runB = async () => {
      const run = (await t.call({ method: 'POST', url: `${baseB}/workflows/${create.json().id}/run`, auth: { token: t.orgB.token }, payload: {} })).json();
      for (;;) {
        const r = (await t.call({ url: `${baseB}/runs/${run.id}`, auth: { token: t.orgB.token } })).json();
        if (['SUCCEEDED', 'FAILED'].includes(r.status)) return r;
        await new Promise((res) => setTimeout(res, 25));
      }
    };
    expect((await runB()).error.code).toBe('SECRET_MISSING');
    expect((await put('API_KEY', OTHER, { token: t.orgB.token }, baseB)).statusCode).toBe(201);
    expect((await runB()).status).toBe('SUCCEEDED');
    expect(receiver.received.map((r) => r.headers['x-api-key'])).toEqual([OTHER]);
  });
});
