import { useMemo, useRef, useState } from 'react';
import { createFileRoute, Link } from '@tanstack/react-router';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { oneOf } from '../../../lib/list';
import { useList } from '../../../lib/use-list';
import { budgetKeys, budgetQuery, dashboardStatsQuery, statsKeys } from '../../../queries/usage';
import { useOrgEvents } from '../../../lib/stream';
import { formatUsd } from '../../../lib/format';
import { PageHeader } from '../../../components/ui/page';
import { QueryState } from '../../../components/ui/query-state';
import {
  chartRows,
  DASHBOARD_METRICS,
  GRANULARITIES,
  isDate,
  localDate,
  RANGE_LABELS,
  RANGE_PRESETS,
  resolveRange,
  totals,
  type Granularity,
  type RangePreset,
} from '../../../components/dashboard/chart-data';
import { BarsChart, BudgetStrip, ChartCard, COLORS } from '../../../components/dashboard/charts';

export const Route = createFileRoute('/orgs/$orgId/')({
  // Every key optional: links to the dashboard need not name them.
  validateSearch: (raw: Record<string, unknown>): { range?: RangePreset; from?: string; to?: string; granularity?: Granularity } => ({
    range: oneOf(raw.range, RANGE_PRESETS),
    from: isDate(raw.from) ? raw.from : undefined,
    to: isDate(raw.to) ? raw.to : undefined,
    granularity: oneOf(raw.granularity, GRANULARITIES),
  }),
  component: Dashboard,
});

/** Platform events that change a dashboard figure: the figures are fetched again (at most every 2 s). */
const LIVE = /^(lead\.(created|qualified)|workflow\.run\.(finished|failed)|post\.published|agent\.run\.finished)$/;

function Dashboard() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const queryClient = useQueryClient();
  const timeZone = useMemo(() => Intl.DateTimeFormat().resolvedOptions().timeZone, []);
  const today = localDate(new Date());
  const range = resolveRange({ range: search.range, from: search.from, to: search.to, granularity: search.granularity }, today);
  const custom = Boolean(search.from && search.to);
  const { setSearch } = useList(search);

  const stats = useQuery({ ...dashboardStatsQuery(orgId, range, timeZone, [...DASHBOARD_METRICS]), placeholderData: keepPreviousData });
  const budget = useQuery(budgetQuery(orgId));

  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  useOrgEvents((type) => {
    if (!LIVE.test(type) || pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      void queryClient.invalidateQueries({ queryKey: statsKeys.all(orgId) });
      void queryClient.invalidateQueries({ queryKey: budgetKeys.all(orgId) });
    }, 2000);
  });

  const series = stats.data?.series;
  const rows = useMemo(() => (series ? chartRows(series, range.granularity) : []), [series, range.granularity]);
  const sum = totals(series ?? [], DASHBOARD_METRICS);

  return (
    <div>
      <PageHeader
        title="Dashboard"
        description={`${custom ? `${range.from} to ${range.to}` : RANGE_LABELS[search.range ?? '30d']}, by ${range.granularity}.`}
        actions={<RangePicker key={`${range.from}:${range.to}`} search={search} range={range} onChange={setSearch} />}
      />
      <QueryState query={stats} loading="Loading the figures…" retry>
        {() => (
          <div className="space-y-4">
            <section aria-label="Totals" className="grid grid-cols-2 gap-3 md:grid-cols-3 xl:grid-cols-6">
              <Total label="Leads created" value={sum['leads.created']!} />
              <Total label="Leads qualified" value={sum['leads.qualified']!} />
              <Total label="Runs succeeded" value={sum['runs.succeeded']!} />
              <Total label="Runs failed" value={sum['runs.failed']!} tone={sum['runs.failed']! > 0 ? 'red' : undefined} />
              <Total label="Posts published" value={sum['posts.published']!} />
              <Total label="AI cost" value={formatUsd(sum['usage.costUsd'])} />
            </section>
            <section aria-labelledby="budget-title" className="rounded-lg bg-white px-4 py-3 shadow-xs ring-1 ring-slate-200">
              <h2 id="budget-title" className="mb-1 text-sm font-semibold text-slate-900">
                AI cost this month
              </h2>
              <QueryState query={budget}>
                {(data) => (
                  <BudgetStrip
                    usedUsd={data.usedUsd}
                    limitUsd={data.monthlyLimitUsd}
                    action={
                      <Link to="/orgs/$orgId/usage" params={{ orgId }} className="text-sm font-medium text-indigo-700 hover:underline">
                        Usage and budget
                      </Link>
                    }
                  />
                )}
              </QueryState>
            </section>
            <div className="grid gap-4 lg:grid-cols-2">
              <ChartCard title="Leads" summary={`${sum['leads.created']} created, ${sum['leads.qualified']} qualified`}>
                <BarsChart
                  rows={rows}
                  series={[
                    { metric: 'leads.created', label: 'Created', color: COLORS.indigo },
                    { metric: 'leads.qualified', label: 'Qualified', color: COLORS.emerald },
                  ]}
                />
              </ChartCard>
              <ChartCard title="Workflow runs" summary={`${sum['runs.succeeded']} succeeded, ${sum['runs.failed']} failed`}>
                <BarsChart
                  stacked
                  rows={rows}
                  series={[
                    { metric: 'runs.succeeded', label: 'Succeeded', color: COLORS.emerald },
                    { metric: 'runs.failed', label: 'Failed', color: COLORS.red },
                  ]}
                />
              </ChartCard>
              <ChartCard title="Posts published" summary={`${sum['posts.published']} published`}>
                <BarsChart rows={rows} series={[{ metric: 'posts.published', label: 'Published', color: COLORS.sky }]} />
              </ChartCard>
              <ChartCard title="AI cost" summary={`${formatUsd(sum['usage.costUsd'])} in this range`}>
                <BarsChart money rows={rows} series={[{ metric: 'usage.costUsd', label: 'AI cost', color: COLORS.violet }]} />
              </ChartCard>
            </div>
          </div>
        )}
      </QueryState>
    </div>
  );
}

