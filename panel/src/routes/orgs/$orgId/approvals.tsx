import { useState } from 'react';
import { createFileRoute, Link } from '@tanstack/react-router';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Schemas } from '../../../api/client';
import { approvalKeys, approvalsQuery } from '../../../queries/approvals';
import { listSearch, oneOf, str, type ListSearch } from '../../../lib/list';
import { useRole } from '../../../lib/account';
import { useOrgEvents } from '../../../lib/stream';
import { formatDateTime, relative } from '../../../lib/format';
import { Badge, PageHeader } from '../../../components/ui/page';
import { SortTh, Table, Td, Th } from '../../../components/ui/table';
import { Empty } from '../../../components/ui/states';
import { noItems, QueryState } from '../../../components/ui/query-state';
import { Pagination } from '../../../components/ui/pagination';
import { ApprovalPanel } from '../../../components/runs/approval-panel';
import { useList } from '../../../lib/use-list';

const SORTS = ['createdAt', 'expiresAt'] as const;
/** `status` in the URL: absent means the queue (PENDING); ALL lists every decision too. */
const STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED', 'ALL'] as const;

interface ApprovalsSearch extends ListSearch {
  status?: Exclude<(typeof STATUSES)[number], 'PENDING'>;
  /** The approval open beside the list (notification links lead here). */
  approval?: string;
}

export const Route = createFileRoute('/orgs/$orgId/approvals')({
  validateSearch: (raw: Record<string, unknown>): ApprovalsSearch => {
    const status = oneOf(raw.status, STATUSES);
    return {
      ...listSearch(raw, SORTS),
      status: status === 'PENDING' ? undefined : status,
      approval: str(raw.approval),
    };
  },
  component: ApprovalsPage,
});

type Approval = Schemas['Approval'];

function ApprovalsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { canWrite } = useRole(orgId);
  const queryClient = useQueryClient();
  const [arrived, setArrived] = useState<string | null>(null);
  const { page, pageSize, setSearch, setPage } = useList(search);

  const status = search.status ?? 'PENDING';
  const sort = search.sort ?? '-createdAt';
  const query = { page, pageSize, sort: search.sort, status: status === 'ALL' ? undefined : status } as const;
  const approvals = useQuery({ ...approvalsQuery(orgId, query), placeholderData: keepPreviousData });

  // The list refreshes itself on approval events (lib/stream.tsx); a new request is also announced.
  useOrgEvents((type, data) => {
    // A run that ends while waiting (canceled) closes its approvals without an approval event.
    if (type === 'run.status' && ['SUCCEEDED', 'FAILED', 'CANCELED'].includes(String((data as { status?: unknown }).status))) {
      void queryClient.invalidateQueries({ queryKey: approvalKeys.all(orgId) });
    }
    if (type === 'approval.requested') {
      const title = (data as { title?: string; payload?: { title?: string } }).title ?? (data as { payload?: { title?: string } }).payload?.title;
      setArrived(title ? `New approval requested: ${title}` : 'New approval requested');
    }
  });

  const open = (id: string) => setSearch({ approval: id, page: search.page });

  return (
    <div>
      <PageHeader title="Approvals" description="Steps of workflows and agents that wait for a person: approve, with edits if needed, or reject." />
      <form role="search" className="mb-4 flex flex-wrap items-end gap-3" onSubmit={(e) => e.preventDefault()}>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Status</span>
          <select
            value={status}
            onChange={(e) => {
              const next = oneOf(e.target.value, STATUSES);
              setSearch({ status: next === 'PENDING' ? undefined : next });
            }}
            className="rounded-md px-3 py-2 ring-1 ring-slate-300"
          >
            <option value="PENDING">Pending</option>
            <option value="APPROVED">Approved</option>
            <option value="REJECTED">Rejected</option>
            <option value="EXPIRED">Expired</option>
            <option value="ALL">All</option>
          </select>
        </label>
      </form>
      {arrived ? (
        <p role="status" className="mb-3 flex items-center justify-between rounded-md bg-indigo-50 px-3 py-2 text-sm text-indigo-900">
          {arrived}
          <button type="button" className="text-xs underline" onClick={() => setArrived(null)}>
            Dismiss
          </button>
        </p>
      ) : null}

      <QueryState
        query={approvals}
        loading="Loading approvals…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={status === 'PENDING' ? 'Nothing waits for approval' : 'No approvals match this status'}>
            {status === 'PENDING' ? 'When a workflow step or an agent asks for a decision, it appears here at once.' : 'Try another status.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Approvals">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Title</Th>
                  <Th>From</Th>
                  <Th>Status</Th>
                  <SortTh field="createdAt" label="Requested" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <SortTh field="expiresAt" label="Expires" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <Th>
                    <span className="sr-only">Actions</span>
                  </Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((a) => (
                  <ApprovalRow key={a.id} orgId={orgId} approval={a} canWrite={canWrite} onOpen={() => open(a.id)} />
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={pageSize} total={data.total} onPage={setPage} />
          </>
        )}
      </QueryState>

      {search.approval ? (
        <ApprovalPanel orgId={orgId} approvalId={search.approval} canWrite={canWrite} onClose={() => setSearch({ approval: undefined, page: search.page })} />
      ) : null}
    </div>
  );
}

function ApprovalRow({ orgId, approval: a, canWrite, onOpen }: { orgId: string; approval: Approval; canWrite: boolean; onOpen: () => void }) {
  return (
    <tr className="hover:bg-slate-50">
      <Td>
        <button type="button" className="text-left font-medium text-indigo-700 hover:underline" onClick={onOpen}>
          {a.title}
        </button>
        {a.description ? <p className="mt-0.5 line-clamp-1 max-w-md text-xs text-slate-500">{a.description}</p> : null}
      </Td>
      <Td className="text-xs">
        {a.runId ? (
          <Link to="/orgs/$orgId/runs/$runId" params={{ orgId, runId: a.runId }} className="text-slate-700 underline">
            Workflow run{a.nodeId ? ` · ${a.nodeId}` : ''}
          </Link>
        ) : (
          'Agent'
        )}
      </Td>
      <Td>
        <Badge>{a.status}</Badge>
      </Td>
      <Td className="whitespace-nowrap" title={formatDateTime(a.createdAt)}>
        {relative(a.createdAt)}
      </Td>
      <Td className="whitespace-nowrap">{a.expiresAt ? formatDateTime(a.expiresAt) : '—'}</Td>
      <Td className="text-right">
        <button
          type="button"
          className="rounded-md px-2.5 py-1 text-xs font-medium ring-1 ring-slate-300 hover:bg-slate-50"
          onClick={onOpen}
          aria-label={`${a.status === 'PENDING' && canWrite ? 'Review' : 'View'} ${a.title}`}
        >
          {a.status === 'PENDING' && canWrite ? 'Review' : 'View'}
        </button>
      </Td>
    </tr>
  );
}
