import { isStorableTime } from '../../platform/dates.ts';
import { badRequest } from '../../platform/errors.ts';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * CONTRACT §6 date ranges: a date (`2026-11-01`) means that whole day in UTC — `from` is its start
 * and a date `to` includes it; an ISO 8601 timestamp `to` is exclusive. Returns [from, to).
 */
export function parseRange(from: string | undefined, to: string | undefined, defaults: { from: Date; to: Date }): { from: Date; to: Date } {
  const start = from ? parseBound(from, 'from', false) : defaults.from;
  const end = to ? parseBound(to, 'to', true) : defaults.to;
  if (end.getTime() < start.getTime()) throw badRequest('`to` is before `from`', [{ field: 'querystring.to', message: 'must not be before from' }]);
  return { from: start, to: end };
}

function parseBound(value: string, field: 'from' | 'to', endOfDay: boolean): Date {
  if (DATE.test(value)) {
    const d = new Date(`${value}T00:00:00.000Z`);
    if (!isStorableTime(d.getTime()) || d.toISOString().slice(0, 10) !== value) throw invalid(field, value);
    return endOfDay ? new Date(d.getTime() + 86_400_000) : d;
  }
  // A timestamp needs a time part; an offset is accepted (no offset means UTC).
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) throw invalid(field, value);
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(value);
  const d = new Date(hasZone ? value : value + 'Z');
  if (!isStorableTime(d.getTime())) throw invalid(field, value);
  return d;
}

function invalid(field: string, value: string) {
  return badRequest(`${field} must be a date (YYYY-MM-DD) or an ISO 8601 timestamp, got "${value.slice(0, 40)}"`, [
    { field: `querystring.${field}`, message: 'must be a date or an ISO 8601 timestamp' },
  ]);
}

/** The UTC calendar month holding `now`: [start, next start) and its `YYYY-MM` label. */
export function monthOf(now: Date): { start: Date; end: Date; period: string } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, end, period: start.toISOString().slice(0, 7) };
}
