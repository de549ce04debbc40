import { useEffect } from 'react';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Schemas } from '../../api/client';
import { deliveriesQuery, useResendDelivery, webhookKeys } from '../../queries/webhooks';
import { useOrgEvents } from '../../lib/stream';
import { formatDateTime, relative } from '../../lib/format';
import { Badge } from '../ui/page';
import { Table, Th, Td } from '../ui/table';
import { Empty, FormError } from '../ui/states';
import { QueryState } from '../ui/query-state';
import { Pagination } from '../ui/pagination';
import { Button } from '../ui/button';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

type Delivery = Schemas['WebhookDelivery'];

/**
 * The delivery history of an endpoint (the last 7 days, newest first): one row per attempt, with
 * the receiver's answer and a resend. It refreshes when an event the endpoint receives happens (the
 * dispatcher writes the deliveries before the organization stream hears of the event) and while
 * any attempt is still pending.
 */
export function Deliveries({
  orgId,
  endpointId,
  events,
  canAdmin,
  status,
  page,
  pageSize,
  onFilter,
  onPage,
}: {
  orgId: string;
  endpointId: string;
  events: readonly string[];
  canAdmin: boolean;
  status: DeliveryStatus | undefined;
  page: number;
  pageSize: number;
  onFilter: (status: DeliveryStatus | undefined) => void;
  onPage: (page: number) => void;
}) {
  const queryClient = useQueryClient();
  const deliveries = useQuery({
    ...deliveriesQuery(orgId, endpointId, { status, page, pageSize }),
    placeholderData: keepPreviousData,
    // History changes while nobody looks (events arrive on any page): always read it afresh on opening.
    staleTime: 0,
    refetchInterval: (query) => (query.state.data?.items.some((d) => d.status === 'pending') ? 1500 : false),
  });
  // A delivery's answer can change the endpoint too (a 410 deactivates it, failures are counted).
  const updatedAt = deliveries.dataUpdatedAt;
  useEffect(() => {
    if (updatedAt) void queryClient.invalidateQueries({ queryKey: webhookKeys.detail(orgId, endpointId), exact: true });
  }, [updatedAt, queryClient, orgId, endpointId]);
  useOrgEvents((type) => {
    if (events.includes('*') || events.includes(type)) void queryClient.invalidateQueries({ queryKey: webhookKeys.deliveries(orgId, endpointId) });
  });
  const resend = useResendDelivery(orgId, endpointId);

  return (
    <section aria-labelledby="deliveries-title" className="mt-8">
      <div className="mb-3 flex flex-wrap items-end justify-between gap-3">
        <div>
          <h2 id="deliveries-title" className="text-lg font-semibold text-slate-900">
            Delivery history
          </h2>
          <p className="text-sm text-slate-600">Every attempt of the last 7 days. Failed deliveries are retried after about 1, 5, 15 and 30 minutes.</p>
        </div>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Delivery status</span>
          <select
            value={status ?? ''}
            onChange={(e) => onFilter((DELIVERY_STATUSES as readonly string[]).includes(e.target.value) ? (e.target.value as DeliveryStatus) : undefined)}
            className="rounded-md px-3 py-2 ring-1 ring-slate-300"
          >
            <option value="">Any status</option>
            <option value="succeeded">Succeeded</option>
            <option value="failed">Failed</option>
            <option value="pending">Pending</option>
          </select>
        </label>
      </div>
      <FormError error={resend.error} />
      <QueryState
        query={deliveries}
        loading="Loading deliveries…"
        retry
        isEmpty={(data) => data.items.length === 0 && page === 1}
        empty={
          <Empty title={status ? `No ${status} deliveries in the last 7 days` : 'No deliveries in the last 7 days'}>
            {status ? 'Try another status.' : 'Deliveries appear here as events happen. A test is not recorded here.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Deliveries">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Event</Th>
                  <Th>Status</Th>
                  <Th>Response</Th>
                  <Th>Attempt</Th>
                  <Th>Duration</Th>
                  <Th>Sent</Th>
                  {canAdmin ? (
                    <Th>
                      <span className="sr-only">Actions</span>
                    </Th>
                  ) : null}
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((d) => (
                  <DeliveryRow
                    key={d.id}
                    delivery={d}
                    canAdmin={canAdmin}
                    resending={resend.isPending && resend.variables === d.id}
                    onResend={() => resend.mutate(d.id)}
                  />
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={pageSize} total={data.total} onPage={onPage} />
          </>
        )}
      </QueryState>
    </section>
  );
}

function DeliveryRow({ delivery: d, canAdmin, resending, onResend }: { delivery: Delivery; canAdmin: boolean; resending: boolean; onResend: () => void }) {
  return (
    <tr>
      <Td>
        <span className="font-mono text-xs text-slate-900">{d.eventType}</span>
        <p className="font-mono text-[11px] text-slate-400" title="Envelope id: the same on every attempt and resend">
          {d.eventId}
        </p>
      </Td>
      <Td>
        <Badge>{d.status}</Badge>
        {d.status === 'pending' && d.nextAttemptAt ? <p className="mt-1 text-xs text-slate-500">next try {relative(d.nextAttemptAt)}</p> : null}
      </Td>
      <Td className="max-w-sm">
        {d.statusCode !== null ? <span className="font-medium">HTTP {d.statusCode}</span> : null}
        {d.error ? <p className="text-xs text-red-700">{d.error}</p> : null}
        {d.responseBodyPreview ? (
          <details className="mt-1">
            <summary className="cursor-pointer text-xs text-indigo-700">Response body</summary>
            <pre className="mt-1 max-h-40 overflow-auto rounded bg-slate-50 p-2 text-xs whitespace-pre-wrap">{d.responseBodyPreview}</pre>
          </details>
        ) : null}
        {d.statusCode === null && !d.error && !d.responseBodyPreview ? '—' : null}
      </Td>
      <Td>{d.attempt}</Td>
      <Td>{d.durationMs !== null ? `${d.durationMs} ms` : '—'}</Td>
      <Td className="whitespace-nowrap">{formatDateTime(d.createdAt)}</Td>
      {canAdmin ? (
        <Td>
          <Button size="sm" disabled={resending || d.status === 'pending'} onClick={onResend} aria-label={`Resend ${d.eventType} (attempt ${d.attempt})`}>
            Resend
          </Button>
        </Td>
      ) : null}
    </tr>
  );
}
