import jsonata from 'jsonata';
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { Item } from '../nodes/types.ts';
import { arm, jsonataOptions, limitMessage } from './limits.ts';
import { explainErrors, fieldName, type SchemaError } from '../../../platform/http/validation.ts';

/** `{{ … }}` spans inside a param string. */
const SPAN = /\{\{([\s\S]+?)\}\}/g;
const WHOLE = /^\s*\{\{([\s\S]+?)\}\}\s*$/;

export function hasExpression(value: unknown): boolean {
  return typeof value === 'string' && value.includes('{{');
}

const cache = new Map<string, jsonata.Expression>();

/** Compiles (once) a JSONata expression; throws with a readable message on a syntax error. */
export function compile(text: string): jsonata.Expression {
  let expr = cache.get(text);
  if (!expr) {
    try {
      // Every evaluation runs under the limits of limits.ts (time, depth, size, linear-time regexes).
      expr = arm(jsonata(text, jsonataOptions));
    } catch (error) {
      throw new ExpressionError(`invalid expression "${text.trim()}": ${(error as Error).message}`);
    }
    if (cache.size > 5000) cache.clear();
    cache.set(text, expr);
  }
  return expr;
}

export class ExpressionError extends Error {
  /** The run step's error code. */
  readonly code: string = 'EXPRESSION_ERROR';
}

/** An evaluation stopped by one of its limits (time, depth, size). */
export class ExpressionLimitError extends ExpressionError {
  override readonly code = 'EXPRESSION_LIMIT';
}

/** The error of a failed evaluation of `text`: a limit hit, or the expression's own failure. */
export function evaluationError(text: string, error: unknown): ExpressionError {
  const limit = limitMessage(error);
  const shown = text.trim().length > 200 ? `${text.trim().slice(0, 200)}…` : text.trim();
  if (limit) return new ExpressionLimitError(`expression "${shown}" stopped: it ${limit}`);
  return new ExpressionError(`expression "${shown}" failed: ${(error as Error)?.message ?? String(error)}`);
}

/** What expressions can see besides the item (`$`). */
export interface ExpressionScope {
  input: Item;
  run: { id: string; workflowId: string; testMode: boolean; startedAt: string | null };
  node(id: string): Item[] | undefined;
  /** The organization's secrets (`$secrets.NAME`), loaded only when an expression names `$secrets`. */
  secrets?: () => Promise<Record<string, string>>;
}

/** A `$secrets.NAME` whose secret the organization does not have: the node fails saying which. */
export class MissingSecretError extends ExpressionError {
  override readonly code = 'SECRET_MISSING';
}

const SECRET_REF = /\$secrets\.([A-Za-z_][A-Za-z0-9_]*)/g;

/** `$secrets` for an expression that names it; a named secret that does not exist is an error, not an empty string. */
async function secretsFor(text: string, scope: ExpressionScope): Promise<Record<string, string> | undefined> {
  if (!scope.secrets || !text.includes('$secrets')) return undefined;
  const secrets = await scope.secrets();
  for (const [, name] of text.matchAll(SECRET_REF)) {
    if (!Object.hasOwn(secrets, name!)) throw new MissingSecretError(`secret "${name}" is not set in this organization (PUT …/secrets/${name})`);
  }
  return secrets;
}

/** One bare JSONata expression (no braces) against an item, under the run limits. */
export async function evaluate(text: string, item: Item, scope: ExpressionScope): Promise<unknown> {
  const expr = compile(text);
  const secrets = await secretsFor(text, scope);
  try {
    const out = await expr.evaluate(item, {
      input: scope.input,
      run: scope.run,
      node: (id: string) => scope.node(id),
      ...(secrets ? { secrets } : {}),
    });
    // JSONata sequences are arrays with extra markers; hand back plain JSON.
    return out === undefined ? undefined : JSON.parse(JSON.stringify(out));
  } catch (error) {
    throw evaluationError(text, error);
  }
}

/** A string that is one whole expression keeps the value's type; expressions inside text are interpolated. */
async function resolveString(text: string, item: Item, scope: ExpressionScope): Promise<unknown> {
  const whole = WHOLE.exec(text);
  if (whole && !whole[1]!.includes('{{')) return evaluate(whole[1]!, item, scope);
  let out = '';
  let last = 0;
  for (const match of text.matchAll(SPAN)) {
    out += text.slice(last, match.index);
    const value = await evaluate(match[1]!, item, scope);
    out += value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
    last = match.index! + match[0].length;
  }
  return out + text.slice(last);
}

/** Evaluates every `{{ … }}` in a params tree against one item. Values without expressions are returned as they are. */
export async function resolveParams(value: unknown, item: Item, scope: ExpressionScope): Promise<unknown> {
  if (typeof value === 'string') return hasExpression(value) ? resolveString(value, item, scope) : value;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const v of value) {
      const resolved = await resolveParams(v, item, scope);
      if (resolved !== undefined) out.push(resolved);
    }
    return out;
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const resolved = await resolveParams(v, item, scope);
      if (resolved !== undefined) out[k] = resolved;
    }
    return out;
  }
  return value;
}

function pointer(root: unknown, path: string): unknown {
  let at: unknown = root;
  for (const raw of path.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** The problems, in the words of the API's own validation errors. */
function describe(schema: TSchema, errors: SchemaError[]): string {
  return explainErrors(errors, '', schema).message;
}

/**
 * Checks params written in a workflow against the node's schema. A value that holds an expression
 * can only be checked once evaluated, so errors on such values are left to run time; expressions
 * must still compile. The problem names the param (`url`, `fields.name`) where it can.
 */
export function checkWrittenParams(schema: TSchema, params: unknown): { message: string; param?: string } | null {
  let problem: { message: string; param?: string } | null = null;
  const walk = (value: unknown, path: string[]) => {
    if (problem) return;
    if (typeof value === 'string' && hasExpression(value)) {
      for (const match of value.matchAll(SPAN)) {
        try {
          compile(match[1]!);
        } catch (error) {
          problem ??= { message: (error as Error).message, ...(path.length ? { param: fieldName('', path) } : {}) };
        }
      }
    } else if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...path, String(i)]));
    else if (value && typeof value === 'object') Object.entries(value).forEach(([k, v]) => walk(v, [...path, k]));
  };
  walk(params, []);
  if (problem) return problem;
  const errors = [...Value.Errors(schema, params)].filter((e) => e.keyword !== 'boolean' && !hasExpression(pointer(params, e.instancePath)));
  if (!errors.length) return null;
  const explained = explainErrors(errors, '', schema);
  const field = (explained.details[0] as { field?: string } | undefined)?.field;
  return { message: explained.message, ...(field ? { param: field } : {}) };
}

/** Checks evaluated params; null when they match. */
export function checkResolvedParams(schema: TSchema, params: unknown): string | null {
  if (Value.Check(schema, params)) return null;
  return describe(schema, [...Value.Errors(schema, params)].filter((e) => e.keyword !== 'boolean'));
}

/** A bare JSONata condition (no braces), e.g. `score > 50`. */
export async function evaluateCondition(text: string, item: Item, scope: ExpressionScope): Promise<boolean> {
  const value = await evaluate(text, item, scope);
  return Boolean(Array.isArray(value) ? value.length : value);
}
