import { Badge } from '../ui/page';
import { dayName, dayShort, sameMonth, weekdayShort, type CalendarView } from './dates';
import { PLATFORM_LABELS } from './preview';
import type { Platform } from '../../../../src/shared/platforms.ts';

export interface Entry {
  postId: string;
  platform: string;
  status: string;
  /** When it is (to be) published, or failed. */
  at: string;
  /** The calendar date of `at` in the calendar's time zone. */
  date: string;
  title: string;
}

const time = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const MONTH_CELL = 3;

const TONE: Record<string, string> = {
  DRAFT: 'border-l-amber-400 bg-amber-50/60',
  APPROVED: 'border-l-emerald-400 bg-emerald-50/60',
  SCHEDULED: 'border-l-indigo-500 bg-indigo-50',
  PUBLISHING: 'border-l-sky-500 bg-sky-50',
  PUBLISHED: 'border-l-emerald-600 bg-emerald-50',
  FAILED: 'border-l-red-600 bg-red-50',
};

/**
 * The calendar: a week (a column per day, each post at its time) or a month (a cell per day, the
 * first posts and how many more). Each day is a region named by its date; each post a button
 * that opens it.
 */
export function Calendar({
  view,
  anchor,
  days,
  entries,
  today,
  onOpen,
  onShowWeek,
}: {
  view: CalendarView;
  anchor: string;
  days: string[];
  entries: Entry[];
  today: string;
  onOpen: (postId: string) => void;
  onShowWeek: (date: string) => void;
}) {
  const byDate = new Map<string, Entry[]>();
  for (const e of [...entries].sort((a, b) => a.at.localeCompare(b.at))) byDate.set(e.date, [...(byDate.get(e.date) ?? []), e]);
  const heads = days.slice(0, 7);
  return (
    <div className="overflow-hidden rounded-lg bg-white shadow-xs ring-1 ring-slate-200">
      <div aria-hidden="true" className="grid grid-cols-7 border-b border-slate-200 bg-slate-50 text-xs font-semibold tracking-wide text-slate-600 uppercase">
        {heads.map((d) => (
          <div key={d} className="px-2 py-2">
            {view === 'week' ? dayShort(d) : weekdayShort(d)}
          </div>
        ))}
      </div>
      <div className="grid grid-cols-7">
        {days.map((date) => {
          const list = byDate.get(date) ?? [];
          const outside = view === 'month' && !sameMonth(date, anchor);
          const shown = view === 'month' ? list.slice(0, MONTH_CELL) : list;
          return (
            <section
              key={date}
              aria-label={dayName(date)}
              className={`space-y-1 border-r border-b border-slate-100 p-1.5 [&:nth-child(7n)]:border-r-0 ${view === 'week' ? 'min-h-80' : 'min-h-28'} ${outside ? 'bg-slate-50/70' : ''}`}
            >
              {view === 'month' ? (
                <p
                  className={`px-1 text-xs ${date === today ? 'inline-flex size-6 items-center justify-center rounded-full bg-indigo-600 font-semibold text-white' : outside ? 'text-slate-400' : 'text-slate-600'}`}
                >
                  {Number(date.slice(8))}
                </p>
              ) : date === today ? (
                <p className="px-1 text-xs font-semibold text-indigo-700">Today</p>
              ) : null}
              {list.length ? (
                <ul className="space-y-1">
                  {shown.map((e) => (
                    <li key={e.postId}>
                      <EntryButton entry={e} compact={view === 'month'} onOpen={onOpen} />
                    </li>
                  ))}
                </ul>
              ) : null}
              {list.length > shown.length ? (
                <button type="button" className="px-1 text-xs font-medium text-indigo-700 hover:underline" onClick={() => onShowWeek(date)}>
                  +{list.length - shown.length} more
                </button>
              ) : null}
            </section>
          );
        })}
      </div>
    </div>
  );
}

function EntryButton({ entry, compact, onOpen }: { entry: Entry; compact: boolean; onOpen: (postId: string) => void }) {
  const platform = PLATFORM_LABELS[entry.platform as Platform] ?? entry.platform;
  const at = time.format(new Date(entry.at));
  return (
    <button
      type="button"
      onClick={() => onOpen(entry.postId)}
      aria-label={`${at} ${platform} ${entry.status.toLowerCase()}: ${entry.title}`}
      className={`block w-full rounded border-l-4 px-1.5 py-1 text-left text-xs hover:ring-1 hover:ring-slate-300 focus:ring-2 focus:ring-indigo-600 focus:outline-none ${TONE[entry.status] ?? 'border-l-slate-300 bg-slate-50'}`}
    >
      <span className="block text-slate-500 tabular-nums">
        {at} · {platform}
      </span>
      <span className={`mt-0.5 block text-slate-800 [overflow-wrap:anywhere] ${compact ? 'truncate' : 'line-clamp-3'}`}>{entry.title || '(no text)'}</span>
      {compact ? null : (
        <span className="mt-1 block">
          <Badge>{entry.status}</Badge>
        </span>
      )}
    </button>
  );
}
