import { createFileRoute, Link } from '@tanstack/react-router';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { reportKeys, reportsQuery } from '../../../../queries/reports';
import { listSearch, oneOf, type ListSearch } from '../../../../lib/list';
import { useOrgEvents } from '../../../../lib/stream';
import { formatDateTime } from '../../../../lib/format';
import { Badge, PageHeader } from '../../../../components/ui/page';
import { SortTh, Table, Td, Th } from '../../../../components/ui/table';
import { Empty } from '../../../../components/ui/states';
import { noItems, QueryState } from '../../../../components/ui/query-state';
import { Pagination } from '../../../../components/ui/pagination';
import { Button } from '../../../../components/ui/button';
import { REPORT_TYPES, reportTypeLabel } from '../../../../components/reports/describe';
import { typeLabel } from '../../../../components/agents/agent-types';
import { useList } from '../../../../lib/use-list';
import { SearchBox } from '../../../../components/ui/search-box';

const SORTS = ['createdAt', 'type', 'title'] as const;

export const Route = createFileRoute('/orgs/$orgId/reports/')({
  validateSearch: (raw: Record<string, unknown>): ListSearch & { type?: (typeof REPORT_TYPES)[number] } => ({
    ...listSearch(raw, SORTS),
    type: oneOf(raw.type, REPORT_TYPES),
  }),
  component: ReportsPage,
});

function ReportsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const queryClient = useQueryClient();
  const { page, pageSize, setSearch, setPage, clear } = useList(search);
  // A report an agent saves appears without a reload.
  useOrgEvents((type) => {
    if (type === 'agent.report.created') void queryClient.invalidateQueries({ queryKey: reportKeys.all(orgId) });
  });

  const sort = search.sort ?? '-createdAt';
  const query = { page, pageSize, sort: search.sort, q: search.q, type: search.type };
  const reports = useQuery({ ...reportsQuery(orgId, query), placeholderData: keepPreviousData });
  const filtered = Boolean(search.q || search.type);

  return (
    <div>
      <PageHeader title="Reports" description="What your agents found: figures, a summary and recommendations you can apply in one step." />
      <form role="search" className="mb-4 flex flex-wrap items-end gap-3" onSubmit={(e) => e.preventDefault()}>
        <SearchBox value={search.q} onSearch={(q) => setSearch({ q })} placeholder="Title or summary" />
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Type</span>
          <select
            value={search.type ?? ''}
            onChange={(e) => setSearch({ type: oneOf(e.target.value, REPORT_TYPES) })}
            className="rounded-md px-3 py-2 ring-1 ring-slate-300"
          >
            <option value="">Any type</option>
            {REPORT_TYPES.map((t) => (
              <option key={t} value={t}>
                {reportTypeLabel(t)}
              </option>
            ))}
          </select>
        </label>
        {filtered ? (
          <Button variant="ghost" onClick={() => clear()}>
            Clear filters
          </Button>
        ) : null}
      </form>
      <QueryState
        query={reports}
        loading="Loading reports…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={filtered ? 'No reports match these filters' : 'No reports yet'}>
            {filtered ? (
              'Try another search or clear the filters.'
            ) : (
              <>
                Agents write reports: run a market analyst or a report writer from{' '}
                <Link to="/orgs/$orgId/agents" params={{ orgId }} className="text-indigo-700 underline">
                  Agents
                </Link>
                .
              </>
            )}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Reports">
              <thead className="bg-slate-50">
                <tr>
                  <SortTh field="title" label="Title" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <SortTh field="type" label="Type" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <Th>Written by</Th>
                  <Th>Recommendations</Th>
                  <SortTh field="createdAt" label="Created" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((report) => {
                  const applied = report.recommendations.filter((r) => r.appliedAt).length;
                  return (
                    <tr key={report.id} className="hover:bg-slate-50">
                      <Td className="max-w-xl">
                        <Link
                          to="/orgs/$orgId/reports/$reportId"
                          params={{ orgId, reportId: report.id }}
                          className="font-medium text-indigo-700 hover:underline"
                        >
                          {report.title}
                        </Link>
                        <p className="line-clamp-2 text-xs text-slate-500">{report.summary}</p>
                      </Td>
                      <Td className="whitespace-nowrap">
                        <Badge tone="violet">{reportTypeLabel(report.type)}</Badge>
                      </Td>
                      <Td className="whitespace-nowrap">{report.agentType ? typeLabel(report.agentType) : '—'}</Td>
                      <Td className="whitespace-nowrap tabular-nums">
                        {report.recommendations.length ? `${report.recommendations.length}${applied ? ` (${applied} applied)` : ''}` : 'none'}
                      </Td>
                      <Td className="whitespace-nowrap">{formatDateTime(report.createdAt)}</Td>
                    </tr>
                  );
                })}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={pageSize} total={data.total} onPage={setPage} />
          </>
        )}
      </QueryState>
    </div>
  );
}
