/**
 * Calendar days as the analytics APIs speak them: `YYYY-MM-DD` strings (GA4 answers `YYYYMMDD`),
 * with arithmetic done on UTC midnights so no local time zone or daylight-saving shift moves a day.
 */

const DAY_MS = 86_400_000;
const SHAPE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar day in `YYYY-MM-DD` (not 2025-02-30), years 2000–2999 (Google keeps data no older). */
export function isDay(value: string): boolean {
  const m = SHAPE.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 2000 || y > 2999) return false;
  const at = new Date(Date.UTC(y, mo - 1, d));
  return at.getUTCFullYear() === y && at.getUTCMonth() === mo - 1 && at.getUTCDate() === d;
}

export function dayOf(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function msOf(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

export function addDays(day: string, n: number): string {
  return dayOf(new Date(msOf(day) + n * DAY_MS));
}

/** Days from `from` to `to`, both included (1 for the same day; 0 or less when `to` is before `from`). */
export function daysInRange(from: string, to: string): number {
  return Math.round((msOf(to) - msOf(from)) / DAY_MS) + 1;
}

/** Every day from `from` to `to`, in order. */
export function eachDay(from: string, to: string): string[] {
  const out: string[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) out.push(day);
  return out;
}

/** GA4's `20250131` as `2025-01-31`; null for anything else. */
export function fromCompact(value: string): string | null {
  const m = /^(\d{4})(\d{2})(\d{2})$/.exec(value);
  if (!m) return null;
  const day = `${m[1]}-${m[2]}-${m[3]}`;
  return isDay(day) ? day : null;
}
