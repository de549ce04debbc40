import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, TEST_PASSWORD, type TestApp } from './harness.ts';
import { Receiver } from './receiver.ts';

/**
 * Bad input never gives 500: every operation of the OpenAPI document, fed requests generated from
 * its own schemas (fast-check, fixed seed) with hostile values mixed in — NUL characters, lone
 * surrogates, deep nesting, `__proto__`, huge numbers, year 0000 — as the organization's owner.
 * A fixed budget of requests, spread evenly over the operations, so the run is deterministic and
 * the same on PGlite and PostgreSQL.
 */

// Fixed in CI; FUZZ_SEED / FUZZ_BUDGET explore further by hand.
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const BUDGET = Number(process.env.FUZZ_BUDGET ?? 900);

type Schema = Record<string, unknown> & {
  type?: string | string[];
  $ref?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
};

interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema: Schema;
}
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
  body?: Schema;
}

/** A value picked when the request is sent: an id the service returned earlier (so routes reach real rows). */
class PoolRef {
  readonly pool: 'ids' | 'types';
  readonly index: number;
  /** The collection the id should come from (`leads` for /leads/{id}), when known. */
  readonly collection: string | undefined;
  constructor(pool: 'ids' | 'types', index: number, collection?: string) {
    this.pool = pool;
    this.index = index;
    this.collection = collection;
  }
}

/** The collection a path names last: `/orgs/{orgId}/leads/{id}/events` → `events`; before a param, the one it indexes. */
function collectionOf(path: string, beforeParam?: string): string | undefined {
  const segments = path.split('/');
  const end = beforeParam ? segments.indexOf(`{${beforeParam}}`) : segments.length;
  return segments
    .slice(0, end)
    .filter((x) => x && !x.startsWith('{'))
    .at(-1);
}
/** JSON nested `depth` levels deep, written as text (the generator's own serialiser stays shallow). */
class Deep {
  readonly depth: number;
  readonly array: boolean;
  constructor(depth: number, array: boolean) {
    this.depth = depth;
    this.array = array;
  }
}

const NASTY_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\udc00\ud800',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'prototype',
  '0000-01-01T00:00:00Z',
  '0000-01-01',
  '0001-01-01T00:00:00+14:00',
  '-000001-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '9999-12-31T23:59:59.999-14:00',
  '2026-02-30',
  '2026-13-01T00:00:00Z',
  '99999999999999999999999',
  '-1',
  '1e309',
  'NaN',
  '%00',
  '{{ $ }}',
  '{{ $$$ }}',
  "' or 1=1 --",
  '😀',
  ' ',
  '',
  'x'.repeat(5000),
  'https://[::127.0.0.1]/x',
  'http://localhost./',
  '*',
];
const NASTY_NUMBERS = [0, -1, 1e308, -1e308, 2 ** 53 + 1, 5e-324, 99999999999999999999, 0.1, -0];
const SORTS = ['createdAt', '-createdAt', 'name', '-updatedAt', '__proto__', '-__proto__', 'constructor', 'toString', 'valueOf', ''];

const nastyString = fc.constantFrom(...NASTY_STRINGS);
const anyString = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.string({ unit: 'binary', maxLength: 20 }));
/** What one mutation puts in place of a well-formed value. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('\u0000', 'ok\u0000', '\ud800', 'ok\udc00', '0000-01-01T00:00:00Z', '0000-01-01', '__proto__') },
  { weight: 3, arbitrary: nastyString },
  { weight: 1, arbitrary: fc.constantFrom(...NASTY_NUMBERS) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, [], {}, new Deep(70, false), new Deep(200, true)) },
);

interface Hints {
  orgId: string;
  email: string;
  receiverUrl: string;
}
type Doc = { components?: { schemas?: Record<string, Schema> } };

function resolveRef(doc: Doc, schema: Schema): Schema {
  let s = schema;
  for (let i = 0; s.$ref && i < 10; i++) s = doc.components?.schemas?.[s.$ref.split('/').pop()!] ?? {};
  return s;
}

/**
 * An arbitrary of values for a schema. `clean`: values the schema accepts as far as it can tell
 * (so requests get past validation into the handlers); otherwise hostile values at every level.
 */
