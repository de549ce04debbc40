import { useId } from 'react';
import type { Campaign } from './model';

const STATS = [
  ['total', 'Total', 'recipients, fixed at the start'],
  ['sent', 'Sent', 'accepted by the channel'],
  ['delivered', 'Delivered', 'reported delivered'],
  ['read', 'Read', 'reported read'],
  ['replied', 'Replied', 'answered'],
  ['failed', 'Failed', 'could not be sent'],
  ['skipped', 'Skipped', 'not sent: see the reason'],
  ['pending', 'Pending', 'still to send or waiting for an outcome'],
] as const;

const TONE: Partial<Record<(typeof STATS)[number][0], string>> = {
  sent: 'text-indigo-700',
  delivered: 'text-emerald-700',
  replied: 'text-violet-700',
  failed: 'text-red-700',
  skipped: 'text-amber-700',
};

/**
 * A campaign's counters (CONTRACT §9: each recipient at most once per counter) and how far it got:
 * recipients no longer pending out of the total. Each number is named by its label, for screen
 * readers and tests alike.
 */
export function Progress({ campaign, live }: { campaign: Campaign; live: boolean }) {
  const id = useId();
  const { stats } = campaign;
  const done = Math.max(0, stats.total - stats.pending);
  const percent = stats.total === 0 ? 0 : Math.round((done / stats.total) * 100);
  return (
    <section aria-labelledby={`${id}-title`} className="rounded-lg bg-white p-5 shadow-xs ring-1 ring-slate-200">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 id={`${id}-title`} className="text-base font-semibold text-slate-900">
          Progress
        </h2>
        <p className="text-xs text-slate-500">
          {live ? (
            <>
              <span className="mr-1 inline-block size-2 animate-pulse rounded-full bg-emerald-500" aria-hidden="true" />
              Live: refreshed every 2 seconds
            </>
          ) : campaign.startedAt ? null : (
            'The audience is resolved when the campaign starts.'
          )}
        </p>
      </div>
      <div className="mt-3 flex items-center gap-3">
        <div
          role="progressbar"
          aria-label="Recipients done"
          aria-valuemin={0}
          aria-valuemax={stats.total}
          aria-valuenow={done}
          className="h-2.5 flex-1 overflow-hidden rounded-full bg-slate-100"
        >
          <div className="h-full rounded-full bg-indigo-600 transition-[width] duration-500" style={{ width: `${percent}%` }} />
        </div>
        <span className="w-40 text-right text-sm text-slate-700">
          {done.toLocaleString()} of {stats.total.toLocaleString()} done ({percent}%)
        </span>
      </div>
      <dl className="mt-4 grid grid-cols-2 gap-3 sm:grid-cols-4 xl:grid-cols-8">
        {STATS.map(([key, label, hint]) => (
          <div key={key} className="rounded-md bg-slate-50 px-3 py-2 ring-1 ring-slate-200" title={hint}>
            <dt id={`${id}-${key}`} className="text-xs font-medium text-slate-500">
              {label}
            </dt>
            <dd aria-labelledby={`${id}-${key}`} className={`mt-0.5 text-2xl font-semibold tabular-nums ${TONE[key] ?? 'text-slate-900'}`}>
              {stats[key].toLocaleString()}
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
