import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildTestApp, type TestApp } from './harness.ts';

/**
 * The OpenAPI document as a generated client and the reference use it (docs/openapi.md): named
 * operations, tags, real descriptions, the access each operation needs, rate-limit headers,
 * bounded inputs, examples that match their schemas. Spectral runs over it in CI (lint:openapi).
 */

type Json = Record<string, unknown>;
interface Operation extends Json {
  operationId?: string;
  tags?: string[];
  description?: string;
  parameters?: { name: string; in: string; schema: Json }[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, { description: string; headers?: Record<string, Json>; content?: Record<string, { schema: Json }> }>;
  'x-required-scopes'?: string[];
}
interface Doc {
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json>; headers: Record<string, Json> };
}

let t: TestApp;
let doc: Doc;
const operations: { method: string; path: string; op: Operation }[] = [];
const byId = (id: string) => operations.find((o) => o.op.operationId === id)!;

beforeAll(async () => {
  t = await buildTestApp({ workers: false });
  const res = await t.call({ url: '/api/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json() as Doc;
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) operations.push({ method: method.toUpperCase(), path, op });
  }
});
afterAll(async () => {
  await t.close();
});

describe('OpenAPI operations', () => {
  it('every operation has a unique camelCase operationId, named as a client would call it', () => {
    const ids = operations.map((o) => o.op.operationId);
    for (const { method, path, op } of operations) expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    expect(new Set(ids).size).toBe(ids.length);
    const expected: Record<string, string> = {
      listLeads: 'GET /api/v1/orgs/{orgId}/leads',
      createLead: 'POST /api/v1/orgs/{orgId}/leads',
      getLead: 'GET /api/v1/orgs/{orgId}/leads/{id}',
      updateLead: 'PATCH /api/v1/orgs/{orgId}/leads/{id}',
      deleteLead: 'DELETE /api/v1/orgs/{orgId}/leads/{id}',
      importLeads: 'POST /api/v1/orgs/{orgId}/leads/import',
      listLeadEvents: 'GET /api/v1/orgs/{orgId}/leads/{id}/events',
      getLeadStats: 'GET /api/v1/orgs/{orgId}/leads/stats',
      runWorkflow: 'POST /api/v1/orgs/{orgId}/workflows/{id}/run',
      cancelRun: 'POST /api/v1/orgs/{orgId}/runs/{runId}/cancel',
      streamRunEvents: 'GET /api/v1/orgs/{orgId}/runs/{runId}/events',
      listTemplates: 'GET /api/v1/orgs/{orgId}/templates',
      getTemplate: 'GET /api/v1/orgs/{orgId}/templates/{id}',
      useTemplate: 'POST /api/v1/orgs/{orgId}/templates/{id}/use',
      setSecret: 'PUT /api/v1/orgs/{orgId}/secrets/{name}',
      listOrgs: 'GET /api/v1/orgs',
      login: 'POST /api/v1/auth/login',
    };
    for (const [id, route] of Object.entries(expected)) {
      const found = byId(id);
      expect(found, id).toBeDefined();
      expect(`${found.method} ${found.path}`).toBe(route);
    }
  });

  it('lists every tag used, each with a description', () => {
    const used = new Set(operations.flatMap((o) => o.op.tags ?? []));
    expect(used.size).toBeGreaterThan(5);
    expect(new Set(doc.tags.map((tag) => tag.name))).toEqual(used);
    for (const tag of doc.tags) expect(tag.description, tag.name).toMatch(/\w{3,}/);
  });

  it('describes every success response (no "Default Response"), lists as envelopes or as documented arrays', () => {
    for (const { method, path, op } of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.description, `${method} ${path} ${status}`).toBeTruthy();
        expect(response.description, `${method} ${path} ${status}`).not.toBe('Default Response');
      }
    }
    expect(byId('listLeads').op.responses['200']!.description).toContain('list envelope');
    expect(byId('createLead').op.responses['200']!.description).toContain('deduplicated');
    expect(byId('createLead').op.responses['201']!.description).toMatch(/^Created/);
    expect(byId('deleteLead').op.responses['204']!.description).toMatch(/no body/);
    // The bare arrays CONTRACT keeps are said to be arrays.
    for (const id of ['listOrgs', 'listTemplates', 'listNodeTypes']) {
      const response = byId(id).op.responses['200']!;
      expect(response.content!['application/json']!.schema.type, id).toBe('array');
      expect(response.description, id).toMatch(/JSON array/);
    }
  });
});