function arbitraryFor(doc: Doc, raw: Schema, hints: Hints, clean: boolean, name = '', depth = 0): fc.Arbitrary<unknown> {
  const schema = resolveRef(doc, raw);
  const mix = (arb: fc.Arbitrary<unknown>) => (clean ? arb : fc.oneof({ weight: 5, arbitrary: arb }, { weight: 1, arbitrary: hostileValue }));
  if (schema.const !== undefined) return mix(fc.constant(schema.const));
  if (schema.enum) return mix(fc.constantFrom(...schema.enum));
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches && branches.length > 0) return fc.oneof(...branches.map((b) => arbitraryFor(doc, b, hints, clean, name, depth)));
  if (schema.allOf && schema.allOf.length > 0) return arbitraryFor(doc, schema.allOf[0]!, hints, clean, name, depth);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((t) => arbitraryFor(doc, { ...schema, type: t }, hints, clean, name, depth)));
  const type = types[0] ?? (schema.properties ? 'object' : undefined);
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return mix(fc.boolean());
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? (clean ? 0 : -1000);
      const max = schema.maximum ?? Math.max(min + 1000, 1000);
      const base =
        type === 'integer'
          ? fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31 - 1) })
          : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
      return mix(base);
    }
    case 'string':
      return mix(stringFor(schema, hints, name, clean));
    case 'array': {
      const item = depth > 4 ? fc.constant('x') : arbitraryFor(doc, schema.items ?? {}, hints, clean, name, depth + 1);
      return mix(
        fc.array(item, {
          minLength: Math.min(schema.minItems ?? 0, 3),
          maxLength: Math.max(Math.min(schema.maxItems ?? 3, 3), Math.min(schema.minItems ?? 0, 3)),
        }),
      );
    }
    case 'object': {
      const props = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const shape: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, sub] of Object.entries(props)) shape[key] = depth > 4 ? fc.constant('x') : arbitraryFor(doc, sub, hints, clean, key, depth + 1);
      const requiredKeys = Object.keys(props).filter((k) => required.has(k));
      const record = Object.keys(shape).length > 0 ? fc.record(shape, { requiredKeys }) : fc.constant({});
      // Free-form objects (`custom`, `input`, params): any JSON.
      const extra =
        schema.additionalProperties === false || depth > 4
          ? fc.constant({})
          : fc.dictionary(
              clean ? fc.string({ minLength: 1, maxLength: 10 }) : fc.oneof(fc.string({ maxLength: 10 }), nastyString),
              clean ? fc.jsonValue({ maxDepth: 2 }) : fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileValue),
              { maxKeys: 3 },
            );
      return mix(fc.tuple(record, extra).map(([r, e]) => ({ ...(e as object), ...(r as object) })));
    }
    default:
      return clean ? fc.jsonValue({ maxDepth: 2 }) : fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileValue);
  }
}

