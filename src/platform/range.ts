import { isStorableTime } from './dates.ts';
import { badRequest } from './errors.ts';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// An ISO 8601 timestamp with an offset (Z or ±hh:mm); without one the moment would be ambiguous.
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

export function assertTimezone(tz: string, field = 'timezone'): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    throw badRequest(`Unknown time zone "${tz}"; use an IANA name such as Europe/Paris`, [{ field, message: 'must be an IANA time zone' }]);
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(tz, f);
  }
  return f;
}

function parts(tz: string, ms: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of formatter(tz).formatToParts(new Date(ms))) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return out;
}

/** The zone's offset from UTC at that instant, in milliseconds. */
export function offsetMs(tz: string, ms: number): number {
  const p = parts(tz, ms);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) - Math.floor(ms / 1000) * 1000;
}

/** The instant a wall-clock time (minutes after midnight) of a calendar day has in a time zone. */
export function localTime(year: number, month: number, day: number, minutes: number, tz: string): Date {
  const guess = Date.UTC(year, month - 1, day, 0, minutes);
  let t = guess - offsetMs(tz, guess);
  const again = offsetMs(tz, t);
  if (guess - again !== t) t = guess - again;
  return new Date(t);
}

/** The instant a calendar day starts in a time zone. */
export function startOfDay(year: number, month: number, day: number, tz: string): Date {
  return localTime(year, month, day, 0, tz);
}

/** The calendar date (YYYY-MM-DD) of an instant in a time zone. */
export function localDate(ms: number, tz: string): string {
  const p = parts(tz, ms);
  return `${String(p.year).padStart(4, '0')}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
}

/**
 * One end of a CONTRACT §6 range: a date (`2026-11-01`) is that whole day in `tz` (`from` its
 * start, `to` the next day's start), a timestamp is that instant. `field` names it in the error.
 */
export function rangeBound(value: string, which: 'from' | 'to', tz = 'UTC', field: string = which): Date {
  const d = DATE.exec(value);
  if (d) {
    const [y, m, day] = [Number(d[1]), Number(d[2]), Number(d[3])];
    const check = new Date(Date.UTC(y, m - 1, day));
    if (check.getUTCMonth() !== m - 1 || check.getUTCDate() !== day || !isStorableTime(check.getTime()))
      throw badRequest(`${which}: ${value} is not a calendar date`, [{ field, message: 'is not a valid date' }]);
    // A date is that whole day: `from` starts it, `to` includes it (the range ends where the next day starts).
    return which === 'from' ? startOfDay(y, m, day, tz) : startOfDay(y, m, day + 1, tz);
  }
  if (TIMESTAMP.test(value)) {
    const ms = Date.parse(value);
    if (isStorableTime(ms)) return new Date(ms);
  }
  throw badRequest(`${which} must be a date (2026-11-01) or an ISO 8601 timestamp with an offset (2026-11-01T09:00:00+02:00)`, [
    { field, message: 'must be a date or an ISO 8601 timestamp with offset' },
  ]);
}

/**
 * CONTRACT §6 date ranges: a date means that whole day (in the time zone, UTC by default): `from` is
 * its start and `to` includes it; a timestamp `to` is exclusive. The result is half-open [from, to).
 */
export function parseRange(from: string, to: string, timezone = 'UTC'): { from: Date; to: Date } {
  const tz = assertTimezone(timezone);
  const range = { from: rangeBound(from, 'from', tz), to: rangeBound(to, 'to', tz) };
  if (range.to.getTime() <= range.from.getTime()) throw badRequest('`to` must be after `from`', [{ field: 'to', message: 'must be after from' }]);
  return range;
}
