/**
 * Lists keep their filters, sort and page in the URL (CONTRACT §11). A route's `validateSearch`
 * turns the raw query into typed values with these helpers; anything unparsable falls back to its
 * default, so a hand-edited URL never breaks the page.
 */
export interface ListSearch {
  page?: number;
  pageSize?: number;
  sort?: string;
  q?: string;
}

/** The defaults a list page reads when the URL leaves them out. */
export const PAGE = 1;
export const PAGE_SIZE = 20;

export function int(value: unknown, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isInteger(n) && n >= min && n <= max ? n : fallback;
}

export function str(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

export function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | undefined {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
}

/**
 * page, pageSize (at most 100, as the API allows), sort (one of `sorts`, with or without `-`) and q;
 * all optional, so links to a list need not name them (read them with `?? PAGE` and `?? PAGE_SIZE`).
 */
export function listSearch(raw: Record<string, unknown>, sorts: readonly string[]): ListSearch {
  const sort = str(raw.sort);
  const page = int(raw.page, PAGE);
  const pageSize = int(raw.pageSize, PAGE_SIZE, 1, 100);
  return {
    page: page === PAGE ? undefined : page,
    pageSize: pageSize === PAGE_SIZE ? undefined : pageSize,
    sort: sort && sorts.includes(sort.replace(/^-/, '')) ? sort : undefined,
    q: str(raw.q),
  };
}

/** Drops empty values, so the URL carries only what is set. */
export function compact<T extends object>(search: T): Partial<T> {
  return Object.fromEntries(Object.entries(search).filter(([, v]) => v !== undefined && v !== '' && v !== null)) as Partial<T>;
}