function stringFor(schema: Schema, hints: Hints, name: string, clean: boolean): fc.Arbitrary<unknown> {
  const lower = name.toLowerCase();
  const minLength = Math.min(schema.minLength ?? 0, 20);
  const bounded = schema.pattern
    ? fc.stringMatching(new RegExp(String(schema.pattern))).filter((x) => x.length >= (schema.minLength ?? 0) && x.length <= (schema.maxLength ?? 100))
    : fc.string({ minLength, maxLength: Math.max(Math.min(schema.maxLength ?? 30, 30), minLength) });
  const hinted: fc.Arbitrary<unknown>[] = [];
  if (schema.format === 'date-time' || /^(from|to|until)$|At$/.test(name)) {
    hinted.push(fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()));
    hinted.push(fc.constantFrom('2026-11-01', '2026-11-30'));
    if (!clean) hinted.push(fc.constantFrom('0000-01-01', '0000-01-01T00:00:00Z', '10000-01-01T00:00:00Z', '2026-02-30'));
  }
  if (schema.format === 'email' || lower.includes('email')) hinted.push(fc.constantFrom(hints.email, 'someone@example.com'), fc.emailAddress());
  if (lower === 'password' || lower === 'newpassword') hinted.push(fc.constant(TEST_PASSWORD));
  if (lower.includes('url') || lower === 'website') {
    hinted.push(fc.constantFrom(hints.receiverUrl, 'https://example.com/x'));
    if (!clean) hinted.push(fc.constantFrom('https://[::127.0.0.1]/x', 'http://localhost./', 'not a url'));
  }
  if (lower === 'sort') hinted.push(fc.constantFrom(...(clean ? SORTS.slice(0, 4) : SORTS)));
  if (lower === 'orgid') hinted.push(fc.constant(hints.orgId));
  if (lower.endsWith('id') || lower === 'id') hinted.push(fc.nat().map((n) => new PoolRef('ids', n)));
  if (lower === 'type' || lower.endsWith('type') || lower === 'modelid') hinted.push(fc.nat().map((n) => new PoolRef('types', n)));
  if (lower === 'cron') hinted.push(fc.constantFrom('* * * * *', '0 9 * * 1'));
  if (lower === 'timezone') hinted.push(fc.constantFrom('UTC', 'Europe/Paris'));
  if (lower === 'events') hinted.push(fc.constantFrom('*', 'lead.created'));
  if (hinted.length > 0)
    return fc.oneof({ weight: 3, arbitrary: fc.oneof(...hinted) }, { weight: 1, arbitrary: clean ? bounded : fc.oneof(bounded, anyString) });
  return clean ? bounded : fc.oneof(bounded, anyString);
}

function pathParamFor(path: string, param: Parameter, hints: Hints): fc.Arbitrary<unknown> {
  if (param.name === 'orgId') return fc.constant(hints.orgId);
  const collection = collectionOf(path, param.name);
  return fc.oneof(
    { weight: 6, arbitrary: fc.nat().map((n) => new PoolRef('ids', n, collection)) },
    { weight: 1, arbitrary: fc.nat().map((n) => new PoolRef('ids', n)) },
    { weight: 1, arbitrary: anyString },
  );
}

interface Sample {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body?: unknown;
  /** A body sent as text as is: broken JSON, or a deep document. */
  rawBody?: string;
}

/** Every place in a value a mutation can hit: the value itself, each element and member, and each object (for an extra key). */
function places(value: unknown): { path: (string | number)[]; object: boolean }[] {
  const out: { path: (string | number)[]; object: boolean }[] = [];
  const stack: { v: unknown; path: (string | number)[] }[] = [{ v: value, path: [] }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    out.push({ path, object: false });
    if (Array.isArray(v)) v.forEach((x, i) => stack.push({ v: x, path: [...path, i] }));
    else if (v && typeof v === 'object' && !(v instanceof PoolRef) && !(v instanceof Deep)) {
      out.push({ path, object: true });
      for (const [k, x] of Object.entries(v)) stack.push({ v: x, path: [...path, k] });
    }
  }
  return out;
}

/** A copy of `value` with one place replaced by `hostile` (or, for an object, given a hostile key). */
function mutate(value: unknown, choice: number, hostile: unknown, key: string): unknown {
  const all = places(value);
  const target = all[choice % all.length]!;
  const copy = structuredClonePlain(value);
  if (target.path.length === 0 && !target.object) return hostile;
  let parent = copy as Record<string | number, unknown>;
  for (const step of target.path.slice(0, target.object ? undefined : -1)) parent = parent[step] as Record<string | number, unknown>;
  if (target.object) Object.defineProperty(parent, key, { value: hostile, enumerable: true, configurable: true, writable: true });
  else parent[target.path.at(-1)!] = hostile;
  return copy;
}

