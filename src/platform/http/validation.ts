/**
 * The one place that turns schema errors (Ajv's, as Fastify reports them, and TypeBox's
 * `Value.Errors`, which share Ajv's shape) into messages people can read: one problem per field,
 * a union of literals listed once, the name of an unknown or missing property, the limit that was
 * crossed. Each problem stays machine-readable as `{ field, message, code, allowed? }`.
 */

/** An Ajv or TypeBox error (TypeBox's params differ in places; both are read). */
export interface SchemaError {
  instancePath?: string;
  schemaPath?: string;
  keyword?: string;
  params?: object;
  message?: string;
}

export interface Problem {
  /** Where: `body.tags[2]`, `querystring.pageSize`, or the property itself for an unknown or missing one. */
  field: string;
  /** What is wrong, read after the field: `must be one of NEW, CONTACTED`, `is required`. */
  message: string;
  /** The schema keyword that failed (`enum`, `type`, `required`, `additionalProperties`, `maxLength`, …). */
  code: string;
  /** The values the field may take, when the schema lists them. */
  allowed?: unknown[];
}

export interface Explained {
  /** The problems in one line (the first few, then how many more). */
  message: string;
  /** Every problem once. */
  details: Problem[];
}

/** How many problems the one-line message names before "and N more" (details has them all). */
const MESSAGE_PROBLEMS = 5;
/** How many raw errors are read at most (details then lists the problems among them). */
const MAX_ERRORS = 500;

interface Item {
  path: string[];
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message: string;
  /** Position of the first raw error it stands for, so problems keep the order they were found in. */
  order: number;
  /** Already readable (a collapsed union): not a union to collapse again. */
  done?: Problem;
}

/**
 * Readable problems for `errors` found in the value at `root` ('body', 'querystring', 'params',
 * or '' for a value shown without a prefix). `schema`, when given, is the schema the errors came
 * from: it completes the allowed values of a union whose errors were cut short (TypeBox stops at
 * a few errors).
 */