describe('access', () => {
  it('states the access of every operation, with x-required-scopes for API keys', () => {
    for (const { method, path, op } of operations) {
      expect(Array.isArray(op['x-required-scopes']), `${method} ${path}`).toBe(true);
      expect(op.description, `${method} ${path}`).toContain('**Access:**');
    }
    expect(byId('listLeads').op['x-required-scopes']).toEqual(['leads:read']);
    expect(byId('createLead').op['x-required-scopes']).toEqual(['leads:write']);
    expect(byId('createLead').op.description).toContain('`leads:write`');
    expect(byId('createLead').op.description).toContain('Viewers are refused');
    expect(byId('createApiKey').op['x-required-scopes']).toEqual([]);
    expect(byId('createApiKey').op.description).toContain('API keys are refused');
    expect(byId('login').op.description).toContain('No credentials needed');
    expect(byId('getCurrentUser').op.description).toContain('API keys are refused');
    // The signed file URL is public: the document says so instead of asking for a bearer token.
    expect(byId('downloadMediaFile').op.security).toEqual([]);
    expect(byId('downloadMediaFile').op.description).toContain('signed file name');
  });

  it('the documented scopes are the ones the API enforces, on every list and catalog route', async () => {
    const { orgId } = t.orgA;
    const checked: string[] = [];
    for (const { method, path, op } of operations) {
      const scopes = op['x-required-scopes'] ?? [];
      const sse = Object.values(op.responses).some((r) => r.content?.['text/event-stream']);
      if (method !== 'GET' || sse || scopes.length === 0 || scopes.includes('*')) continue;
      if (!/^\/api\/v1\/orgs\/\{orgId\}\/[a-z-]+(\/[a-z-]+)?$/.test(path)) continue;
      const url = path.replace('{orgId}', orgId);
      const other = ['leads:read', 'reports:read', 'webhooks:read', 'usage:read'].find((s) => !scopes.includes(s))!;
      const refused = await t.call({ method: 'GET', url, auth: { apiKey: await t.key(orgId, [other]) } });
      expect(refused.statusCode, `${path} with ${other}`).toBe(403);
      expect(refused.json().code).toBe('INSUFFICIENT_SCOPE');
      const allowed = await t.call({ method: 'GET', url, auth: { apiKey: await t.key(orgId, [scopes[0]!]) } });
      expect(allowed.statusCode, `${path} with ${scopes[0]}: ${allowed.body}`).not.toBe(403);
      checked.push(path);
    }
    expect(checked.length).toBeGreaterThan(10);
  });
});