function structuredClonePlain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(structuredClonePlain);
  if (value && typeof value === 'object' && !(value instanceof PoolRef) && !(value instanceof Deep)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, structuredClonePlain(v)]));
  }
  return value;
}

/**
 * A request for one operation: a clean one (path, query and body as the schemas want them) with,
 * most of the time, one hostile change: a query value, a path param, one place of the body (a
 * value, or an extra key such as `__proto__` or one holding NUL), the whole body (deep, broken
 * JSON), or hostile values everywhere.
 */
function operationArbitrary(doc: Doc, op: Operation, hints: Hints): fc.Arbitrary<Sample> {
  const params: Record<string, fc.Arbitrary<unknown>> = {};
  const query: Record<string, fc.Arbitrary<unknown>> = {};
  for (const p of op.parameters) {
    if (p.in === 'path') params[p.name] = pathParamFor(op.path, p, hints);
    else if (p.in === 'query') query[p.name] = arbitraryFor(doc, p.schema, hints, true, p.name);
  }
  const queryNames = op.parameters.filter((p) => p.in === 'query').map((p) => p.name);
  const pathNames = op.parameters.filter((p) => p.in === 'path').map((p) => p.name);
  const clean = fc.record({
    params: fc.record(params),
    query: fc.record(query, { requiredKeys: op.parameters.filter((p) => p.in === 'query' && p.required).map((p) => p.name) }),
    body: op.body ? arbitraryFor(doc, op.body, hints, true) : fc.constant(undefined),
  });
  const hostileKey = fc.constantFrom('__proto__', 'constructor', 'k\u0000', '\ud800', 'prototype', 'toString');
  const deepBody = fc.constantFrom(new Deep(65, false), new Deep(10_000, true), new Deep(10_000, false));
  const brokenBody = fc.constantFrom(
    '{',
    '{"a":',
    '"\\u0000"',
    '[1,2',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    '\u0000',
    '1e999999',
    '{"a":"\\ud800"}',
  );
  const mutations: { weight: number; arbitrary: fc.Arbitrary<(s: Sample) => Sample> }[] = [{ weight: 2, arbitrary: fc.constant((s: Sample) => s) }];
  if (queryNames.length > 0) {
    mutations.push({
      weight: 3,
      arbitrary: fc
        .tuple(fc.constantFrom(...queryNames), fc.oneof(hostileValue, fc.constantFrom(...SORTS)))
        .map(([name, v]) => (s: Sample) => ({ ...s, query: { ...s.query, [name]: v } })),
    });
  }
  if (pathNames.length > 0) {
    mutations.push({
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(...pathNames), nastyString).map(([name, v]) => (s: Sample) => ({ ...s, params: { ...s.params, [name]: v } })),
    });
  }
  if (op.body) {
    mutations.push(
      {
        weight: 6,
        arbitrary: fc.tuple(fc.nat(), hostileValue, hostileKey).map(([choice, v, key]) => (s: Sample) => ({ ...s, body: mutate(s.body, choice, v, key) })),
      },
      { weight: 1, arbitrary: deepBody.map((deep) => (s: Sample) => ({ ...s, body: deep })) },
      { weight: 1, arbitrary: brokenBody.map((rawBody) => (s: Sample) => ({ ...s, rawBody })) },
      { weight: 1, arbitrary: arbitraryFor(doc, op.body, hints, false).map((body) => (s: Sample) => ({ ...s, body })) },
    );
  }
  return fc.tuple(clean, fc.oneof(...mutations)).map(([sample, change]) => change(sample as Sample));
}

