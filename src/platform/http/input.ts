import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from '../errors.ts';

/** Deepest nesting a request body may have; real payloads stay far below, and deeper ones overflow the stack of recursive code (serialisers, validators) further on. */
export const MAX_BODY_DEPTH = 64;

/**
 * One normalisation rule for every string a request carries (body values and keys, query values,
 * path params): no NUL character, which PostgreSQL cannot store in text or jsonb, and no lone UTF-16
 * surrogate, which is not text at all. Numbers must be finite: `1e999` in JSON and `page=1e309` in
 * a query become Infinity, which ajv lets through its integer and range checks. Returns the first
 * problem with the field it is in, or null. The walk is iterative, so a hostile depth cannot
 * overflow the stack here.
 */
export function inputProblem(value: unknown, root: string, maxDepth = Infinity): { field: string; message: string } | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: root, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = stringProblem(v);
      if (problem) return { field: path, message: problem };
      continue;
    }
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return { field: path, message: 'must be a finite number' };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= maxDepth) return { field: path, message: `is nested deeper than ${maxDepth} levels` };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: `${path}.${i}`, depth: depth + 1 });
      continue;
    }
    for (const key of Object.keys(v)) {
      const problem = stringProblem(key);
      if (problem) return { field: `${path}.${printable(key)}`, message: `has a key that ${problem.replace(/^must not contain/, 'contains')}` };
      stack.push({ value: (v as Record<string, unknown>)[key], path: `${path}.${key}`, depth: depth + 1 });
    }
  }
  return null;
}

function stringProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  if (!s.isWellFormed()) return 'must not contain a lone UTF-16 surrogate';
  return null;
}

/** A key as it can be shown in a message (the NUL itself would end up in the log and the response). */
function printable(key: string): string {
  return key.toWellFormed().replaceAll('\u0000', '\\u0000');
}

function check(value: unknown, root: string, maxDepth?: number): void {
  const problem = inputProblem(value, root, maxDepth);
  if (problem) {
    const field = problem.field.toWellFormed().replaceAll('\u0000', '\\u0000');
    throw badRequest(`${field} ${problem.message}`, [{ field, message: problem.message }]);
  }
}

/**
 * Applies the rule to every route: path params and the query before anything else runs (the
 * organization guard already queries with the org id) and again once validation coerced them to
 * numbers; the parsed body (JSON, CSV, anything a parser produced) before validation, depth-limited.
 */
export function registerInputChecks(app: FastifyInstance): void {
  const paramsAndQuery = async (request: FastifyRequest) => {
    check(request.params, 'params');
    check(request.query, 'querystring');
  };
  app.addHook('onRequest', paramsAndQuery);
  app.addHook('preValidation', async (request: FastifyRequest) => {
    if (request.body !== undefined) check(request.body, 'body', MAX_BODY_DEPTH);
  });
  app.addHook('preHandler', paramsAndQuery);
}
