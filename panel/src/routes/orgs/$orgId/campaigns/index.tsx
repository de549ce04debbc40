import { createFileRoute, Link } from '@tanstack/react-router';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { campaignsQuery } from '../../../../queries/campaigns';
import { compact, int, oneOf, PAGE, PAGE_SIZE } from '../../../../lib/list';
import { useRole } from '../../../../lib/account';
import { formatDateTime } from '../../../../lib/format';
import { useList } from '../../../../lib/use-list';
import { Badge, PageHeader } from '../../../../components/ui/page';
import { Table, Th, Td } from '../../../../components/ui/table';
import { Empty } from '../../../../components/ui/states';
import { noItems, QueryState } from '../../../../components/ui/query-state';
import { Pagination } from '../../../../components/ui/pagination';
import { channelLabel } from '../../../../components/conversations/model';
import { CAMPAIGN_STATUSES, statusLabel, type CampaignStatus } from '../../../../components/campaigns/model';

export const Route = createFileRoute('/orgs/$orgId/campaigns/')({
  validateSearch: (raw: Record<string, unknown>): { status?: CampaignStatus; page?: number } => {
    const page = int(raw.page, PAGE);
    return compact({ status: oneOf(raw.status, CAMPAIGN_STATUSES), page: page === PAGE ? undefined : page });
  },
  component: CampaignsPage,
});

/** While a campaign on the page runs, its counts are read again every few seconds. */
const LIVE_MS = 3_000;

function CampaignsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { canWrite } = useRole(orgId);
  const { page, setSearch, setPage } = useList(search);
  const query = { page, pageSize: PAGE_SIZE, status: search.status };
  const campaigns = useQuery({
    ...campaignsQuery(orgId, query),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.items.some((c) => c.status === 'RUNNING') ? LIVE_MS : false),
  });

  return (
    <div>
      <PageHeader
        title="Campaigns"
        description="Outreach in steps to a chosen audience through an e-mail, WhatsApp or Telegram inbox, within limits and sending windows; replies arrive in Conversations."
        actions={
          canWrite ? (
            <Link
              to="/orgs/$orgId/campaigns/new"
              params={{ orgId }}
              className="rounded-md bg-indigo-600 px-3.5 py-2 text-sm font-medium text-white shadow-xs hover:bg-indigo-500"
            >
              New campaign
            </Link>
          ) : null
        }
      />
      <div className="mb-4 flex flex-wrap items-end gap-3">
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Status</span>
          <select
            value={search.status ?? ''}
            onChange={(e) => setSearch({ status: oneOf(e.target.value, CAMPAIGN_STATUSES) })}
            className="rounded-md px-3 py-1.5 ring-1 ring-slate-300"
          >
            <option value="">Any status</option>
            {CAMPAIGN_STATUSES.map((s) => (
              <option key={s} value={s}>
                {statusLabel(s)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <QueryState
        query={campaigns}
        loading="Loading campaigns…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={search.status ? `No ${statusLabel(search.status).toLowerCase()} campaigns` : 'No campaigns yet'}>
            {search.status
              ? 'Choose another status, or any.'
              : canWrite
                ? 'Create one to reach a group of leads in a few steps.'
                : 'A member can create campaigns.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Campaigns">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Name</Th>
                  <Th>Channel</Th>
                  <Th>Status</Th>
                  <Th className="text-right">Total</Th>
                  <Th className="text-right">Sent</Th>
                  <Th className="text-right">Pending</Th>
                  <Th>Created</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((c) => (
                  <tr key={c.id} className="hover:bg-slate-50">
                    <Td>
                      <Link
                        to="/orgs/$orgId/campaigns/$campaignId"
                        params={{ orgId, campaignId: c.id }}
                        className="font-medium text-indigo-700 hover:underline"
                      >
                        {c.name}
                      </Link>
                    </Td>
                    <Td>{channelLabel(c.channel)}</Td>
                    <Td>
                      <Badge>{statusLabel(c.status)}</Badge>
                      {c.status === 'SCHEDULED' && c.scheduledAt ? <p className="mt-1 text-xs text-slate-500">{formatDateTime(c.scheduledAt)}</p> : null}
                      {c.status === 'PAUSED' && c.pausedReason ? <p className="mt-1 text-xs text-slate-500">{c.pausedReason}</p> : null}
                    </Td>
                    <Td className="text-right tabular-nums">{c.startedAt ? c.stats.total.toLocaleString() : '—'}</Td>
                    <Td className="text-right tabular-nums">{c.stats.sent.toLocaleString()}</Td>
                    <Td className="text-right tabular-nums">{c.stats.pending.toLocaleString()}</Td>
                    <Td className="whitespace-nowrap">{formatDateTime(c.createdAt)}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={PAGE_SIZE} total={data.total} onPage={setPage} />
          </>
        )}
      </QueryState>
    </div>
  );
}
