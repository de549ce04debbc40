import { useState } from 'react';
import { createFileRoute } from '@tanstack/react-router';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../../../api/client';
import { compact, int, oneOf, PAGE, PAGE_SIZE } from '../../../../lib/list';
import { useRole } from '../../../../lib/account';
import { formatDateTime, relative } from '../../../../lib/format';
import { Badge } from '../../../../components/ui/page';
import { Table, Th, Td } from '../../../../components/ui/table';
import { Empty, ErrorState, FormError, Loading } from '../../../../components/ui/states';
import { Pagination } from '../../../../components/ui/pagination';
import { Button } from '../../../../components/ui/button';
import { Modal } from '../../../../components/ui/dialog';
import { ConnectDialog, PROVIDER_LABELS } from '../../../../components/content/integrations/connect-dialog';
import { ReconnectDialog } from '../../../../components/content/integrations/reconnect-dialog';
import { projectsQuery } from '../../../../components/content/queries';
import { useList } from '../../../../lib/use-list';

const PROVIDERS = ['linkedin', 'x'] as const;
const STATUSES = ['connected', 'error'] as const;

export const Route = createFileRoute('/orgs/$orgId/settings/integrations')({
  validateSearch: (raw: Record<string, unknown>): { provider?: (typeof PROVIDERS)[number]; status?: (typeof STATUSES)[number]; page?: number } => {
    const page = int(raw.page, PAGE);
    return compact({
      provider: oneOf(raw.provider, PROVIDERS),
      status: oneOf(raw.status, STATUSES),
      page: page === PAGE ? undefined : page,
    });
  },
  component: IntegrationsPage,
});

type Integration = Schemas['Integration'];

function IntegrationsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { canAdmin } = useRole(orgId);
  const [connecting, setConnecting] = useState(false);
  const [renewing, setRenewing] = useState<Integration | null>(null);
  const [removing, setRemoving] = useState<Integration | null>(null);
  const { page, setSearch, setPage } = useList(search);

  const query = { page, pageSize: PAGE_SIZE, provider: search.provider, status: search.status };
  const integrations = useQuery({
    queryKey: [orgId, 'integrations', 'list', query],
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/integrations', { params: { path: { orgId }, query } })),
    placeholderData: keepPreviousData,
  });
  const projects = useQuery(projectsQuery(orgId));
  const projectName = (id: string | null) => (id === null ? 'All projects' : projects.data?.find((p) => p.id === id)?.name ?? id);
  const items = integrations.data?.items ?? [];
  const filtered = Boolean(search.provider || search.status);

  return (
    <div className="space-y-5">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h2 className="text-lg font-semibold text-slate-900">Integrations</h2>
          <p className="mt-1 text-sm text-slate-600">The LinkedIn and X accounts posts are published through. An account whose token stopped working shows its error here: reconnect it with a new token.</p>
        </div>
        {canAdmin ? <Button variant="primary" onClick={() => setConnecting(true)}>Connect an account</Button> : null}
      </div>
      <div className="flex flex-wrap items-end gap-3">
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Provider</span>
          <select value={search.provider ?? ''} onChange={(e) => setSearch({ provider: oneOf(e.target.value, PROVIDERS) })} className="rounded-md px-3 py-1.5 ring-1 ring-slate-300">
            <option value="">Any provider</option>
            {PROVIDERS.map((p) => <option key={p} value={p}>{PROVIDER_LABELS[p]}</option>)}
          </select>
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Status</span>
          <select value={search.status ?? ''} onChange={(e) => setSearch({ status: oneOf(e.target.value, STATUSES) })} className="rounded-md px-3 py-1.5 ring-1 ring-slate-300">
            <option value="">Any status</option>
            <option value="connected">Connected</option>
            <option value="error">Needs reconnecting</option>
          </select>
        </label>
      </div>

      {integrations.isPending ? <Loading label="Loading integrations…" />
        : integrations.isError ? <ErrorState error={integrations.error} retry={() => void integrations.refetch()} />
        : items.length === 0 ? (
          <Empty title={filtered ? 'No accounts match these filters' : 'No accounts connected'}>
            {filtered ? 'Try another filter.' : canAdmin ? 'Connect a LinkedIn or X account to publish approved posts.' : 'An owner or admin can connect LinkedIn and X accounts.'}
          </Empty>
        ) : (
          <>
            <Table label="Integrations">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Name</Th>
                  <Th>Provider</Th>
                  <Th>Project</Th>
                  <Th>Status</Th>
                  <Th>Connected</Th>
                  {canAdmin ? <Th><span className="sr-only">Actions</span></Th> : null}
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {items.map((i) => (
                  <tr key={i.id}>
                    <Td className="font-medium text-slate-900">{i.name}</Td>
                    <Td>{PROVIDER_LABELS[i.provider]}</Td>
                    <Td>{projectName(i.projectId)}</Td>
                    <Td className="max-w-sm">
                      <Badge>{i.status === 'error' ? 'error' : 'connected'}</Badge>
                      {i.lastError ? (
                        <p className="mt-1 text-xs text-red-700">{i.lastError.message} <span className="text-slate-500">({i.lastError.code}, {relative(i.lastError.at)})</span></p>
                      ) : null}
                    </Td>
                    <Td className="whitespace-nowrap">{formatDateTime(i.createdAt)}</Td>
                    {canAdmin ? (
                      <Td className="whitespace-nowrap text-right">
                        <div className="flex justify-end gap-2">
                          <Button size="sm" variant={i.status === 'error' ? 'primary' : 'secondary'} aria-label={`Reconnect ${i.name}`} onClick={() => setRenewing(i)}>Reconnect</Button>
                          <Button size="sm" variant="ghost" aria-label={`Disconnect ${i.name}`} onClick={() => setRemoving(i)}>Disconnect</Button>
                        </div>
                      </Td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={PAGE_SIZE} total={integrations.data.total} onPage={setPage} />
          </>
        )}

      <ConnectDialog orgId={orgId} open={connecting} onOpenChange={setConnecting} />
      {renewing ? <ReconnectDialog orgId={orgId} integration={renewing} onClose={() => setRenewing(null)} /> : null}
      {removing ? <DisconnectDialog orgId={orgId} integration={removing} onClose={() => setRemoving(null)} /> : null}
    </div>
  );
}

function DisconnectDialog({ orgId, integration, onClose }: { orgId: string; integration: Integration; onClose: () => void }) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/v1/orgs/{orgId}/integrations/{id}', { params: { path: { orgId, id: integration.id } } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: [orgId, 'integrations'] });
      onClose();
    },
  });
  return (
    <Modal open onOpenChange={(open) => !open && onClose()} title={`Disconnect ${integration.name}?`} description="Its token is deleted. Posts scheduled through it will fail to publish until you choose another account for them.">
      <FormError error={remove.error} />
      <div className="mt-4 flex justify-end gap-2">
        <Button onClick={onClose}>Cancel</Button>
        <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate()}>Disconnect</Button>
      </div>
    </Modal>
  );
}
