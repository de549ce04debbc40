import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './harness.ts';
import { SCOPES } from '../src/modules/api-keys/service.ts';

/** Validation errors read as sentences, one per problem, and stay machine-readable in `details`. */
let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await buildTestApp({ workers: false });
  base = `/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  await t.close();
});

const owner = () => ({ token: t.orgA.token });
const post = (path: string, payload: unknown) => t.call({ method: 'POST', url: `${base}${path}`, auth: owner(), payload: payload as Record<string, unknown> });
const STATUSES = 'NEW, CONTACTED, ENGAGED, QUALIFIED, UNQUALIFIED, CUSTOMER, LOST';
const STATUS_LIST = ['NEW', 'CONTACTED', 'ENGAGED', 'QUALIFIED', 'UNQUALIFIED', 'CUSTOMER', 'LOST'];

function expect400(res: { statusCode: number; json(): unknown }, message: string, details: unknown[]) {
  expect(res.statusCode).toBe(400);
  expect(res.json()).toEqual({ statusCode: 400, error: 'Bad Request', code: 'VALIDATION_ERROR', message, details });
}

describe('validation messages', () => {
  it('an enum mismatch lists the allowed values once (PATCH a lead with a bad status)', async () => {
    const lead = (await post('/leads', { name: 'Enum Person' })).json();
    const res = await t.call({ method: 'PATCH', url: `${base}/leads/${lead.id}`, auth: owner(), payload: { status: 'WON' } });
    expect400(res, `body.status must be one of ${STATUSES}`, [
      { field: 'body.status', message: `must be one of ${STATUSES}`, code: 'enum', allowed: STATUS_LIST },
    ]);
    expect(res.body).not.toContain('constant');
  });

  it('a union of literals inside an array: one problem per wrong item (API key scopes)', async () => {
    const res = await post('/api-keys', { name: 'k', scopes: ['leads:read', 'leads:nope', 'everything'] });
    const must = `must be one of ${SCOPES.join(', ')}`;
    expect400(res, `body.scopes[1] ${must}; body.scopes[2] ${must}`, [
      { field: 'body.scopes[1]', message: must, code: 'enum', allowed: [...SCOPES] },
      { field: 'body.scopes[2]', message: must, code: 'enum', allowed: [...SCOPES] },
    ]);
  });

  it('an unknown property is named', async () => {
    expect400(await post('/leads', { name: 'Scored', score: 5 }), "body: unknown property 'score'", [
      { field: 'body.score', message: "unknown property 'score'", code: 'additionalProperties' },
    ]);
    const query = await t.call({ url: `${base}/leads?colour=red&pageSize=101`, auth: owner() });
    expect400(query, "querystring: unknown property 'colour'; querystring.pageSize must be at most 100", [
      { field: 'querystring.colour', message: "unknown property 'colour'", code: 'additionalProperties' },
      { field: 'querystring.pageSize', message: 'must be at most 100', code: 'maximum' },
    ]);
  });

  it('a missing property is named (webhook endpoint and workflow create)', async () => {
    expect400(await post('/webhook-endpoints', { description: 'no url' }), 'body.url is required; body.events is required', [
      { field: 'body.url', message: 'is required', code: 'required' },
      { field: 'body.events', message: 'is required', code: 'required' },
    ]);
    expect400(await post('/workflows', { nodes: [] }), 'body.name is required; body.nodes must not be empty', [
      { field: 'body.name', message: 'is required', code: 'required' },
      { field: 'body.nodes', message: 'must not be empty', code: 'minItems' },
    ]);
  });

  it('type errors, null where allowed, and length limits with their numbers', async () => {
    expect400(await post('/leads', { name: 42, tags: 'vip' }), 'body.name must be a string; body.tags must be an array', [
      { field: 'body.name', message: 'must be a string', code: 'type' },
      { field: 'body.tags', message: 'must be an array', code: 'type' },
    ]);
    const lead = (await post('/leads', { name: 'Types Person' })).json();
    const patch = await t.call({ method: 'PATCH', url: `${base}/leads/${lead.id}`, auth: owner(), payload: { email: 5, score: 101 } });
    expect400(patch, 'body.email must be a string or null; body.score must be at most 100', [
      { field: 'body.email', message: 'must be a string or null', code: 'type' },
      { field: 'body.score', message: 'must be at most 100', code: 'maximum' },
    ]);
    const tags = await post('/leads', { name: 'Tags', tags: ['', 'x'.repeat(101)] });
    expect400(tags, 'body.tags[0] must not be empty; body.tags[1] must be at most 100 characters long', [
      { field: 'body.tags[0]', message: 'must not be empty', code: 'minLength' },
      { field: 'body.tags[1]', message: 'must be at most 100 characters long', code: 'maxLength' },
    ]);
    const many = await post('/leads', { name: 'Many tags', tags: Array.from({ length: 101 }, (_, i) => `t${i}`) });
    expect400(many, 'body.tags must have at most 100 items', [{ field: 'body.tags', message: 'must have at most 100 items', code: 'maxItems' }]);
  });

  it('a date-time format names what it wants', async () => {
    const res = await post('/content', { platform: 'X', body: 'hi', scheduledAt: 'tomorrow' });
    const must = 'must be a date-time (ISO 8601 with an offset, e.g. 2026-01-31T09:00:00Z)';
    expect400(res, `body.scheduledAt ${must}`, [{ field: 'body.scheduledAt', message: must, code: 'format' }]);
  });

  it('a union of other kinds reports the branch the value came closest to, or the kinds it may be', async () => {
    const tooLong = await post('/leads/bulk', { ids: ['lead_x'], action: 'tag', value: 'x'.repeat(101) });
    expect400(tooLong, 'body.value must be at most 100 characters long', [
      { field: 'body.value', message: 'must be at most 100 characters long', code: 'maxLength' },
    ]);
    const number = await post('/leads/bulk', { ids: [], action: 'retag', value: 5 });
    expect400(number, 'body.ids must not be empty; body.action must be one of tag, untag, setStatus, delete; body.value must be a string or an array', [
      { field: 'body.ids', message: 'must not be empty', code: 'minItems' },
      { field: 'body.action', message: 'must be one of tag, untag, setStatus, delete', code: 'enum', allowed: ['tag', 'untag', 'setStatus', 'delete'] },
      { field: 'body.value', message: 'must be a string or an array', code: 'type' },
    ]);
  });

  it('415 says which Content-Type to send, naming what the route accepts', async () => {
    const text = await t.call({ method: 'POST', url: `${base}/leads`, auth: owner(), headers: { 'content-type': 'text/plain' }, payload: '{"name":"Ada"}' });
    expect(text.statusCode).toBe(415);
    expect(text.json()).toEqual({
      statusCode: 415,
      error: 'Unsupported Media Type',
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message: "Content-Type 'text/plain' is not accepted here: send Content-Type: application/json",
      details: [{ field: 'headers.content-type', message: 'must be application/json', code: 'contentType', allowed: ['application/json'] }],
    });
    const xml = await t.call({
      method: 'POST',
      url: `${base}/leads/import`,
      auth: owner(),
      headers: { 'content-type': 'application/xml' },
      payload: '<rows/>',
    });
    expect(xml.statusCode).toBe(415);
    expect(xml.json().message).toBe("Content-Type 'application/xml' is not accepted here: send Content-Type: application/json or text/csv");
    const upload = await t.call({ method: 'POST', url: `${base}/media/upload`, auth: owner(), headers: { 'content-type': 'application/json' }, payload: '{}' });
    expect(upload.statusCode).toBe(415);
    expect(upload.json().message).toMatch(/multipart\/form-data/);
  });

  it('workflow node params use the same words, with every allowed value even when the schema check stops early', async () => {
    const res = await post('/workflows', {
      name: 'Bad params',
      nodes: [
        { id: 'start', type: 'trigger.manual' },
        { id: 'u', type: 'leads.update', params: { status: 'WON', a: 1, b: 2 } },
      ],
      edges: [{ from: 'start', to: 'u' }],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().message).toBe(
      `Node "u" (leads.update) has invalid params: unknown property 'a'; unknown property 'b'; status must be one of ${STATUSES}`,
    );
  });

  it('import rows are rejected in the same words', async () => {
    const res = await post('/leads/import', { rows: [{ name: 'Ok row' }, { name: 'Bad row', tags: 'vip', status: 'NEW' }] });
    expect(res.statusCode).toBe(200);
    expect(res.json().rejected).toEqual([{ row: 2, error: "unknown property 'status'; tags must be an array" }]);
  });
});
