import type { ReactNode } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatDateTime, formatUsd } from '../../lib/format';
import { budgetShare, hasData, type ChartRow } from './chart-data';

export const COLORS = {
  indigo: '#6366f1',
  emerald: '#10b981',
  red: '#ef4444',
  amber: '#f59e0b',
  sky: '#0ea5e9',
  violet: '#8b5cf6',
} as const;

export interface SeriesSpec {
  metric: string;
  label: string;
  color: string;
}

/** A chart with its title and figures; the figures are also the chart's text for screen readers. */
export function ChartCard({ title, summary, children }: { title: string; summary: string; children: ReactNode }) {
  return (
    <figure className="rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200" aria-label={title}>
      <figcaption className="mb-3 flex items-baseline justify-between gap-2">
        <span className="font-semibold text-slate-900">{title}</span>
        <span className="text-sm text-slate-600">{summary}</span>
      </figcaption>
      {children}
    </figure>
  );
}

function NoData() {
  return <div className="flex h-56 items-center justify-center rounded-md bg-slate-50 text-sm text-slate-500">Nothing in this range yet.</div>;
}

const axis = { fontSize: 12, fill: '#64748b' };

/** "$12", "$0.25", "$0.0031": as many digits as a small amount needs, no more. */
export function moneyTick(value: number): string {
  if (value === 0) return '$0';
  return Math.abs(value) >= 10 ? `$${Math.round(value)}` : `$${Number(value.toPrecision(2))}`;
}

/** Bars per bucket, side by side or stacked. */
export function BarsChart({ rows, series, stacked, money }: { rows: readonly ChartRow[]; series: readonly SeriesSpec[]; stacked?: boolean; money?: boolean }) {
  if (
    !hasData(
      rows,
      series.map((s) => s.metric),
    )
  )
    return <NoData />;
  return (
    <div className="h-56" role="img" aria-label={series.map((s) => s.label).join(' and ') + ' per period'}>
      <ResponsiveContainer width="100%" height="100%">
        <BarChart data={rows as ChartRow[]} margin={{ top: 4, right: 8, bottom: 0, left: -12 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e2e8f0" />
          <XAxis dataKey="label" tick={axis} tickLine={false} axisLine={{ stroke: '#cbd5e1' }} minTickGap={12} />
          <YAxis tick={axis} tickLine={false} axisLine={false} allowDecimals={Boolean(money)} tickFormatter={money ? moneyTick : undefined} />
          <Tooltip formatter={money ? (v) => formatUsd(Number(v)) : undefined} cursor={{ fill: '#f1f5f9' }} />
          {series.length > 1 ? <Legend wrapperStyle={{ fontSize: 12 }} /> : null}
          {series.map((s) => (
            <Bar
              key={s.metric}
              dataKey={(row: ChartRow) => row[s.metric]}
              name={s.label}
              fill={s.color}
              stackId={stacked ? 'stack' : undefined}
              radius={stacked ? 0 : [3, 3, 0, 0]}
              maxBarSize={40}
              isAnimationActive={false}
            />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

const BAR_TONE = { none: 'bg-slate-300', ok: 'bg-emerald-500', warning: 'bg-amber-500', over: 'bg-red-600' } as const;

/** This month's AI spend against the monthly budget, as a meter. */
export function BudgetMeter({ usedUsd, limitUsd, resetsAt, action }: { usedUsd: number; limitUsd: number | null; resetsAt?: string; action?: ReactNode }) {
  const share = budgetShare(usedUsd, limitUsd);
  return (
    <div className="space-y-3">
      <p className="text-3xl font-semibold text-slate-900 tabular-nums">
        {formatUsd(usedUsd)}
        <span className="ml-2 text-base font-normal text-slate-500">{limitUsd === null ? 'spent, no monthly budget' : `of ${formatUsd(limitUsd)}`}</span>
      </p>
      {limitUsd !== null ? (
        <>
          <Meter share={share} />
          <ShareText share={share} />
        </>
      ) : null}
      {resetsAt ? <p className="text-xs text-slate-500">The month resets {formatDateTime(resetsAt)}.</p> : null}
      {action}
    </div>
  );
}

/** The same on one line, for the top of the dashboard. */
export function BudgetStrip({ usedUsd, limitUsd, action }: { usedUsd: number; limitUsd: number | null; action?: ReactNode }) {
  const share = budgetShare(usedUsd, limitUsd);
  return (
    <div className="flex flex-wrap items-center gap-x-6 gap-y-2">
      <p className="text-lg font-semibold text-slate-900 tabular-nums">
        {formatUsd(usedUsd)}
        <span className="ml-1.5 text-sm font-normal text-slate-500">{limitUsd === null ? 'spent, no monthly budget set' : `of ${formatUsd(limitUsd)}`}</span>
      </p>
      {limitUsd !== null ? (
        <div className="min-w-48 flex-1">
          <Meter share={share} />
        </div>
      ) : (
        <div className="flex-1" />
      )}
      {limitUsd !== null ? <ShareText share={share} /> : null}
      {action}
    </div>
  );
}

function Meter({ share }: { share: ReturnType<typeof budgetShare> }) {
  return (
    <div
      role="meter"
      aria-label="Monthly budget used"
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.min(100, share.pct ?? 0)}
      aria-valuetext={`${share.pct ?? 0} % of the monthly budget`}
      className="h-3 w-full overflow-hidden rounded-full bg-slate-100"
    >
      <div className={`h-full rounded-full ${BAR_TONE[share.tone]}`} style={{ width: `${share.width}%` }} />
    </div>
  );
}

function ShareText({ share }: { share: ReturnType<typeof budgetShare> }) {
  return (
    <p className={`text-sm ${share.tone === 'over' ? 'font-medium text-red-700' : share.tone === 'warning' ? 'font-medium text-amber-700' : 'text-slate-600'}`}>
      {share.pct} % used
      {share.tone === 'over'
        ? ': new runs are refused until the month ends or the budget is raised'
        : share.tone === 'warning'
          ? ': past the 80 % warning'
          : ''}
      .
    </p>
  );
}
