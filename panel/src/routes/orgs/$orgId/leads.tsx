import { useState } from 'react';
import { createFileRoute } from '@tanstack/react-router';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { Schemas } from '../../../api/client';
import { leadsQuery } from '../../../queries/leads';
import { LEAD_STATUSES } from '../../../../../src/shared/leads.ts';
import { int, listSearch, oneOf, str } from '../../../lib/list';
import { useRole } from '../../../lib/account';
import { formatDate } from '../../../lib/format';
import { PageHeader, Badge } from '../../../components/ui/page';
import { Table, Th, SortTh, Td } from '../../../components/ui/table';
import { Empty } from '../../../components/ui/states';
import { noItems, QueryState } from '../../../components/ui/query-state';
import { Pagination } from '../../../components/ui/pagination';
import { Button } from '../../../components/ui/button';
import { BulkBar } from '../../../components/leads/bulk-bar';
import { LeadPanel } from '../../../components/leads/lead-panel';
import { CreateLeadDialog } from '../../../components/leads/create-dialog';
import { ImportDialog } from '../../../components/leads/import-dialog';
import { useList } from '../../../lib/use-list';
import { SearchBox } from '../../../components/ui/search-box';

const SORTS = ['createdAt', 'updatedAt', 'name', 'email', 'company', 'score', 'status'] as const;

export const Route = createFileRoute('/orgs/$orgId/leads')({
  validateSearch: (raw: Record<string, unknown>) => ({
    ...listSearch(raw, SORTS),
    status: oneOf(raw.status, LEAD_STATUSES),
    tags: str(raw.tags),
    minScore: raw.minScore === undefined ? undefined : int(raw.minScore, 0, 0, 100),
    lead: str(raw.lead),
  }),
  component: LeadsPage,
});

type Lead = Schemas['Lead'];

function LeadsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { canWrite } = useRole(orgId);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [creating, setCreating] = useState(false);
  const [importing, setImporting] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const { page, pageSize, setSearch, setPage, clear } = useList(search);
  const query = { page, pageSize, sort: search.sort, q: search.q, status: search.status, tags: search.tags, minScore: search.minScore };
  const leads = useQuery({ ...leadsQuery(orgId, query), placeholderData: keepPreviousData });
  const items = leads.data?.items ?? [];
  const allOnPage = items.length > 0 && items.every((l) => selected.has(l.id));
  const toggle = (id: string) =>
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const filtered = Boolean(search.q || search.status || search.tags || search.minScore !== undefined);

  return (
    <div>
      <PageHeader
        title="Leads"
        description="Everyone your forms, imports, agents and workflows brought in, de-duplicated by e-mail, phone and website."
        actions={
          canWrite ? (
            <>
              <Button onClick={() => setImporting(true)}>Import CSV</Button>
              <Button variant="primary" onClick={() => setCreating(true)}>
                New lead
              </Button>
            </>
          ) : null
        }
      />
      <form role="search" className="mb-4 flex flex-wrap items-end gap-3" onSubmit={(e) => e.preventDefault()}>
        <SearchBox value={search.q} onSearch={(q) => setSearch({ q })} placeholder="Name, e-mail, company, website or phone" />
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Status</span>
          <select
            value={search.status ?? ''}
            onChange={(e) => setSearch({ status: oneOf(e.target.value, LEAD_STATUSES) })}
            className="rounded-md px-3 py-2 ring-1 ring-slate-300"
          >
            <option value="">Any status</option>
            {LEAD_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Tags</span>
          <input
            defaultValue={search.tags ?? ''}
            key={search.tags ?? ''}
            onBlur={(e) => setSearch({ tags: e.target.value.trim() || undefined })}
            placeholder="vip, fair"
            className="w-36 rounded-md px-3 py-2 ring-1 ring-slate-300"
          />
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Minimum score</span>
          <input
            type="number"
            min={0}
            max={100}
            defaultValue={search.minScore ?? ''}
            key={search.minScore ?? ''}
            onBlur={(e) => setSearch({ minScore: e.target.value === '' ? undefined : int(e.target.value, 0, 0, 100) })}
            className="w-28 rounded-md px-3 py-2 ring-1 ring-slate-300"
          />
        </label>
        {filtered ? (
          <Button variant="ghost" onClick={() => clear()}>
            Clear filters
          </Button>
        ) : null}
      </form>

      {canWrite && selected.size > 0 ? (
        <BulkBar
          orgId={orgId}
          ids={[...selected]}
          onDone={(message) => {
            setSelected(new Set());
            setNotice(message);
          }}
        />
      ) : null}
      {notice ? (
        <p role="status" className="mb-3 rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
          {notice}
        </p>
      ) : null}

      <QueryState
        query={leads}
        loading="Loading leads…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={filtered ? 'No leads match these filters' : 'No leads yet'}>
            {filtered
              ? 'Try another search or clear the filters.'
              : canWrite
                ? 'Add one, import a CSV, or let a form or workflow bring them in.'
                : 'Leads appear here as they arrive.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Leads">
              <thead className="bg-slate-50">
                <tr>
                  {canWrite ? (
                    <Th className="w-8">
                      <input
                        type="checkbox"
                        aria-label="Select all on this page"
                        checked={allOnPage}
                        onChange={() => setSelected(allOnPage ? new Set() : new Set(items.map((l) => l.id)))}
                      />
                    </Th>
                  ) : null}
                  <SortTh field="name" label="Name" sort={search.sort ?? '-createdAt'} onSort={(sort) => setSearch({ sort })} />
                  <SortTh field="email" label="Email" sort={search.sort ?? '-createdAt'} onSort={(sort) => setSearch({ sort })} />
                  <SortTh field="company" label="Company" sort={search.sort ?? '-createdAt'} onSort={(sort) => setSearch({ sort })} />
                  <SortTh field="status" label="Status" sort={search.sort ?? '-createdAt'} onSort={(sort) => setSearch({ sort })} />
                  <SortTh field="score" label="Score" sort={search.sort ?? '-createdAt'} onSort={(sort) => setSearch({ sort })} />
                  <Th>Tags</Th>
                  <SortTh field="createdAt" label="Created" sort={search.sort ?? '-createdAt'} onSort={(sort) => setSearch({ sort })} />
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {items.map((lead) => (
                  <LeadRow
                    key={lead.id}
                    lead={lead}
                    canWrite={canWrite}
                    checked={selected.has(lead.id)}
                    onToggle={() => toggle(lead.id)}
                    onOpen={() => setSearch({ lead: lead.id, page: search.page })}
                  />
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={pageSize} total={data.total} estimate={data.totalIsEstimate} onPage={setPage} />
          </>
        )}
      </QueryState>

      {search.lead ? (
        <LeadPanel orgId={orgId} leadId={search.lead} canWrite={canWrite} onClose={() => setSearch({ lead: undefined, page: search.page })} />
      ) : null}
      <CreateLeadDialog orgId={orgId} open={creating} onOpenChange={setCreating} onOpenLead={(id) => setSearch({ lead: id })} />
      <ImportDialog orgId={orgId} open={importing} onOpenChange={setImporting} />
    </div>
  );
}

function LeadRow({ lead, canWrite, checked, onToggle, onOpen }: { lead: Lead; canWrite: boolean; checked: boolean; onToggle: () => void; onOpen: () => void }) {
  return (
    <tr className="hover:bg-slate-50">
      {canWrite ? (
        <Td>
          <input type="checkbox" aria-label={`Select ${lead.name ?? lead.email ?? lead.id}`} checked={checked} onChange={onToggle} />
        </Td>
      ) : null}
      <Td>
        <button type="button" className="font-medium text-indigo-700 hover:underline" onClick={onOpen}>
          {lead.name ?? lead.email ?? lead.phone ?? lead.website ?? lead.id}
        </button>
      </Td>
      <Td>{lead.email ?? '—'}</Td>
      <Td>{lead.company ?? '—'}</Td>
      <Td>
        <Badge>{lead.status}</Badge>
      </Td>
      <Td>{lead.score}</Td>
      <Td>
        <div className="flex flex-wrap gap-1">
          {lead.tags.map((t) => (
            <Badge key={t} tone="slate">
              {t}
            </Badge>
          ))}
        </div>
      </Td>
      <Td className="whitespace-nowrap">{formatDate(lead.createdAt)}</Td>
    </tr>
  );
}
