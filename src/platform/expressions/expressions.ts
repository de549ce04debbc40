import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type jsonata from 'jsonata';
import { isLinear, namedNodes } from './analysis.ts';
import { compile, evaluateText, ExpressionError, type Item } from './compiled.ts';
import { expressionPool } from './pool.ts';
import { explainErrors, fieldName, type SchemaError } from '../http/validation.ts';

export { compile, evaluationError, ExpressionError, ExpressionLimitError } from './compiled.ts';

/** `{{ … }}` spans inside a param string. */
const SPAN = /\{\{([\s\S]+?)\}\}/g;
const WHOLE = /^\s*\{\{([\s\S]+?)\}\}\s*$/;

export function hasExpression(value: unknown): boolean {
  return typeof value === 'string' && value.includes('{{');
}

/** What expressions can see besides the item (`$`). */
export interface ExpressionScope {
  /** Whose turn the evaluation takes in the expression workers (pool.ts). */
  orgId: string;
  input: Item;
  run: { id: string; workflowId: string; testMode: boolean; startedAt: string | null };
  node(id: string): Item[] | undefined;
  /** The ids `node` may know, for an expression that computes the id it reads (`$node($x)`). */
  nodeIds?: () => Iterable<string>;
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

interface Plan {
  /** Cheap enough for the server's thread (analysis.ts). */
  inline: boolean;
  nodes: string[] | 'all';
}

const plans = new WeakMap<jsonata.Expression, Plan>();

function planOf(expr: jsonata.Expression): Plan {
  let plan = plans.get(expr);
  if (!plan) plans.set(expr, (plan = { inline: isLinear(expr.ast() as never), nodes: namedNodes(expr.ast()) }));
  return plan;
}

/**
 * One bare JSONata expression (no braces) against an item, under the run limits: on this thread
 * when its parse tree shows its cost is linear in the data it reads (a path such as `lead.email`),
 * else in an expression worker, in the organization's turn, with the items of the nodes it names.
 * Sending every expression to the workers doubled the CPU per execution of bench/executions on
 * PostgreSQL (medians of 3 rounds: 5.5 ms, 108 executions/s, against 2.6 ms and 257/s evaluating its
 * two paths inline, and 2.75 ms and 180/s before the workers, on a machine shared with other work).
 */
export async function evaluate(text: string, item: Item, scope: ExpressionScope): Promise<unknown> {
  const expr = compile(text);
  const secrets = await secretsFor(text, scope);
  const plan = planOf(expr);
  if (plan.inline) return evaluateText(text, item, { input: scope.input, run: scope.run, node: (id) => scope.node(id), ...(secrets ? { secrets } : {}) });
  const nodes = new Map<string, Item[]>();
  for (const id of plan.nodes === 'all' ? (scope.nodeIds?.() ?? []) : plan.nodes) {
    const items = scope.node(id);
    if (items) nodes.set(id, items);
  }
  return expressionPool().evaluate(scope.orgId, { text, item, input: scope.input, run: scope.run, nodes, ...(secrets ? { secrets } : {}) });
}

/**
 * Whether evaluating the `{{ … }}` spans of a value (a string, or a tree of them) goes to the
 * expression workers for at least one span: then it may take up to the time limit, and a caller
 * holding a transaction (a campaign batch) renders before it instead. A span that does not compile
 * fails at once wherever it is evaluated: it counts as cheap.
 */
export function runsInWorkers(value: unknown): boolean {
  if (typeof value === 'string') {
    if (!hasExpression(value)) return false;
    for (const match of value.matchAll(SPAN)) {
      try {
        if (!planOf(compile(match[1]!)).inline) return true;
      } catch {
        // A syntax error: its evaluation fails without running.
      }
    }
    return false;
  }
  if (Array.isArray(value)) return value.some(runsInWorkers);
  if (value && typeof value === 'object') return Object.values(value).some(runsInWorkers);
  return false;
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
 *
 * Compiling stays on the server's thread (the workers evaluate): it runs no user code, and its time
 * grows with the text, which the body limit bounds — parsing about 0.2-1 ms per KB here, the check
 * of regex literals (RE2 compiles each) up to about 15 ms per KB of nothing but literals.
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
  return describe(
    schema,
    [...Value.Errors(schema, params)].filter((e) => e.keyword !== 'boolean'),
  );
}

/** A bare JSONata condition (no braces), e.g. `score > 50`. */
export async function evaluateCondition(text: string, item: Item, scope: ExpressionScope): Promise<boolean> {
  const value = await evaluate(text, item, scope);
  return Boolean(Array.isArray(value) ? value.length : value);
}
