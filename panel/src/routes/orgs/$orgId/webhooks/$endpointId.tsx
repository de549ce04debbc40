import { useState } from 'react';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { endpointQuery, useTestEndpoint, useUpdateEndpoint, webhookKeys } from '../../../../queries/webhooks';
import { useList } from '../../../../lib/use-list';
import { compact, int, oneOf, PAGE } from '../../../../lib/list';
import { useRole } from '../../../../lib/account';
import { useOrgEvents } from '../../../../lib/stream';
import { formatDateTime } from '../../../../lib/format';
import { Badge } from '../../../../components/ui/page';
import { ErrorState, FormError, Loading } from '../../../../components/ui/states';
import { Button } from '../../../../components/ui/button';
import { Deliveries, DELIVERY_STATUSES } from '../../../../components/webhooks/deliveries';
import { TestResult } from '../../../../components/webhooks/test-result';
import { DeleteEndpointDialog, EditEndpointDialog, RotateSecretDialog } from '../../../../components/webhooks/dialogs';
import { eventGroups, isAll } from '../../../../components/webhooks/events';
import { projectsQuery } from '../../../../queries/settings';

const DELIVERY_PAGE_SIZE = 20;

export const Route = createFileRoute('/orgs/$orgId/webhooks/$endpointId')({
  validateSearch: (raw: Record<string, unknown>) => {
    const page = int(raw.page, PAGE);
    return compact({ status: oneOf(raw.status, DELIVERY_STATUSES), page: page === PAGE ? undefined : page });
  },
  component: EndpointPage,
});

type Dialog = 'edit' | 'rotate' | 'delete' | null;

