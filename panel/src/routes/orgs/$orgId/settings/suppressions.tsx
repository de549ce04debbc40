import { useState } from 'react';
import { createFileRoute } from '@tanstack/react-router';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { suppressionsQuery } from '../../../../queries/campaigns';
import { compact, int, oneOf, PAGE, PAGE_SIZE, str } from '../../../../lib/list';
import { useRole } from '../../../../lib/account';
import { formatDateTime } from '../../../../lib/format';
import { useList } from '../../../../lib/use-list';
import { Badge } from '../../../../components/ui/page';
import { Table, Th, Td } from '../../../../components/ui/table';
import { Empty } from '../../../../components/ui/states';
import { noItems, QueryState } from '../../../../components/ui/query-state';
import { Pagination } from '../../../../components/ui/pagination';
import { Button } from '../../../../components/ui/button';
import { SearchBox } from '../../../../components/ui/search-box';
import { channelLabel } from '../../../../components/conversations/model';
import { AddSuppressionDialog, DeleteSuppressionDialog } from '../../../../components/campaigns/dialogs';
import { CAMPAIGN_CHANNELS, REASON_LABELS, type Suppression } from '../../../../components/campaigns/model';

export const Route = createFileRoute('/orgs/$orgId/settings/suppressions')({
  validateSearch: (raw: Record<string, unknown>): { channel?: (typeof CAMPAIGN_CHANNELS)[number]; q?: string; page?: number } => {
    const page = int(raw.page, PAGE);
    return compact({ channel: oneOf(raw.channel, CAMPAIGN_CHANNELS), q: str(raw.q), page: page === PAGE ? undefined : page });
  },
  component: SuppressionsPage,
});

const REASON_TONES: Record<Suppression['reason'], 'slate' | 'red' | 'amber'> = {
  manual: 'slate',
  unsubscribed: 'amber',
  stop_keyword: 'amber',
  hard_bounce: 'red',
  complaint: 'red',
};

function SuppressionsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { canWrite } = useRole(orgId);
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<Suppression | null>(null);
  const { page, setSearch, setPage, clear } = useList(search);
  const query = { page, pageSize: PAGE_SIZE, channel: search.channel, q: search.q };
  const suppressions = useQuery({ ...suppressionsQuery(orgId, query), placeholderData: keepPreviousData });
  const filtered = Boolean(search.channel || search.q);

  return (
    <div className="space-y-5">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h2 className="text-lg font-semibold text-slate-900">Suppressions</h2>
          <p className="mt-1 max-w-3xl text-sm text-slate-600">
            Addresses no campaign sends to: people who unsubscribed or wrote STOP, hard bounces, complaints, and the ones added here. Checked again before every
            send.
          </p>
        </div>
        {canWrite ? (
          <Button variant="primary" onClick={() => setAdding(true)}>
            Add suppression
          </Button>
        ) : null}
      </div>
      <div role="search" aria-label="Filter suppressions" className="flex flex-wrap items-end gap-3">
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Channel</span>
          <select
            value={search.channel ?? ''}
            onChange={(e) => setSearch({ channel: oneOf(e.target.value, CAMPAIGN_CHANNELS) })}
            className="rounded-md px-3 py-2 ring-1 ring-slate-300"
          >
            <option value="">Any channel</option>
            {CAMPAIGN_CHANNELS.map((c) => (
              <option key={c} value={c}>
                {channelLabel(c)}
              </option>
            ))}
          </select>
        </label>
        <SearchBox value={search.q} onSearch={(q) => setSearch({ q })} placeholder="Part of the address" className="w-72" />
      </div>

      <QueryState
        query={suppressions}
        loading="Loading suppressions…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={filtered ? 'No suppressions match these filters' : 'No suppressed addresses'}>
            {filtered ? (
              <button type="button" className="font-medium text-indigo-700 underline" onClick={() => clear()}>
                Clear filters
              </button>
            ) : (
              'Unsubscribes, STOP replies, hard bounces and complaints are added on their own.'
            )}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Suppressions">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Address</Th>
                  <Th>Channel</Th>
                  <Th>Reason</Th>
                  <Th>Added</Th>
                  {canWrite ? (
                    <Th>
                      <span className="sr-only">Actions</span>
                    </Th>
                  ) : null}
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((s) => (
                  <tr key={s.id} className="hover:bg-slate-50">
                    <Td className="font-mono text-xs">{s.address}</Td>
                    <Td>{channelLabel(s.channel)}</Td>
                    <Td>
                      <Badge tone={REASON_TONES[s.reason]}>{REASON_LABELS[s.reason] ?? s.reason}</Badge>
                    </Td>
                    <Td className="whitespace-nowrap">{formatDateTime(s.createdAt)}</Td>
                    {canWrite ? (
                      <Td className="text-right">
                        <Button size="sm" variant="ghost" onClick={() => setRemoving(s)} aria-label={`Delete the suppression of ${s.address}`}>
                          Delete
                        </Button>
                      </Td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={PAGE_SIZE} total={data.total} onPage={setPage} />
          </>
        )}
      </QueryState>
      <AddSuppressionDialog orgId={orgId} open={adding} onOpenChange={setAdding} />
      <DeleteSuppressionDialog
        orgId={orgId}
        suppression={removing}
        onOpenChange={(open) => {
          if (!open) setRemoving(null);
        }}
      />
    </div>
  );
}