/** JSON text of a generated value: pool references resolved, `Deep` written out, own `__proto__` keys kept. */
function toJson(value: unknown, pick: (ref: PoolRef) => string): string {
  if (value instanceof PoolRef) return JSON.stringify(pick(value));
  if (value instanceof Deep) {
    const [open, close] = value.array ? ['[', ']'] : ['{"a":', '}'];
    return open.repeat(value.depth) + '1' + close.repeat(value.depth);
  }
  if (value === null || typeof value !== 'object') return value === undefined ? 'null' : (JSON.stringify(value) ?? 'null');
  if (Array.isArray(value)) return `[${value.map((v) => toJson(v, pick)).join(',')}]`;
  return `{${Object.keys(value)
    .map((k) => `${JSON.stringify(k)}:${toJson((value as Record<string, unknown>)[k], pick)}`)
    .join(',')}}`;
}

/**
 * Percent-encoding that keeps what encodeURIComponent refuses: a lone surrogate goes out as the three
 * bytes WTF-8 gives it, as a hostile client would send them.
 */
function encode(text: string): string {
  let out = '';
  for (const ch of text) {
    const cu = ch.charCodeAt(0);
    if (ch.length === 1 && cu >= 0xd800 && cu <= 0xdfff) {
      out += [0xe0 | (cu >> 12), 0x80 | ((cu >> 6) & 0x3f), 0x80 | (cu & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else out += encodeURIComponent(ch);
  }
  return out;
}

function queryText(value: unknown, pick: (ref: PoolRef) => string): string {
  if (value instanceof PoolRef) return pick(value);
  if (value instanceof Deep) return '[object Object]';
  if (Array.isArray(value)) return value.map((v) => queryText(v, pick)).join(',');
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

describe('fuzzing every operation of the OpenAPI document', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await new Receiver().start();
    // Short outbound deadlines: generated endpoints and HTTP steps must not hold the run.
    t = await buildTestApp({ workers: false, env: { WEBHOOK_TIMEOUT_MS: '300' } });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
  });

  it(`answers ${BUDGET} generated requests without one 5xx`, { timeout: 240_000 }, async () => {
    const doc = (await t.call({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: Parameter[];
            requestBody?: { content: Record<string, { schema: Schema }> };
            responses?: Record<string, { content?: Record<string, unknown> }>;
          }
        >
      >;
      components?: { schemas?: Record<string, Schema> };
    };
    const ops: Operation[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        // Streams never end by themselves; they have tests of their own.
        const produces = Object.values(op.responses ?? {}).flatMap((r) => Object.keys(r.content ?? {}));
        if (produces.includes('text/event-stream')) continue;
        if (process.env.FUZZ_SKIP && new RegExp(process.env.FUZZ_SKIP).test(`${method.toUpperCase()} ${path}`)) continue;
        ops.push({ method: method.toUpperCase(), path, parameters: op.parameters ?? [], body: op.requestBody?.content['application/json']?.schema });
      }
    }
    expect(ops.length).toBeGreaterThan(50);

    const hints: Hints = { orgId: t.orgA.orgId, email: t.orgA.ownerEmail, receiverUrl: receiver.url() };
    const pools: Record<'ids' | 'types', string[]> = { ids: [t.orgA.projectId, t.orgA.ownerId, t.orgB.projectId], types: ['offline'] };
    // Ids by the collection that returned them (a created row, a list's items), and all of them.
    const byCollection = new Map<string, string[]>();
    const remember = (value: unknown, path?: string) => {
      const collection = path ? collectionOf(path) : undefined;
      const own = collection ? (byCollection.get(collection) ?? byCollection.set(collection, []).get(collection)!) : null;
      const top = value && typeof value === 'object' ? ((value as { items?: unknown }).items ?? value) : null;
      for (const row of Array.isArray(top) ? top : [top]) {
        const id = (row as { id?: unknown } | null)?.id;
        if (own && typeof id === 'string' && !own.includes(id)) own.push(id);
      }
      const stack = [value];
      while (stack.length > 0) {
        const v = stack.pop();
        if (Array.isArray(v)) stack.push(...v);
        else if (v && typeof v === 'object') {
          for (const [k, x] of Object.entries(v)) {
            if (typeof x === 'string' && x.length < 80) {
              if ((k === 'id' || k.endsWith('Id')) && !pools.ids.includes(x)) pools.ids.push(x);
              if (k === 'type' && !pools.types.includes(x)) pools.types.push(x);
            } else stack.push(x);
          }
        }
      }
    };
    const pick = (ref: PoolRef) => {
      const own = ref.collection ? byCollection.get(ref.collection) : undefined;
      const list = own && own.length > 0 ? own : pools[ref.pool];
      return list[ref.index % list.length]!;
    };
    const auth = { token: t.orgA.token };
    // A few real rows, so generated ids reach existing objects.
    for (const url of ['node-types', 'agent-types', 'templates'])
      remember((await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgA.orgId}/${url}`, auth })).json(), `/${url}`);
    for (const [url, payload] of [
      ['leads', { name: 'Fuzz lead', email: 'fuzz@example.com', custom: { a: 1 } }],
      [
        'workflows',
        {
          name: 'Fuzz flow',
          nodes: [
            { id: 't', type: 'trigger.manual' },
            { id: 's', type: 'data.set', params: { fields: { x: 1 } } },
          ],
          edges: [{ from: 't', to: 's' }],
        },
      ],
      ['webhook-endpoints', { url: receiver.url(), events: ['*'] }],
      ['content', { platform: 'LINKEDIN', body: 'Fuzz post' }],
      ['agents', { name: 'Fuzz agent', type: 'MARKET_ANALYST' }],
    ] as const) {
      remember((await t.call({ method: 'POST', url: `/api/v1/orgs/${t.orgA.orgId}/${url}`, auth, payload })).json(), `/${url}`);
    }

    // The same number of samples for every operation, each from its own seed: adding a route
    // does not change what the others are sent.
    const perOp = Math.ceil(BUDGET / ops.length);
    const samples = ops.map((op, i) => fc.sample(operationArbitrary(doc, op, hints), { seed: SEED + i, numRuns: perOp }));

    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let sent = 0;
    const started = performance.now();
    let hung = false;
    for (let round = 0; round < perOp && sent < BUDGET && !hung; round++) {
      for (let i = 0; i < ops.length && sent < BUDGET && !hung; i++) {
        const op = ops[i]!;
        const sample = samples[i]![round]!;
        let url = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => encode(queryText(sample.params[name], pick)));
        const qs = Object.entries(sample.query)
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${encode(k)}=${encode(queryText(v, pick))}`);
        if (qs.length > 0) url += `?${qs.join('&')}`;
        const payload = sample.rawBody ?? (sample.body !== undefined ? toJson(sample.body, pick) : undefined);
        const headers: Record<string, string> = payload !== undefined ? { 'content-type': 'application/json' } : {};
        sent++;
        let status: number;
        let answer = '';
        try {
          const res = await Promise.race([
            t.call({ method: op.method as 'GET', url, headers, payload, auth }),
            new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer within 15 s')), 15_000).unref()),
          ]);
          status = res.statusCode;
          answer = res.body.slice(0, 300);
          if (status < 300 && (res.headers['content-type'] ?? '').toString().includes('json')) remember(res.json(), op.path);
        } catch (error) {
          status = 0;
          answer = (error as Error).message;
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status >= 500 || status === 0) {
          failures.push(`${op.method} ${url.slice(0, 300)}\n  body: ${(payload ?? '').slice(0, 300)}\n  → ${status} ${answer}`);
          console.log(`fuzz failure: ${failures.at(-1)}`);
          // An answer that never came usually means every later one will not either.
          if (status === 0) hung = true;
        }
      }
    }
    const summary = [...statuses.entries()]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ');
    console.log(`fuzz: ${sent} requests over ${ops.length} operations in ${Math.round(performance.now() - started)} ms (seed ${SEED}); statuses ${summary}`);
    expect(failures, failures.join('\n\n')).toEqual([]);
    expect(sent).toBe(BUDGET);
  });
});