describe('rate limits', () => {
  it('documents RateLimit-Limit, -Remaining and -Reset on every response and Retry-After on 429', () => {
    for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']) expect(doc.components.headers[name], name).toBeDefined();
    for (const { method, path, op } of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) {
          expect(response.headers?.[name], `${method} ${path} ${status} ${name}`).toEqual({ $ref: `#/components/headers/${name}` });
        }
      }
      expect(op.responses['429']?.headers?.['Retry-After'], `${method} ${path}`).toEqual({ $ref: '#/components/headers/Retry-After' });
    }
  });

  it('and the API sends them', async () => {
    const res = await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgA.orgId}/leads`, auth: { apiKey: t.orgA.apiKey } });
    expect(res.statusCode).toBe(200);
    for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) expect(res.headers[name], name).toMatch(/^\d+$/);
  });
});

describe('inputs', () => {
  /** Every string, number and array a client can send, with where it is. */
  function unbounded(): string[] {
    const found: string[] = [];
    const walk = (schema: unknown, where: string, seen: Set<string>): void => {
      if (!schema || typeof schema !== 'object') return;
      const s = schema as Json;
      if (typeof s.$ref === 'string') {
        const name = s.$ref.split('/').pop()!;
        if (!seen.has(name)) walk(doc.components.schemas[name], `${where}→${name}`, new Set([...seen, name]));
        return;
      }
      const types = Array.isArray(s.type) ? s.type : [s.type];
      const fixed = s.enum !== undefined || s.const !== undefined;
      if (types.includes('string') && s.maxLength === undefined && !fixed) found.push(`${where}: string without maxLength`);
      if ((types.includes('integer') || types.includes('number')) && !fixed) {
        if (s.maximum === undefined && s.exclusiveMaximum === undefined) found.push(`${where}: number without maximum`);
        if (s.minimum === undefined && s.exclusiveMinimum === undefined) found.push(`${where}: number without minimum`);
      }
      if (types.includes('array') && s.maxItems === undefined) found.push(`${where}: array without maxItems`);
      for (const [name, child] of Object.entries((s.properties ?? {}) as Json)) walk(child, `${where}.${name}`, seen);
      for (const key of ['items', 'additionalProperties', 'not', 'contains']) walk(s[key], `${where}.${key}`, seen);
      for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'])
        ((s[key] ?? []) as unknown[]).forEach((child, i) => walk(child, `${where}.${key}[${i}]`, seen));
    };
    for (const { method, path, op } of operations) {
      for (const param of op.parameters ?? []) walk(param.schema, `${method} ${path} ${param.in} ${param.name}`, new Set());
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) walk(media.schema, `${method} ${path} body (${type})`, new Set());
    }
    return found;
  }

  it('bounds every input string (maxLength), number (minimum and maximum) and array (maxItems)', () => {
    expect(unbounded()).toEqual([]);
  });

  it('a workflow holds up to 500 nodes (CONTRACT §4)', () => {
    const body = byId('createWorkflow').op.requestBody!.content['application/json']!.schema as { properties: { nodes: Json } };
    expect(body.properties.nodes.maxItems).toBe(500);
  });
});

describe('examples', () => {
  const MAIN = ['Lead', 'Workflow', 'Run', 'RunSummary', 'WebhookEndpoint', 'Approval', 'Organization'];

  it('the main resources carry examples that validate against their schemas', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const format of ['int32', 'int64']) ajv.addFormat(format, { type: 'number', validate: (n: number) => Number.isInteger(n) });
    ajv.addSchema({ $id: 'https://doc.test/openapi.json', components: doc.components });
    for (const name of MAIN) {
      const schema = doc.components.schemas[name]!;
      const examples = schema.examples as unknown[] | undefined;
      expect(examples?.length, name).toBeGreaterThan(0);
      const validate = ajv.compile({ $ref: `https://doc.test/openapi.json#/components/schemas/${name}` });
      for (const example of examples!) expect(validate(example) ? [] : validate.errors, name).toEqual([]);
    }
  });

  it('a lead example has the fields a real lead has', async () => {
    const res = await t.call({
      method: 'POST',
      url: `/api/v1/orgs/${t.orgA.orgId}/leads`,
      auth: { apiKey: t.orgA.apiKey },
      payload: { name: 'Ada', email: 'ada-example@example.com' },
    });
    expect(res.statusCode).toBe(201);
    const example = (doc.components.schemas.Lead!.examples as Json[])[0]!;
    expect(Object.keys(example).sort()).toEqual(Object.keys(res.json()).sort());
  });
});

describe('Spectral decisions', () => {
  it('every OWASP rule .spectral.yaml turns off is listed with its reason in docs/openapi.md', () => {
    const ruleset = readFileSync(new URL('../.spectral.yaml', import.meta.url), 'utf8');
    const docs = readFileSync(new URL('../docs/openapi.md', import.meta.url), 'utf8');
    const off = [...ruleset.matchAll(/^\s+(owasp:[\w:-]+): off\s*$/gm)].map((m) => m[1]!);
    expect(off.length).toBeGreaterThan(0);
    const decisions = docs.slice(docs.indexOf('### Decisions'));
    for (const rule of new Set(off)) expect(decisions, rule).toContain(`\`${rule}\``);
  });
});
