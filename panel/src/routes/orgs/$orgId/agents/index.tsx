import { useState } from 'react';
import { createFileRoute, Link } from '@tanstack/react-router';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Tabs } from 'radix-ui';
import type { Schemas } from '../../../../api/client';
import { agentRunsQuery, agentsQuery, agentTypesQuery, allAgentsQuery, useDeleteAgent } from '../../../../queries/agents';
import { listSearch, oneOf, str, type ListSearch } from '../../../../lib/list';
import { useRole } from '../../../../lib/account';
import { formatDateTime, formatUsd } from '../../../../lib/format';
import { Badge, PageHeader } from '../../../../components/ui/page';
import { SortTh, Table, Td, Th } from '../../../../components/ui/table';
import { Empty, FormError } from '../../../../components/ui/states';
import { noItems, QueryState } from '../../../../components/ui/query-state';
import { Pagination } from '../../../../components/ui/pagination';
import { Button } from '../../../../components/ui/button';
import { Modal } from '../../../../components/ui/dialog';
import { AgentDialog } from '../../../../components/agents/agent-dialog';
import { RunAgentDialog } from '../../../../components/agents/run-dialog';
import { typeLabel } from '../../../../components/agents/agent-types';
import { isFinal, RUN_STATUSES, statusLabel, type RunStatus } from '../../../../components/agents/steps';
import { useList } from '../../../../lib/use-list';
import { SearchBox } from '../../../../components/ui/search-box';

const RUN_SORTS = ['createdAt', 'finishedAt', 'status', 'type', 'costUsd'] as const;
const AGENT_SORTS = ['createdAt', 'name', 'type'] as const;
const VIEWS = ['runs', 'agents'] as const;

/** Every key optional: links to the page need not name them. */
interface AgentsSearch extends ListSearch {
  view?: 'agents';
  status?: RunStatus;
  type?: string;
  agentId?: string;
}

export const Route = createFileRoute('/orgs/$orgId/agents/')({
  validateSearch: (raw: Record<string, unknown>): AgentsSearch => {
    const view = oneOf(raw.view, VIEWS);
    return {
      ...listSearch(raw, view === 'agents' ? AGENT_SORTS : RUN_SORTS),
      view: view === 'agents' ? view : undefined,
      status: oneOf(raw.status, RUN_STATUSES),
      type: str(raw.type),
      agentId: str(raw.agentId),
    };
  },
  component: AgentsPage,
});

type Search = AgentsSearch;

function AgentsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { clear } = useList(search);
  const { canWrite } = useRole(orgId);
  const [editing, setEditing] = useState<Schemas['Agent'] | 'new' | null>(null);
  const [running, setRunning] = useState<{ agentId?: string } | null>(null);
  const view = search.view ?? 'runs';

  // Every saved agent, for the run dialog's choice and the runs filter (an organization keeps a few).
  const allAgents = useQuery(allAgentsQuery(orgId));

  return (
    <div>
      <PageHeader
        title="Agents"
        description="AI agents that work on your leads, content and numbers: run one now, or save one with your own instructions."
        actions={
          canWrite ? (
            <>
              <Button onClick={() => setEditing('new')}>New agent</Button>
              <Button variant="primary" onClick={() => setRunning({})}>
                Run an agent
              </Button>
            </>
          ) : null
        }
      />
      <Tabs.Root value={view} onValueChange={(value) => clear({ view: value === 'agents' ? 'agents' : undefined })}>
        <Tabs.List aria-label="Agents views" className="mb-4 flex gap-1 border-b border-slate-200">
          <Tabs.Trigger
            value="runs"
            className="-mb-px border-b-2 border-transparent px-3 py-2 text-sm font-medium text-slate-600 hover:text-slate-900 data-[state=active]:border-indigo-600 data-[state=active]:text-indigo-700"
          >
            Run history
          </Tabs.Trigger>
          <Tabs.Trigger
            value="agents"
            className="-mb-px border-b-2 border-transparent px-3 py-2 text-sm font-medium text-slate-600 hover:text-slate-900 data-[state=active]:border-indigo-600 data-[state=active]:text-indigo-700"
          >
            Saved agents
          </Tabs.Trigger>
        </Tabs.List>
        <Tabs.Content value="runs">{view === 'runs' ? <RunHistory orgId={orgId} search={search} agents={allAgents.data?.items ?? []} /> : null}</Tabs.Content>
        <Tabs.Content value="agents">
          {view === 'agents' ? (
            <SavedAgents
              orgId={orgId}
              search={search}
              canWrite={canWrite}
              onEdit={setEditing}
              onRun={(agentId) => setRunning({ agentId })}
              onCreate={() => setEditing('new')}
            />
          ) : null}
        </Tabs.Content>
      </Tabs.Root>

      {editing ? (
        <AgentDialog
          key={editing === 'new' ? 'new' : editing.id}
          orgId={orgId}
          agent={editing === 'new' ? null : editing}
          open
          onOpenChange={(open) => !open && setEditing(null)}
        />
      ) : null}
      {running ? (
        <RunAgentDialog
          key={running.agentId ?? 'adhoc'}
          orgId={orgId}
          open
          agents={allAgents.data?.items ?? []}
          agentId={running.agentId}
          onOpenChange={(open) => !open && setRunning(null)}
        />
      ) : null}
    </div>
  );
}