function EndpointPage() {
  const { orgId, endpointId } = Route.useParams();
  const search = Route.useSearch();
  const navigate = useNavigate({ from: Route.fullPath });
  const queryClient = useQueryClient();
  const { canAdmin } = useRole(orgId);
  const [dialog, setDialog] = useState<Dialog>(null);
  const { page, setPage, clear } = useList(search);
  const endpoint = useQuery({ ...endpointQuery(orgId, endpointId), staleTime: 0 });
  const projects = useQuery(projectsQuery(orgId));
  const test = useTestEndpoint(orgId, endpointId);
  // The service deactivates an endpoint on its own (a 410, or 100 failures in a row) and notifies the owners.
  useOrgEvents((type, data) => {
    if (type === 'notification' && String((data as { link?: unknown }).link ?? '').endsWith(`/webhook-endpoints/${endpointId}`)) {
      void queryClient.invalidateQueries({ queryKey: webhookKeys.all(orgId) });
    }
  });
  const setActive = useUpdateEndpoint(orgId, endpointId);

  if (endpoint.isPending) return <Loading label="Loading endpoint…" />;
  if (endpoint.isError) {
    return (
      <div className="space-y-4">
        <BackLink orgId={orgId} />
        <ErrorState error={endpoint.error} retry={() => void endpoint.refetch()} />
      </div>
    );
  }
  const e = endpoint.data;
  const project = e.projectId ? (projects.data?.find((p) => p.id === e.projectId)?.name ?? e.projectId) : 'Organization-wide (all projects)';

  return (
    <div>
      <BackLink orgId={orgId} />
      <header className="mt-2 mb-5 flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <h1 className="font-mono text-xl font-semibold break-all text-slate-900">{e.url}</h1>
          <div className="mt-1 flex flex-wrap items-center gap-2 text-sm text-slate-600">
            <Badge tone={e.active ? 'green' : 'red'}>{e.active ? 'Active' : 'Inactive'}</Badge>
            {e.description ? <span>{e.description}</span> : null}
          </div>
        </div>
        {canAdmin ? (
          <div className="flex flex-wrap gap-2">
            <Button variant="primary" disabled={test.isPending} onClick={() => test.mutate()}>
              {test.isPending ? 'Sending…' : 'Send test'}
            </Button>
            <Button onClick={() => setDialog('edit')}>Edit</Button>
            <Button onClick={() => setDialog('rotate')}>Rotate secret</Button>
            <Button disabled={setActive.isPending} onClick={() => setActive.mutate({ active: !e.active })}>
              {e.active ? 'Disable' : 'Enable'}
            </Button>
            <Button variant="danger" onClick={() => setDialog('delete')}>
              Delete
            </Button>
          </div>
        ) : null}
      </header>

      {!e.active && e.disabledReason ? (
        <div role="alert" className="mb-4 rounded-lg border border-amber-300 bg-amber-50 p-4 text-sm text-amber-900">
          <p className="font-semibold">Deliveries to this endpoint are stopped</p>
          <p className="mt-1">{e.disabledReason}</p>
          {canAdmin ? <p className="mt-1">Fix the receiver, then enable the endpoint again; its failure count starts over.</p> : null}
        </div>
      ) : null}
      <FormError error={setActive.error} />

      <div className="grid grid-cols-1 gap-4 lg:grid-cols-3">
        <section aria-label="Endpoint details" className="rounded-lg bg-white p-4 text-sm shadow-xs ring-1 ring-slate-200 lg:col-span-1">
          <dl className="space-y-3">
            <div>
              <dt className="text-slate-500">Project</dt>
              <dd className="text-slate-900">{project}</dd>
            </div>
            <div>
              <dt className="text-slate-500">Failures in a row</dt>
              <dd className={e.consecutiveFailures ? 'font-medium text-red-700' : 'text-slate-900'}>{e.consecutiveFailures}</dd>
            </div>
            <div>
              <dt className="text-slate-500">Created</dt>
              <dd className="text-slate-900">{formatDateTime(e.createdAt)}</dd>
            </div>
            <div>
              <dt className="text-slate-500">Changed</dt>
              <dd className="text-slate-900">{formatDateTime(e.updatedAt)}</dd>
            </div>
            <div>
              <dt className="text-slate-500">Endpoint id</dt>
              <dd className="font-mono text-xs text-slate-900">{e.id}</dd>
            </div>
          </dl>
        </section>
        <section aria-label="Subscribed events" className="rounded-lg bg-white p-4 text-sm shadow-xs ring-1 ring-slate-200 lg:col-span-2">
          <h2 className="mb-2 font-semibold text-slate-900">Events</h2>
          {isAll(e.events) ? (
            <p>
              All events (<code>*</code>), including ones added later.
            </p>
          ) : (
            <ul className="space-y-1.5">
              {eventGroups()
                .filter((g) => g.events.some((n) => e.events.includes(n)))
                .map((g) => (
                  <li key={g.prefix} className="flex flex-wrap items-center gap-1.5">
                    <span className="w-32 shrink-0 text-slate-500">{g.label}</span>
                    {g.events
                      .filter((n) => e.events.includes(n))
                      .map((n) => (
                        <Badge key={n} tone="violet">
                          {n}
                        </Badge>
                      ))}
                  </li>
                ))}
            </ul>
          )}
        </section>
      </div>

      {test.data || test.error ? <div className="mt-4">{test.data ? <TestResult outcome={test.data} /> : <FormError error={test.error} />}</div> : null}

      <Deliveries
        orgId={orgId}
        endpointId={endpointId}
        events={e.events}
        canAdmin={canAdmin}
        status={search.status}
        page={page}
        pageSize={DELIVERY_PAGE_SIZE}
        onFilter={(status) => clear({ status })}
        onPage={setPage}
      />

      {canAdmin ? (
        <>
          <EditEndpointDialog orgId={orgId} endpoint={e} open={dialog === 'edit'} onOpenChange={(open) => setDialog(open ? 'edit' : null)} />
          <RotateSecretDialog orgId={orgId} endpointId={e.id} open={dialog === 'rotate'} onOpenChange={(open) => setDialog(open ? 'rotate' : null)} />
          <DeleteEndpointDialog
            orgId={orgId}
            endpoint={e}
            open={dialog === 'delete'}
            onOpenChange={(open) => setDialog(open ? 'delete' : null)}
            onDeleted={() => void navigate({ to: '/orgs/$orgId/webhooks', params: { orgId } })}
          />
        </>
      ) : null}
    </div>
  );
}

function BackLink({ orgId }: { orgId: string }) {
  return (
    <Link to="/orgs/$orgId/webhooks" params={{ orgId }} className="text-sm text-indigo-700 hover:underline">
      ← Webhooks
    </Link>
  );
}
