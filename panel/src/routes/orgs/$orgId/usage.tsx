import { useMemo, useState } from 'react';
import { createFileRoute } from '@tanstack/react-router';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { oneOf, str } from '../../../lib/list';
import { useList } from '../../../lib/use-list';
import { budgetQuery, usageQuery } from '../../../queries/usage';
import { workflowNamesQuery } from '../../../queries/workflows';
import { projectsQuery } from '../../../queries/settings';
import { useRole } from '../../../lib/account';
import { formatDate, formatUsd } from '../../../lib/format';
import { PageHeader } from '../../../components/ui/page';
import { SortTh, Table, Td } from '../../../components/ui/table';
import { Empty } from '../../../components/ui/states';
import { QueryState } from '../../../components/ui/query-state';
import { Button } from '../../../components/ui/button';
import { isDate } from '../../../components/dashboard/chart-data';
import { BudgetMeter, COLORS, moneyTick } from '../../../components/dashboard/charts';
import { BudgetForm } from '../../../components/usage/budget-form';
import { GROUP_BY, GROUP_LABELS, GROUP_SORTS, groupLabel, lastMonth, sortGroups, thisMonth, type GroupBy } from '../../../components/usage/groups';

export const Route = createFileRoute('/orgs/$orgId/usage')({
  validateSearch: (raw: Record<string, unknown>): { from?: string; to?: string; groupBy?: GroupBy; sort?: string } => {
    const sort = str(raw.sort);
    return {
      from: isDate(raw.from) ? raw.from : undefined,
      to: isDate(raw.to) ? raw.to : undefined,
      groupBy: oneOf(raw.groupBy, GROUP_BY),
      sort: sort && (GROUP_SORTS as readonly string[]).includes(sort.replace(/^-/, '')) ? sort : undefined,
    };
  },
  component: UsagePage,
});

function UsagePage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { canAdmin } = useRole(orgId);
  const month = thisMonth(new Date());
  const from = search.from && search.to && search.from <= search.to ? search.from : month.from;
  const to = search.from && search.to && search.from <= search.to ? search.to : month.to;
  const groupBy: GroupBy = search.groupBy ?? 'model';
  const sort = search.sort ?? '-costUsd';
  const { setSearch } = useList(search);

  const usage = useQuery({ ...usageQuery(orgId, { from, to, groupBy }), placeholderData: keepPreviousData });
  const budget = useQuery(budgetQuery(orgId));
  // Names for the workflow and project groups (their keys are ids).
  const workflows = useQuery({ ...workflowNamesQuery(orgId), enabled: groupBy === 'workflow' });
  const projects = useQuery({ ...projectsQuery(orgId), enabled: groupBy === 'project' });
  const names = useMemo(
    () => ({
      workflows: new Map((workflows.data?.items ?? []).map((w) => [w.id, w.name])),
      projects: new Map((projects.data ?? []).map((p) => [p.id, p.name])),
    }),
    [workflows.data, projects.data],
  );
  const groups = useMemo(
    () =>
      sortGroups(
        (usage.data?.groups ?? []).map((g) => ({
          ...g,
          label: groupBy === 'day' && g.key ? formatDate(`${g.key}T12:00:00Z`) : groupLabel(groupBy, g.key, names),
        })),
        sort,
        groupBy,
      ),
    [usage.data, groupBy, names, sort],
  );
  const chart = useMemo(() => (groupBy === 'day' ? sortGroups(groups, 'key', groupBy) : groups.slice(0, 12)), [groups, groupBy]);

  return (
    <div className="space-y-6">
      <PageHeader title="Usage" description="Tokens and AI cost of every model call: by model, day, agent type, workflow or project." />

      <section aria-labelledby="budget-title" className="rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200">
        <h2 id="budget-title" className="mb-3 font-semibold text-slate-900">
          Monthly budget
        </h2>
        <QueryState query={budget} retry>
          {(data) => (
            <div className="grid gap-6 md:grid-cols-2">
              <BudgetMeter usedUsd={data.usedUsd} limitUsd={data.monthlyLimitUsd} resetsAt={data.resetsAt} />
              {canAdmin ? (
                <BudgetForm orgId={orgId} limitUsd={data.monthlyLimitUsd} />
              ) : (
                <p className="text-sm text-slate-600">
                  Owners and admins set the monthly budget. New runs are refused while it is spent; everyone is warned at 80 %.
                </p>
              )}
            </div>
          )}
        </QueryState>
      </section>

      <RangeForm
        key={`${from}:${to}`}
        from={from}
        to={to}
        groupBy={groupBy}
        onRange={(range) => setSearch(range)}
        onPreset={(range) => setSearch(range.from === month.from && range.to === month.to ? { from: undefined, to: undefined } : range)}
        onGroupBy={(g) => setSearch({ groupBy: g === 'model' ? undefined : g, sort: undefined })}
      />

      <QueryState query={usage} loading="Loading usage…" retry>
        {(report) => (
          <>
            <section aria-label="Totals" className="grid grid-cols-2 gap-3 md:grid-cols-4">
              <Figure label="Cost" value={formatUsd(report.totals.costUsd)} />
              <Figure label="Agent runs" value={report.totals.runs.toLocaleString()} />
              <Figure label="Input tokens" value={report.totals.inputTokens.toLocaleString()} />
              <Figure label="Output tokens" value={report.totals.outputTokens.toLocaleString()} />
            </section>
            {groups.length === 0 ? (
              <Empty title="No usage in this range">Agent runs and AI workflow steps record their tokens and cost here.</Empty>
            ) : (
              <>
                <figure aria-label={`Cost by ${GROUP_LABELS[groupBy].toLowerCase()}`} className="rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200">
                  <figcaption className="mb-3 font-semibold text-slate-900">Cost by {GROUP_LABELS[groupBy].toLowerCase()}</figcaption>
                  <div
                    className="h-64"
                    role="img"
                    aria-label={`Cost by ${GROUP_LABELS[groupBy].toLowerCase()}: ${chart.map((g) => `${g.label} ${formatUsd(g.costUsd)}`).join(', ')}`}
                  >
                    <ResponsiveContainer width="100%" height="100%">
                      <BarChart data={chart} margin={{ top: 4, right: 8, bottom: 0, left: 0 }}>
                        <CartesianGrid strokeDasharray="3 3" vertical={false} stroke="#e2e8f0" />
                        <XAxis dataKey="label" tick={{ fontSize: 12, fill: '#64748b' }} tickLine={false} interval="preserveStartEnd" minTickGap={8} />
                        <YAxis tick={{ fontSize: 12, fill: '#64748b' }} tickLine={false} axisLine={false} tickFormatter={moneyTick} />
                        <Tooltip formatter={(v) => formatUsd(Number(v))} cursor={{ fill: '#f1f5f9' }} />
                        <Bar dataKey="costUsd" name="Cost" fill={COLORS.violet} radius={[3, 3, 0, 0]} maxBarSize={48} isAnimationActive={false} />
                      </BarChart>
                    </ResponsiveContainer>
                  </div>
                </figure>
                <Table label={`Usage by ${GROUP_LABELS[groupBy].toLowerCase()}`}>
                  <thead className="bg-slate-50">
                    <tr>
                      <SortTh field="key" label={GROUP_LABELS[groupBy]} sort={sort} onSort={(s) => setSearch({ sort: s === '-costUsd' ? undefined : s })} />
                      <SortTh field="runs" label="Agent runs" sort={sort} onSort={(s) => setSearch({ sort: s === '-costUsd' ? undefined : s })} />
                      <SortTh field="inputTokens" label="Input tokens" sort={sort} onSort={(s) => setSearch({ sort: s === '-costUsd' ? undefined : s })} />
                      <SortTh field="outputTokens" label="Output tokens" sort={sort} onSort={(s) => setSearch({ sort: s === '-costUsd' ? undefined : s })} />
                      <SortTh field="costUsd" label="Cost" sort={sort} onSort={(s) => setSearch({ sort: s === '-costUsd' ? undefined : s })} />
                    </tr>
                  </thead>
                  <tbody className="divide-y divide-slate-100">
                    {groups.map((g) => (
                      <tr key={g.key ?? '∅'} className="hover:bg-slate-50">
                        <Td className={groupBy === 'model' ? 'font-mono text-xs' : 'font-medium text-slate-900'}>{g.label}</Td>
                        <Td className="tabular-nums">{g.runs.toLocaleString()}</Td>
                        <Td className="tabular-nums">{g.inputTokens.toLocaleString()}</Td>
                        <Td className="tabular-nums">{g.outputTokens.toLocaleString()}</Td>
                        <Td className="tabular-nums">{formatUsd(g.costUsd)}</Td>
                      </tr>
                    ))}
                  </tbody>
                </Table>
              </>
            )}
          </>
        )}
      </QueryState>
    </div>
  );
}

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <div className="rounded-lg bg-white p-3 shadow-xs ring-1 ring-slate-200">
      <p className="text-xs font-medium text-slate-500">{label}</p>
      <p className="mt-1 text-2xl font-semibold text-slate-900 tabular-nums">{value}</p>
    </div>
  );
}

