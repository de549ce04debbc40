/**
 * Calendar arithmetic on dates written `YYYY-MM-DD` (what the calendar API groups by and what the
 * URL carries). A date is computed as a UTC day, so daylight-saving changes never shift a day;
 * times are shown in the browser's time zone, which is also the zone the calendar asks for.
 */
export type CalendarView = 'week' | 'month';

const DAY = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function isDate(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = DATE.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === value;
}

function ms(date: string): number {
  const [y, m, d] = date.split('-').map(Number);
  return Date.UTC(y!, m! - 1, d!);
}

function ymd(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

export function addDays(date: string, days: number): string {
  return ymd(ms(date) + days * DAY);
}

/** Monday of the week the date is in (ISO weeks). */
export function startOfWeek(date: string): string {
  const weekday = (new Date(ms(date)).getUTCDay() + 6) % 7;
  return addDays(date, -weekday);
}

export function addMonths(date: string, months: number): string {
  const d = new Date(ms(date));
  const first = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1);
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months + 1, 0)).getUTCDate();
  return ymd(first + (Math.min(d.getUTCDate(), lastDay) - 1) * DAY);
}

export function sameMonth(a: string, b: string): boolean {
  return a.slice(0, 7) === b.slice(0, 7);
}

/** The days a view shows: a week from Monday, or the whole weeks (Monday to Sunday) that cover the month. */
export function daysOf(view: CalendarView, date: string): string[] {
  if (view === 'week') {
    const start = startOfWeek(date);
    return Array.from({ length: 7 }, (_, i) => addDays(start, i));
  }
  const first = `${date.slice(0, 7)}-01`;
  const last = addDays(addMonths(first, 1), -1);
  const start = startOfWeek(first);
  const days: string[] = [];
  for (let day = start; day <= last || days.length % 7 !== 0; day = addDays(day, 1)) days.push(day);
  return days;
}

/** The date a step back or forward shows. */
export function shift(view: CalendarView, date: string, direction: 1 | -1): string {
  return view === 'week' ? addDays(date, 7 * direction) : addMonths(date, direction);
}

/** The browser's time zone (IANA name); the calendar groups days in it. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Today in a time zone. */
export function todayIn(timeZone: string, now = new Date()): string {
  return dateIn(now.toISOString(), timeZone);
}

/** The calendar date of an instant in a time zone. */
export function dateIn(instant: string, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(new Date(instant));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** "GMT+01:00" for a time zone at an instant. */
export function offsetName(timeZone: string, at = new Date()): string {
  const part = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' }).formatToParts(at).find((p) => p.type === 'timeZoneName');
  return part?.value === 'GMT' ? 'GMT+00:00' : (part?.value ?? '');
}

/** Whether an instant is still to come (approval then schedules rather than publishes). */
export function isFuture(iso: string | null, now = Date.now()): boolean {
  return iso !== null && new Date(iso).getTime() > now;
}

/** An instant as the value of a `datetime-local` field (in the browser's zone). */
export function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `datetime-local` value (the browser's zone) as an ISO 8601 instant; null when empty or invalid. */
export function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

const titleFormats = {
  day: new Intl.DateTimeFormat(undefined, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' }),
  short: new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', timeZone: 'UTC' }),
  weekday: new Intl.DateTimeFormat(undefined, { weekday: 'short', timeZone: 'UTC' }),
  month: new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' }),
  range: new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' }),
};

/** "Monday, 12 January 2026" (the name of a day's region). */
export function dayName(date: string): string {
  return titleFormats.day.format(new Date(ms(date)));
}

/** "Mon 12" (a column head). */
export function dayShort(date: string): string {
  return titleFormats.short.format(new Date(ms(date)));
}

/** "Mon" (a month's column head). */
export function weekdayShort(date: string): string {
  return titleFormats.weekday.format(new Date(ms(date)));
}

/** What the view shows: "January 2026" or "12 Jan 2026 – 18 Jan 2026". */
export function viewTitle(view: CalendarView, date: string): string {
  if (view === 'month') return titleFormats.month.format(new Date(ms(date)));
  const days = daysOf('week', date);
  return titleFormats.range.formatRange(new Date(ms(days[0]!)), new Date(ms(days[6]!)));
}
