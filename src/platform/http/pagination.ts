import { asc, desc, type AnyColumn, type SQL } from 'drizzle-orm';
import { badRequest } from '../errors.ts';

export interface ListQuery {
  page?: number;
  pageSize?: number;
  sort?: string;
  q?: string;
}

export interface Page {
  page: number;
  pageSize: number;
  limit: number;
  offset: number;
}

export function pageOf(query: ListQuery): Page {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? 20;
  return { page, pageSize, limit: pageSize, offset: (page - 1) * pageSize };
}

/**
 * `sort` only on allow-listed fields; anything else is a 400 naming the allowed ones.
 * The id is always the last key so pages are stable.
 */
export function orderBy(sort: string | undefined, allowed: Record<string, AnyColumn>, fallback: string, tiebreak: AnyColumn): SQL[] {
  const spec = sort && sort.length > 0 ? sort : fallback;
  const descending = spec.startsWith('-');
  const field = descending ? spec.slice(1) : spec;
  // Own keys only: `__proto__`, `constructor` or `toString` must not find Object.prototype's members.
  const column = Object.hasOwn(allowed, field) ? allowed[field] : undefined;
  if (!column) {
    throw badRequest(`Cannot sort by "${field}"; allowed: ${Object.keys(allowed).join(', ')}`, [
      { field: 'querystring.sort', message: `must be one of ${Object.keys(allowed).join(', ')} (optionally prefixed with -)` },
    ]);
  }
  return descending ? [desc(column), desc(tiebreak)] : [asc(column), asc(tiebreak)];
}

export function envelope<T>(items: T[], total: number, page: Page) {
  return { items, total, page: page.page, pageSize: page.pageSize };
}

/**
 * A list's `status` filter (`status=NEW,won`): the named statuses upper-cased, each one of `allowed`;
 * 400 naming the unknown ones and the allowed ones otherwise.
 */
export function statusesOf(raw: string, allowed: readonly string[]): string[] {
  const statuses = raw
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  const bad = statuses.filter((s) => !allowed.includes(s));
  if (bad.length)
    throw badRequest(`Unknown status ${bad.join(', ')}; allowed: ${allowed.join(', ')}`, [
      { field: 'querystring.status', message: `must be one of ${allowed.join(', ')}` },
    ]);
  return statuses;
}