function RangeForm({
  from,
  to,
  groupBy,
  onRange,
  onPreset,
  onGroupBy,
}: {
  from: string;
  to: string;
  groupBy: GroupBy;
  onRange: (range: { from: string; to: string }) => void;
  onPreset: (range: { from: string; to: string }) => void;
  onGroupBy: (groupBy: GroupBy) => void;
}) {
  const [f, setF] = useState(from);
  const [t, setT] = useState(to);
  const now = new Date();
  return (
    <form
      role="search"
      aria-label="Usage range and grouping"
      className="flex flex-wrap items-end gap-3"
      onSubmit={(e) => {
        e.preventDefault();
        if (f && t && f <= t) onRange({ from: f, to: t });
      }}
    >
      <label className="text-sm">
        <span className="mb-1 block font-medium text-slate-700">Group by</span>
        <select value={groupBy} onChange={(e) => onGroupBy(e.target.value as GroupBy)} className="rounded-md px-3 py-2 ring-1 ring-slate-300">
          {GROUP_BY.map((g) => (
            <option key={g} value={g}>
              {GROUP_LABELS[g]}
            </option>
          ))}
        </select>
      </label>
      <label className="text-sm">
        <span className="mb-1 block font-medium text-slate-700">From</span>
        <input type="date" value={f} max={t} onChange={(e) => setF(e.target.value)} className="rounded-md px-3 py-1.5 ring-1 ring-slate-300" />
      </label>
      <label className="text-sm">
        <span className="mb-1 block font-medium text-slate-700">To</span>
        <input type="date" value={t} min={f} onChange={(e) => setT(e.target.value)} className="rounded-md px-3 py-1.5 ring-1 ring-slate-300" />
      </label>
      <Button type="submit">Show</Button>
      <Button variant="ghost" onClick={() => onPreset(thisMonth(now))}>
        This month
      </Button>
      <Button variant="ghost" onClick={() => onPreset(lastMonth(now))}>
        Last month
      </Button>
      <p className="text-xs text-slate-500">Days in UTC, both included.</p>
    </form>
  );
}