function TypeFilter({ orgId, value, onChange }: { orgId: string; value: string | undefined; onChange: (type: string | undefined) => void }) {
  const types = useQuery(agentTypesQuery(orgId));
  return (
    <label className="text-sm">
      <span className="mb-1 block font-medium text-slate-700">Type</span>
      <select value={value ?? ''} onChange={(e) => onChange(e.target.value || undefined)} className="rounded-md px-3 py-2 ring-1 ring-slate-300">
        <option value="">Any type</option>
        {(types.data ?? []).map((t) => (
          <option key={t.type} value={t.type}>
            {typeLabel(t.type)}
          </option>
        ))}
        {value && !types.data?.some((t) => t.type === value) ? <option value={value}>{typeLabel(value)}</option> : null}
      </select>
    </label>
  );
}

function RunHistory({ orgId, search, agents }: { orgId: string; search: Search; agents: readonly Schemas['Agent'][] }) {
  const { page, pageSize, setSearch, setPage, clear } = useList(search);
  const sort = search.sort ?? '-createdAt';
  const query = { page, pageSize, sort: search.sort, q: search.q, status: search.status, type: search.type, agentId: search.agentId };
  const runs = useQuery({
    ...agentRunsQuery(orgId, query),
    placeholderData: keepPreviousData,
    // Runs still queued or running on this page are followed until they end.
    refetchInterval: (q) => (q.state.data?.items.some((r) => !isFinal(r.status)) ? 1500 : false),
  });
  const filtered = Boolean(search.q || search.status || search.type || search.agentId);
  const agentName = (id: string | null) => (id ? (agents.find((a) => a.id === id)?.name ?? 'Saved agent') : null);

  return (
    <section aria-label="Run history">
      <form role="search" className="mb-4 flex flex-wrap items-end gap-3" onSubmit={(e) => e.preventDefault()}>
        <SearchBox value={search.q} onSearch={(q) => setSearch({ q })} placeholder="Words of the task" />
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
                {statusLabel(s)}
              </option>
            ))}
          </select>
        </label>
        <TypeFilter orgId={orgId} value={search.type} onChange={(type) => setSearch({ type })} />
        {agents.length ? (
          <label className="text-sm">
            <span className="mb-1 block font-medium text-slate-700">Saved agent</span>
            <select
              value={search.agentId ?? ''}
              onChange={(e) => setSearch({ agentId: e.target.value || undefined })}
              className="rounded-md px-3 py-2 ring-1 ring-slate-300"
            >
              <option value="">Any</option>
              {agents.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {filtered ? (
          <Button variant="ghost" onClick={() => clear()}>
            Clear filters
          </Button>
        ) : null}
      </form>
      <QueryState
        query={runs}
        loading="Loading agent runs…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={filtered ? 'No runs match these filters' : 'No agent runs yet'}>
            {filtered ? 'Try another search or clear the filters.' : 'Run an agent: with the offline model it needs no network and works on your own data.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Agent runs">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Task</Th>
                  <SortTh field="type" label="Type" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <SortTh field="status" label="Status" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <Th>Model</Th>
                  <Th className="text-right">Steps</Th>
                  <SortTh field="costUsd" label="Cost" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <SortTh field="createdAt" label="Started" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((run) => (
                  <tr key={run.id} className="hover:bg-slate-50">
                    <Td className="max-w-md">
                      <Link
                        to="/orgs/$orgId/agents/runs/$runId"
                        params={{ orgId, runId: run.id }}
                        className="line-clamp-2 font-medium text-indigo-700 hover:underline"
                      >
                        {run.task}
                      </Link>
                      {agentName(run.agentId) ? <span className="text-xs text-slate-500">{agentName(run.agentId)}</span> : null}
                    </Td>
                    <Td className="whitespace-nowrap">{typeLabel(run.type)}</Td>
                    <Td>
                      <Badge>{statusLabel(run.status)}</Badge>
                    </Td>
                    <Td className="font-mono text-xs">{run.modelId}</Td>
                    <Td className="text-right tabular-nums">{run.stepCount}</Td>
                    <Td className="tabular-nums">{formatUsd(run.usage.costUsd)}</Td>
                    <Td className="whitespace-nowrap">{formatDateTime(run.createdAt)}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={pageSize} total={data.total} onPage={setPage} />
          </>
        )}
      </QueryState>
    </section>
  );
}

function SavedAgents({
  orgId,
  search,
  canWrite,
  onEdit,
  onRun,
  onCreate,
}: {
  orgId: string;
  search: Search;
  canWrite: boolean;
  onEdit: (agent: Schemas['Agent']) => void;
  onRun: (agentId: string) => void;
  onCreate: () => void;
}) {
  const [deleting, setDeleting] = useState<Schemas['Agent'] | null>(null);
  const { page, pageSize, setSearch, setPage, clear } = useList(search);
  const sort = search.sort ?? '-createdAt';
  const query = { page, pageSize, sort: search.sort, q: search.q, type: search.type };
  const agents = useQuery({ ...agentsQuery(orgId, query), placeholderData: keepPreviousData });
  const remove = useDeleteAgent(orgId, () => setDeleting(null));
  const filtered = Boolean(search.q || search.type);
  return (
    <section aria-label="Saved agents">
      <form role="search" className="mb-4 flex flex-wrap items-end gap-3" onSubmit={(e) => e.preventDefault()}>
        <SearchBox value={search.q} onSearch={(q) => setSearch({ q })} placeholder="Name" />
        <TypeFilter orgId={orgId} value={search.type} onChange={(type) => setSearch({ type })} />
        {filtered ? (
          <Button variant="ghost" onClick={() => clear({ view: 'agents' })}>
            Clear filters
          </Button>
        ) : null}
      </form>
      <QueryState
        query={agents}
        loading="Loading agents…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={filtered ? 'No agents match these filters' : 'No saved agents yet'}>
            {filtered ? (
              'Try another search or clear the filters.'
            ) : canWrite ? (
              <Button variant="primary" onClick={onCreate}>
                New agent
              </Button>
            ) : (
              'Saved agents appear here.'
            )}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Saved agents">
              <thead className="bg-slate-50">
                <tr>
                  <SortTh field="name" label="Name" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <SortTh field="type" label="Type" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <Th>Model</Th>
                  <Th className="text-right">Step limit</Th>
                  <Th className="text-right">Budget per run</Th>
                  <SortTh field="createdAt" label="Created" sort={sort} onSort={(s) => setSearch({ sort: s })} />
                  <Th>
                    <span className="sr-only">Actions</span>
                  </Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((agent) => (
                  <tr key={agent.id} className="hover:bg-slate-50">
                    <Td>
                      <p className="font-medium text-slate-900">{agent.name}</p>
                      {agent.instructions ? <p className="line-clamp-1 max-w-sm text-xs text-slate-500">{agent.instructions}</p> : null}
                    </Td>
                    <Td className="whitespace-nowrap">{typeLabel(agent.type)}</Td>
                    <Td className="font-mono text-xs">{agent.modelId ?? 'default'}</Td>
                    <Td className="text-right tabular-nums">{agent.maxSteps ?? 'default'}</Td>
                    <Td className="text-right tabular-nums">{agent.budgetUsd === null ? '—' : formatUsd(agent.budgetUsd)}</Td>
                    <Td className="whitespace-nowrap">{formatDateTime(agent.createdAt)}</Td>
                    <Td className="text-right whitespace-nowrap">
                      <Link
                        to="/orgs/$orgId/agents"
                        params={{ orgId }}
                        search={{ agentId: agent.id }}
                        className="mr-2 text-sm text-indigo-700 hover:underline"
                        aria-label={`Runs of ${agent.name}`}
                      >
                        Runs
                      </Link>
                      {canWrite ? (
                        <span className="inline-flex gap-1">
                          <Button size="sm" variant="primary" onClick={() => onRun(agent.id)} aria-label={`Run ${agent.name}`}>
                            Run
                          </Button>
                          <Button size="sm" onClick={() => onEdit(agent)} aria-label={`Edit ${agent.name}`}>
                            Edit
                          </Button>
                          <Button size="sm" variant="ghost" onClick={() => setDeleting(agent)} aria-label={`Delete ${agent.name}`}>
                            Delete
                          </Button>
                        </span>
                      ) : null}
                    </Td>
                  </tr>
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={pageSize} total={data.total} onPage={setPage} />
          </>
        )}
      </QueryState>
      <Modal
        open={deleting !== null}
        onOpenChange={(open) => {
          if (!open) {
            setDeleting(null);
            remove.reset();
          }
        }}
        title={`Delete ${deleting?.name ?? 'agent'}?`}
        description="Its past runs and reports stay."
      >
        <FormError error={remove.error} />
        <div className="mt-4 flex justify-end gap-2">
          <Button onClick={() => setDeleting(null)}>Cancel</Button>
          <Button variant="danger" disabled={remove.isPending} onClick={() => deleting && remove.mutate(deleting.id)}>
            Delete agent
          </Button>
        </div>
      </Modal>
    </section>
  );
}
