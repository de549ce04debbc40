import { useState } from 'react';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { Schemas } from '../../../../api/client';
import { workflowsQuery } from '../../../../queries/workflows';
import { listSearch, oneOf, type ListSearch } from '../../../../lib/list';
import { useRole } from '../../../../lib/account';
import { formatDateTime } from '../../../../lib/format';
import { PageHeader, Badge } from '../../../../components/ui/page';
import { Table, Th, SortTh, Td } from '../../../../components/ui/table';
import { Empty } from '../../../../components/ui/states';
import { noItems, QueryState } from '../../../../components/ui/query-state';
import { Pagination } from '../../../../components/ui/pagination';
import { Button } from '../../../../components/ui/button';
import { NewWorkflowDialog } from '../../../../components/workflows/new-workflow-dialog';
import { triggerSummary } from '../../../../components/workflows/trigger';
import { useList } from '../../../../lib/use-list';
import { SearchBox } from '../../../../components/ui/search-box';

const SORTS = ['createdAt', 'updatedAt', 'name'] as const;
const STATES = ['active', 'inactive'] as const;

interface WorkflowsSearch extends ListSearch {
  state?: (typeof STATES)[number];
}

export const Route = createFileRoute('/orgs/$orgId/workflows/')({
  validateSearch: (raw: Record<string, unknown>): WorkflowsSearch => ({
    ...listSearch(raw, SORTS),
    state: oneOf(raw.state, STATES),
  }),
  component: WorkflowsPage,
});

function WorkflowsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const navigate = useNavigate({ from: Route.fullPath });
  const { canWrite } = useRole(orgId);
  const [creating, setCreating] = useState(false);

  const { page, pageSize, setSearch, setPage, clear } = useList(search);
  const sort = search.sort ?? '-createdAt';
  const query = { page, pageSize, sort: search.sort, q: search.q, active: search.state === undefined ? undefined : search.state === 'active' };
  const workflows = useQuery({ ...workflowsQuery(orgId, query), placeholderData: keepPreviousData });
  const filtered = Boolean(search.q || search.state);

  return (
    <div>
      <PageHeader
        title="Workflows"
        description="Automations that run on a trigger — an event, a schedule, a webhook or by hand — step by step."
        actions={
          <>
            <Link
              to="/orgs/$orgId/workflows/templates"
              params={{ orgId }}
              className="inline-flex items-center rounded-md bg-white px-3.5 py-2 text-sm font-medium text-slate-800 ring-1 ring-slate-300 hover:bg-slate-50"
            >
              Templates
            </Link>
            {canWrite ? (
              <Link
                to="/orgs/$orgId/workflows/new"
                params={{ orgId }}
                className="inline-flex items-center rounded-md bg-white px-3.5 py-2 text-sm font-medium text-slate-800 ring-1 ring-slate-300 hover:bg-slate-50"
              >
                Build on canvas
              </Link>
            ) : null}
            {canWrite ? (
              <Button variant="primary" onClick={() => setCreating(true)}>
                New workflow
              </Button>
            ) : null}
          </>
        }
      />
      <form role="search" className="mb-4 flex flex-wrap items-end gap-3" onSubmit={(e) => e.preventDefault()}>
        <SearchBox value={search.q} onSearch={(q) => setSearch({ q })} placeholder="Name or description" />
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">State</span>
          <select
            value={search.state ?? ''}
            onChange={(e) => setSearch({ state: oneOf(e.target.value, STATES) })}
            className="rounded-md px-3 py-2 ring-1 ring-slate-300"
          >
            <option value="">Active and inactive</option>
            <option value="active">Active</option>
            <option value="inactive">Inactive</option>
          </select>
        </label>
        {filtered ? (
          <Button variant="ghost" onClick={() => clear()}>
            Clear filters
          </Button>
        ) : null}
      </form>

      <QueryState
        query={workflows}
        loading="Loading workflows…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={filtered ? 'No workflows match these filters' : 'No workflows yet'}>
            {filtered
              ? 'Try another search or clear the filters.'
              : canWrite
                ? 'Create one from a template: qualify new leads, publish after approval, a weekly digest…'
                : 'Workflows appear here once someone creates them.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Workflows">
              <thead className="bg-slate-50">
                <tr>
                  <SortTh field="name" label="Name" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <Th>Trigger</Th>
                  <Th>State</Th>
                  <Th>Steps</Th>
                  <SortTh field="updatedAt" label="Changed" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <SortTh field="createdAt" label="Created" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((w) => (
                  <WorkflowRow key={w.id} orgId={orgId} workflow={w} />
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={pageSize} total={data.total} onPage={setPage} />
          </>
        )}
      </QueryState>

      <NewWorkflowDialog
        orgId={orgId}
        open={creating}
        onOpenChange={setCreating}
        onCreated={(w) => void navigate({ to: '/orgs/$orgId/workflows/$workflowId', params: { orgId, workflowId: w.id } })}
      />
    </div>
  );
}

function WorkflowRow({ orgId, workflow }: { orgId: string; workflow: Schemas['Workflow'] }) {
  return (
    <tr className="hover:bg-slate-50">
      <Td>
        <Link to="/orgs/$orgId/workflows/$workflowId" params={{ orgId, workflowId: workflow.id }} className="font-medium text-indigo-700 hover:underline">
          {workflow.name}
        </Link>
        {workflow.description ? <p className="mt-0.5 line-clamp-1 max-w-md text-xs text-slate-500">{workflow.description}</p> : null}
      </Td>
      <Td>{triggerSummary(workflow.trigger)}</Td>
      <Td>
        <Badge tone={workflow.active ? 'green' : 'slate'}>{workflow.active ? 'Active' : 'Inactive'}</Badge>
      </Td>
      <Td>{workflow.nodes.length}</Td>
      <Td className="whitespace-nowrap">{formatDateTime(workflow.updatedAt)}</Td>
      <Td className="whitespace-nowrap">{formatDateTime(workflow.createdAt)}</Td>
    </tr>
  );
}
