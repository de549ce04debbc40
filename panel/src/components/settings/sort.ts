/**
 * Sorting of the short lists the API returns whole (members, API keys, projects): `sort` is a field
 * name, `-field` descending, as in the API's own list query. Missing values sort last.
 */
export function sortRows<T>(rows: readonly T[], sort: string, fields: Record<string, (row: T) => string | number | null | undefined>): T[] {
  const descending = sort.startsWith('-');
  const key = fields[sort.replace(/^-/, '')];
  if (!key) return [...rows];
  const collator = new Intl.Collator(undefined, { sensitivity: 'base', numeric: true });
  return [...rows].sort((a, b) => {
    const x = key(a);
    const y = key(b);
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    const order = typeof x === 'number' && typeof y === 'number' ? x - y : collator.compare(String(x), String(y));
    return descending ? -order : order;
  });
}
