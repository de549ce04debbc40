import { localDate, localTime } from '../../platform/range.ts';
import type { CampaignWindow } from './tables.ts';

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** "HH:MM" as minutes after midnight, or null when it is not such a time. */
export function minutesOf(text: string): number | null {
  const m = HHMM.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : null;
}

function ymd(ms: number, tz: string): [number, number, number] {
  const [y, m, d] = localDate(ms, tz).split('-').map(Number) as [number, number, number];
  return [y, m, d];
}

/** ISO weekday (1 Monday … 7 Sunday) of a calendar date. */
function isoWeekday(y: number, m: number, d: number): number {
  const day = new Date(Date.UTC(y, m - 1, d)).getUTCDay();
  return day === 0 ? 7 : day;
}

/**
 * When a send may go out: `now` inside the window, else the next moment the window opens (within
 * the coming week; a window always opens, since it has at least one day and `from` < `to`).
 */
export function nextOpening(window: CampaignWindow, now: Date): Date {
  const from = minutesOf(window.from)!;
  const to = minutesOf(window.to)!;
  const [y, m, d] = ymd(now.getTime(), window.timezone);
  for (let i = 0; i <= 8; i++) {
    const day = new Date(Date.UTC(y, m - 1, d + i));
    const [dy, dm, dd] = [day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate()];
    if (!window.days.includes(isoWeekday(dy, dm, dd))) continue;
    const start = localTime(dy, dm, dd, from, window.timezone).getTime();
    const end = localTime(dy, dm, dd, to, window.timezone).getTime();
    if (now.getTime() < start) return new Date(start);
    if (now.getTime() < end) return now;
  }
  // Unreachable for a valid window; never sleep forever on an invalid one.
  return new Date(now.getTime() + 3_600_000);
}
