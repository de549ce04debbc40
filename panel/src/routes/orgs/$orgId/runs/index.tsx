import { createFileRoute } from '@tanstack/react-router';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { patchRunStatus, RUN_STATUSES, runsQuery, type RunStatusName } from '../../../../queries/runs';
import { workflowNamesQuery } from '../../../../queries/workflows';
import { listSearch, oneOf, str, type ListSearch } from '../../../../lib/list';
import { useOrgEvents } from '../../../../lib/stream';
import { PageHeader } from '../../../../components/ui/page';
import { Empty } from '../../../../components/ui/states';
import { noItems, QueryState } from '../../../../components/ui/query-state';
import { Pagination } from '../../../../components/ui/pagination';
import { Button } from '../../../../components/ui/button';
import { RunsTable } from '../../../../components/runs/runs-table';
import { useList } from '../../../../lib/use-list';

const SORTS = ['createdAt', 'startedAt', 'finishedAt', 'costUsd', 'status'] as const;

interface RunsSearch extends ListSearch {
  status?: RunStatusName;
  workflowId?: string;
}

export const Route = createFileRoute('/orgs/$orgId/runs/')({
  validateSearch: (raw: Record<string, unknown>): RunsSearch => ({
    ...listSearch(raw, SORTS),
    status: oneOf(raw.status, RUN_STATUSES),
    workflowId: str(raw.workflowId),
  }),
  component: RunsPage,
});

function RunsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const queryClient = useQueryClient();
  const { page, pageSize, setSearch, setPage, clear } = useList(search);

  const sort = search.sort ?? '-createdAt';
  const query = { page, pageSize, sort: search.sort, status: search.status, workflowId: search.workflowId };
  const runs = useQuery({ ...runsQuery(orgId, query), placeholderData: keepPreviousData });
  const workflows = useQuery(workflowNamesQuery(orgId, { pageSize: 100, sort: 'name' }));

  // A run's status shows the moment the stream reports it; the list is refetched behind it (new runs, costs).
  useOrgEvents((type, data) => {
    if (type === 'run.status') patchRunStatus(queryClient, orgId, data);
  });

  const filtered = Boolean(search.status || search.workflowId);
  const workflowOptions = workflows.data?.items ?? [];
  const filteredWorkflowUnknown = search.workflowId && !workflowOptions.some((w) => w.id === search.workflowId);

  return (
    <div>
      <PageHeader title="Runs" description="Every execution of a workflow, live: statuses change here as the runs move." />
      <form role="search" className="mb-4 flex flex-wrap items-end gap-3" onSubmit={(e) => e.preventDefault()}>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Status</span>
          <select
            value={search.status ?? ''}
            onChange={(e) => setSearch({ status: oneOf(e.target.value, RUN_STATUSES) })}
            className="rounded-md px-3 py-2 ring-1 ring-slate-300"
          >
            <option value="">Any status</option>
            {RUN_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Workflow</span>
          <select
            value={search.workflowId ?? ''}
            onChange={(e) => setSearch({ workflowId: e.target.value || undefined })}
            className="max-w-xs rounded-md px-3 py-2 ring-1 ring-slate-300"
          >
            <option value="">All workflows</option>
            {filteredWorkflowUnknown ? <option value={search.workflowId}>{search.workflowId}</option> : null}
            {workflowOptions.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
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
        query={runs}
        loading="Loading runs…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={filtered ? 'No runs match these filters' : 'No runs yet'}>
            {filtered ? 'Try another status or workflow.' : 'Runs appear here the moment a workflow starts — by its trigger or with Run on the workflow page.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <RunsTable orgId={orgId} runs={data.items} sort={sort} onSort={(s) => setSearch({ sort: s })} />
            <Pagination page={page} pageSize={pageSize} total={data.total} onPage={setPage} />
          </>
        )}
      </QueryState>
    </div>
  );
}