function Total({ label, value, tone }: { label: string; value: number | string; tone?: 'red' }) {
  return (
    <div className="rounded-lg bg-white p-3 shadow-xs ring-1 ring-slate-200">
      <p className="text-xs font-medium text-slate-500">{label}</p>
      <p className={`mt-1 text-2xl font-semibold tabular-nums ${tone === 'red' ? 'text-red-700' : 'text-slate-900'}`}>
        {typeof value === 'number' ? value.toLocaleString() : value}
      </p>
    </div>
  );
}

type Search = ReturnType<typeof Route.useSearch>;

/** The range: a preset, or two dates; and the bucket size. All of it lives in the URL. */
function RangePicker({
  search,
  range,
  onChange,
}: {
  search: Search;
  range: { from: string; to: string; granularity: string };
  onChange: (next: Partial<Search>) => void;
}) {
  const custom = Boolean(search.from && search.to);
  const [from, setFrom] = useState(range.from);
  const [to, setTo] = useState(range.to);
  return (
    <div className="flex flex-wrap items-end gap-2">
      <div role="group" aria-label="Range" className="inline-flex rounded-md shadow-xs ring-1 ring-slate-300">
        {RANGE_PRESETS.map((preset) => {
          const active = !custom && (search.range ?? '30d') === preset;
          return (
            <button
              key={preset}
              type="button"
              aria-pressed={active}
              onClick={() => onChange({ range: preset === '30d' ? undefined : preset, from: undefined, to: undefined, granularity: undefined })}
              className={`px-3 py-2 text-sm first:rounded-l-md last:rounded-r-md ${active ? 'bg-indigo-600 font-medium text-white' : 'bg-white text-slate-700 hover:bg-slate-50'}`}
            >
              {RANGE_LABELS[preset].replace('Last ', '')}
            </button>
          );
        })}
      </div>
      <form
        className="flex items-end gap-2"
        onSubmit={(e) => {
          e.preventDefault();
          if (from && to && from <= to) onChange({ from, to, range: undefined });
        }}
      >
        <label className="text-xs text-slate-600">
          From
          <input
            type="date"
            value={from}
            max={to}
            onChange={(e) => setFrom(e.target.value)}
            className="mt-0.5 block rounded-md px-2 py-1.5 text-sm ring-1 ring-slate-300"
          />
        </label>
        <label className="text-xs text-slate-600">
          To
          <input
            type="date"
            value={to}
            min={from}
            onChange={(e) => setTo(e.target.value)}
            className="mt-0.5 block rounded-md px-2 py-1.5 text-sm ring-1 ring-slate-300"
          />
        </label>
        <button type="submit" className="rounded-md bg-white px-3 py-2 text-sm ring-1 ring-slate-300 hover:bg-slate-50">
          Show
        </button>
      </form>
      <label className="text-xs text-slate-600">
        By
        <select
          value={search.granularity ?? ''}
          onChange={(e) => onChange({ granularity: oneOf(e.target.value, GRANULARITIES) })}
          className="mt-0.5 block rounded-md px-2 py-2 text-sm ring-1 ring-slate-300"
        >
          <option value="">Auto ({range.granularity})</option>
          {GRANULARITIES.map((g) => (
            <option key={g} value={g}>
              {g}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}
