import { Link } from '@tanstack/react-router';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { recipientsQuery } from '../../queries/campaigns';
import { formatDateTime } from '../../lib/format';
import { Badge } from '../ui/page';
import { Table, Th, Td } from '../ui/table';
import { Empty } from '../ui/states';
import { noItems, QueryState } from '../ui/query-state';
import { Pagination } from '../ui/pagination';
import { RECIPIENT_STATUSES, SKIP_REASONS, statusLabel, type Recipient } from './model';

const PAGE_SIZE = 20;

const TONES: Record<Recipient['status'], 'slate' | 'blue' | 'green' | 'violet' | 'amber' | 'red'> = {
  PENDING: 'slate',
  ACTIVE: 'blue',
  COMPLETED: 'green',
  REPLIED: 'violet',
  SKIPPED: 'amber',
  FAILED: 'red',
  STOPPED: 'slate',
};

/** The campaign's recipients, filtered by status (kept in the URL by the page), refreshed while it runs. */
export function Recipients({
  orgId,
  campaignId,
  steps,
  status,
  page,
  live,
  onStatus,
  onPage,
}: {
  orgId: string;
  campaignId: string;
  steps: number;
  status: Recipient['status'] | undefined;
  page: number;
  live: boolean;
  onStatus: (status: Recipient['status'] | undefined) => void;
  onPage: (page: number) => void;
}) {
  const query = { status, page, pageSize: PAGE_SIZE };
  const recipients = useQuery({
    ...recipientsQuery(orgId, campaignId, query),
    placeholderData: keepPreviousData,
    refetchInterval: live ? 2_000 : false,
  });
  return (
    <section aria-labelledby="recipients-title" className="space-y-3">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <h2 id="recipients-title" className="text-base font-semibold text-slate-900">
          Recipients
        </h2>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Recipient status</span>
          <select
            value={status ?? ''}
            onChange={(e) => onStatus((RECIPIENT_STATUSES as readonly string[]).includes(e.target.value) ? (e.target.value as Recipient['status']) : undefined)}
            className="rounded-md px-3 py-1.5 ring-1 ring-slate-300"
          >
            <option value="">Any status</option>
            {RECIPIENT_STATUSES.map((s) => (
              <option key={s} value={s}>
                {statusLabel(s)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <QueryState
        query={recipients}
        loading="Loading recipients…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={status ? `No ${statusLabel(status).toLowerCase()} recipients` : 'No recipients yet'}>
            {status ? 'Choose another status, or any.' : 'The audience becomes recipients when the campaign starts.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Recipients">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Address</Th>
                  <Th>Status</Th>
                  <Th>Skip reason</Th>
                  <Th>Step</Th>
                  <Th>Next send</Th>
                  <Th>Error</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((r) => (
                  <tr key={r.id} className="hover:bg-slate-50">
                    <Td>
                      <Link
                        to="/orgs/$orgId/leads"
                        params={{ orgId }}
                        search={{ lead: r.leadId, status: undefined, tags: undefined, minScore: undefined }}
                        className="font-medium text-indigo-700 hover:underline"
                      >
                        {r.address ?? 'No address'}
                      </Link>
                    </Td>
                    <Td>
                      <Badge tone={TONES[r.status]}>{statusLabel(r.status)}</Badge>
                    </Td>
                    <Td>{r.skipReason ? (SKIP_REASONS[r.skipReason] ?? r.skipReason) : '—'}</Td>
                    <Td className="whitespace-nowrap tabular-nums">
                      {r.currentStep} of {steps}
                    </Td>
                    <Td className="whitespace-nowrap">{formatDateTime(r.nextSendAt)}</Td>
                    <Td className="max-w-sm text-red-700">{r.error ?? ''}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={PAGE_SIZE} total={data.total} onPage={onPage} />
          </>
        )}
      </QueryState>
    </section>
  );
}