export function explainErrors(errors: readonly SchemaError[], root: string, schema?: unknown): Explained {
  // A large body can fail in thousands of places; the first ones say what is wrong.
  const cut = errors.length > MAX_ERRORS;
  const items: Item[] = errors.slice(0, MAX_ERRORS).map((e, order) => ({
    path: pointerSegments(e.instancePath ?? ''),
    schemaPath: e.schemaPath ?? '',
    keyword: e.keyword ?? '',
    params: (e.params ?? {}) as Record<string, unknown>,
    message: e.message ?? 'is invalid',
    order,
  }));
  const collapsed = collapseUnions(addMissingUnions(items), schema).sort((a, b) => a.order - b.order);
  const seen = new Set<string>();
  const problems: (Problem & { text: string })[] = [];
  for (const item of collapsed) {
    for (const problem of describe(item, root, collapsed)) {
      const key = `${problem.field}\u0000${problem.code}\u0000${problem.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      problems.push(problem);
    }
  }
  const details = problems.map(({ text: _text, ...problem }) => problem);
  const texts = problems.map((p) => p.text);
  const more = texts.length - MESSAGE_PROBLEMS;
  const message =
    texts.length === 0
      ? `${root || 'value'} is invalid`
      : texts.slice(0, MESSAGE_PROBLEMS).join('; ') +
        (more > 0 ? `; and ${more}${cut ? '+' : ''} more problem${more > 1 || cut ? 's' : ''}` : cut ? '; and more problems' : '');
  return { message, details };
}

/** `body` + ['tags', '2'] → `body.tags[2]`. */
export function fieldName(root: string, path: readonly string[]): string {
  let out = root;
  for (const segment of path) {
    if (/^(0|[1-9]\d*)$/.test(segment)) out += `[${segment}]`;
    else out += out ? `.${segment}` : segment;
  }
  return out;
}

function pointerSegments(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** `#/properties/a/anyOf/2/const` → the union `#/properties/a/anyOf` and the branch 2. */
const BRANCH = /^(.*\/(?:anyOf|oneOf))\/(\d+)(?:\/([^/]+))?$/;

/** Ajv's union path ends in `/anyOf`; TypeBox's is the schema holding the `anyOf`. */
function unionPath(item: Item): string {
  return item.schemaPath.endsWith(`/${item.keyword}`) ? item.schemaPath : `${item.schemaPath}/${item.keyword}`;
}

const isUnion = (item: Item) => !item.done && (item.keyword === 'anyOf' || item.keyword === 'oneOf');

/**
 * TypeBox stops after a few errors, so a union's own error may be missing after its branches'
 * errors: put it back for branches that failed right at their own schema (literal, type).
 */
function addMissingUnions(items: Item[]): Item[] {
  const key = (schemaPath: string, path: string[]) => `${schemaPath}\u0000${path.join('/')}`;
  const unions = new Set(items.filter(isUnion).map((u) => key(unionPath(u), u.path)));
  const added: Item[] = [];
  for (const item of items) {
    const match = BRANCH.exec(item.schemaPath);
    if (!match || (match[3] !== undefined && match[3] !== item.keyword)) continue;
    const path = match[1]!;
    if (unions.has(key(path, item.path))) continue;
    unions.add(key(path, item.path));
    const keyword = path.endsWith('/oneOf') ? 'oneOf' : 'anyOf';
    added.push({ path: item.path, schemaPath: path, keyword, params: {}, message: 'must match a schema in anyOf', order: item.order });
  }
  return [...items, ...added];
}

/** Replaces each union's errors (its own and all its branches') with what is worth saying, outermost first. */
function collapseUnions(items: Item[], schema: unknown): Item[] {
  let current = items;
  for (;;) {
    const union = current.filter(isUnion).sort((a, b) => unionPath(a).length - unionPath(b).length)[0];
    if (!union) return current;
    current = collapseUnion(current, union, schema);
  }
}

function collapseUnion(items: Item[], union: Item, schema: unknown): Item[] {
  const prefix = `${unionPath(union)}/`;
  // The same schema can fail at several places (items of an array): only this place's errors.
  const within = (i: Item) => i.path.length >= union.path.length && union.path.every((s, n) => i.path[n] === s);
  const members = items.filter((i) => i === union || (i.schemaPath.startsWith(prefix) && within(i)));
  const taken = new Set(members);
  const rest = items.filter((i) => !taken.has(i));
  const order = Math.min(...members.map((m) => m.order));
  const branches = new Map<string, Item[]>();
  for (const member of members) {
    if (member === union) continue;
    const index = member.schemaPath.slice(prefix.length).split('/')[0]!;
    branches.set(index, [...(branches.get(index) ?? []), member]);
  }
  if (union.keyword === 'oneOf' && Array.isArray(union.params.passingSchemas) && union.params.passingSchemas.length > 1) {
    return [...rest, finished(union, order, { code: 'oneOf', message: 'matches more than one of the allowed forms' })];
  }
  const shallow = (i: Item) => i.path.length === union.path.length;
  const children = members.filter((m) => m !== union);
  // A union of literals (and maybe null): the allowed values, once.
  if (children.length && children.every((c) => shallow(c) && (isLiteral(c) || isUnion(c) || (c.keyword === 'type' && c.params.type === 'null')))) {
    const allowed = literalsAt(schema, unionPath(union)) ?? dedupe(children.flatMap(valuesOf));
    return [...rest, finished(union, order, { code: 'enum', message: oneOf(allowed), allowed })];
  }
  // Otherwise the branch the value came closest to: not one whose type or discriminator it missed.
  const rank = (errors: Item[]) => (errors.some((e) => shallow(e) && (e.keyword === 'type' || isLiteral(e))) ? 2 : errors.some((e) => isLiteral(e)) ? 1 : 0);
  const ranked = [...branches.values()].map((errors) => ({ errors, rank: rank(errors) }));
  const best = ranked.sort((a, b) => a.rank - b.rank || a.errors.length - b.errors.length)[0];
  if (!best || best.rank === 2) {
    // The value is none of the kinds the union allows: name them all.
    const values = dedupe(children.filter((c) => shallow(c) && isLiteral(c)).flatMap(valuesOf));
    const types = dedupe(children.filter((c) => shallow(c) && c.keyword === 'type').flatMap((c) => [c.params.type].flat()));
    const parts = [
      ...(values.length > 1 ? [oneOf(values).replace(/^must be /, '')] : values.map(show)),
      ...types.map((t) => TYPE_NAMES[String(t)] ?? String(t)),
    ];
    const message = parts.length ? `must be ${joinOr(parts)}` : 'does not match any of the allowed forms';
    return [...rest, finished(union, order, { code: 'type', message, ...(values.length && !types.length ? { allowed: values } : {}) })];
  }
  if (best.rank === 1) {
    // Every object form missed on the same tag field (a discriminator): name the tags it may take.
    const tagged = ranked.filter((b) => b.rank === 1).map((b) => b.errors.filter(isLiteral));
    const where = tagged[0]![0]!.path.join('/');
    if (tagged.every((errors) => errors.length && errors.every((e) => e.path.join('/') === where))) {
      const allowed = dedupe(tagged.flat().flatMap(valuesOf));
      return [...rest, { ...finished(union, order, { code: 'enum', message: oneOf(allowed), allowed }), path: tagged[0]![0]!.path }];
    }
  }
  return [...rest, ...best.errors.map((e) => ({ ...e, order }))];
}

function finished(union: Item, order: number, problem: Omit<Problem, 'field'>): Item {
  return { ...union, keyword: problem.code, order, done: { field: '', ...problem } };
}

const isLiteral = (item: Item) => item.keyword === 'const' || item.keyword === 'enum';

function valuesOf(item: Item): unknown[] {
  if (item.keyword === 'const') return [item.params.allowedValue];
  if (item.keyword === 'enum') return (item.params.allowedValues as unknown[] | undefined) ?? [];
  if (item.keyword === 'type' && item.params.type === 'null') return [null];
  return [];
}

/** Every literal a union at `pointer` (a `#/…/anyOf` path) accepts, or null when the schema cannot say. */
function literalsAt(schema: unknown, pointer: string): unknown[] | null {
  if (!schema || !pointer.startsWith('#')) return null;
  let node: unknown = schema;
  for (const segment of pointerSegments(pointer.slice(1))) {
    if (!node || typeof node !== 'object') return null;
    node = (node as Record<string, unknown>)[segment];
  }
  if (!Array.isArray(node)) return null;
  const out: unknown[] = [];
  const collect = (branch: unknown): boolean => {
    if (!branch || typeof branch !== 'object') return false;
    const b = branch as Record<string, unknown>;
    if ('const' in b) return (out.push(b.const), true);
    if (Array.isArray(b.enum)) return (out.push(...(b.enum as unknown[])), true);
    if (b.type === 'null') return (out.push(null), true);
    const inner = b.anyOf ?? b.oneOf;
    return Array.isArray(inner) && inner.every(collect);
  };
  return node.every(collect) ? dedupe(out) : null;
}

function dedupe(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const key = JSON.stringify(v);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Strings as they are (quoted when they would not read as one word), anything else as JSON. */
function show(value: unknown): string {
  if (typeof value === 'string') return /^[\w.:*/@+-]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

function oneOf(values: unknown[]): string {
  return values.length === 1 ? `must be ${show(values[0])}` : `must be one of ${values.map(show).join(', ')}`;
}

function joinOr(parts: string[]): string {
  return parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} or ${parts.at(-1)}`;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const FORMATS: Record<string, string> = {
  'date-time': 'a date-time (ISO 8601 with an offset, e.g. 2026-01-31T09:00:00Z)',
  date: 'a date (YYYY-MM-DD)',
  time: 'a time (HH:MM:SS)',
  email: 'an e-mail address',
  uri: 'a URL',
  url: 'a URL',
  uuid: 'a UUID',
  hostname: 'a host name',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  regex: 'a regular expression',
};

const plural = (n: unknown, one: string, many: string) => `${String(n)} ${Number(n) === 1 ? one : many}`;

/** The readable problem(s) of one error, with its one-line text. */
function describe(item: Item, root: string, all: Item[]): (Problem & { text: string })[] {
  const at = fieldName(root, item.path);
  const problem = (field: string, code: string, message: string, allowed?: unknown[]) => ({
    field,
    message,
    code,
    ...(allowed ? { allowed } : {}),
    text: `${field ? `${field} ` : ''}${message}`,
  });
  const unknown = (names: unknown[], parent = item.path) =>
    names.map((name) => {
      const owner = fieldName(root, parent);
      return {
        field: fieldName(root, [...parent, String(name)]),
        message: `unknown property '${String(name)}'`,
        code: 'additionalProperties',
        text: `${owner ? `${owner}: ` : ''}unknown property '${String(name)}'`,
      };
    });
  if (item.done) return [problem(at, item.done.code, item.done.message, item.done.allowed)];
  const p = item.params;
  const limit = p.limit as number | undefined;
  switch (item.keyword) {
    case 'required': {
      const names = p.missingProperty !== undefined ? [p.missingProperty] : ((p.requiredProperties as unknown[] | undefined) ?? []);
      return names.map((name) => problem(fieldName(root, [...item.path, String(name)]), 'required', 'is required'));
    }
    case 'additionalProperties':
      return unknown(p.additionalProperty !== undefined ? [p.additionalProperty] : ((p.additionalProperties as unknown[] | undefined) ?? []));
    case 'unevaluatedProperties':
      return unknown(p.unevaluatedProperty !== undefined ? [p.unevaluatedProperty] : ((p.unevaluatedProperties as unknown[] | undefined) ?? []));
    case 'boolean': {
      // TypeBox reports an unknown property twice: here (the property's `false` schema) and on its object.
      if (item.schemaPath.endsWith('/additionalProperties') && item.path.length) {
        const parent = item.path.slice(0, -1);
        const reported = all.some((o) => o.keyword === 'additionalProperties' && o.path.join('/') === parent.join('/'));
        return reported ? [] : unknown([item.path.at(-1)], parent);
      }
      return [problem(at, 'not', 'is not allowed')];
    }
    case 'type': {
      const types = [p.type].flat().map((t) => TYPE_NAMES[String(t)] ?? String(t));
      return [problem(at, 'type', `must be ${joinOr(types)}`)];
    }
    case 'const':
      return [problem(at, 'const', oneOf([p.allowedValue]), [p.allowedValue])];
    case 'enum': {
      const allowed = (p.allowedValues as unknown[] | undefined) ?? [];
      return [problem(at, 'enum', oneOf(allowed), allowed)];
    }
    case 'format':
      return [problem(at, 'format', `must be ${FORMATS[String(p.format)] ?? `in the format '${String(p.format)}'`}`)];
    case 'minLength':
      return [problem(at, 'minLength', limit === 1 ? 'must not be empty' : `must be at least ${plural(limit, 'character', 'characters')} long`)];
    case 'maxLength':
      return [problem(at, 'maxLength', `must be at most ${plural(limit, 'character', 'characters')} long`)];
    case 'minimum':
      return [problem(at, 'minimum', `must be at least ${String(limit)}`)];
    case 'maximum':
      return [problem(at, 'maximum', `must be at most ${String(limit)}`)];
    case 'exclusiveMinimum':
      return [problem(at, 'exclusiveMinimum', `must be greater than ${String(limit)}`)];
    case 'exclusiveMaximum':
      return [problem(at, 'exclusiveMaximum', `must be less than ${String(limit)}`)];
    case 'multipleOf':
      return [problem(at, 'multipleOf', `must be a multiple of ${String(p.multipleOf)}`)];
    case 'minItems':
      return [problem(at, 'minItems', limit === 1 ? 'must not be empty' : `must have at least ${plural(limit, 'item', 'items')}`)];
    case 'maxItems':
      return [problem(at, 'maxItems', `must have at most ${plural(limit, 'item', 'items')}`)];
    case 'minProperties':
      return [problem(at, 'minProperties', limit === 1 ? 'must not be empty' : `must have at least ${plural(limit, 'property', 'properties')}`)];
    case 'maxProperties':
      return [problem(at, 'maxProperties', `must have at most ${plural(limit, 'property', 'properties')}`)];
    case 'uniqueItems':
      return [problem(at, 'uniqueItems', 'must not contain the same item twice')];
    case 'pattern':
      return [problem(at, 'pattern', `must match the pattern ${String(p.pattern)}`)];
    case 'dependentRequired':
    case 'dependencies': {
      const needed = p.missingProperty !== undefined ? [p.missingProperty] : ((p.dependencies as unknown[] | undefined) ?? []);
      return needed.map((name) => problem(fieldName(root, [...item.path, String(name)]), 'required', `is required when '${String(p.property)}' is set`));
    }
    case 'if':
      // The failing `then`/`else` branch reports what is wrong itself.
      return all.length > 1 ? [] : [problem(at, 'if', 'is invalid')];
    case 'not':
      return [problem(at, 'not', 'is not allowed')];
    default:
      return [problem(at, item.keyword || 'invalid', item.message)];
  }
}
