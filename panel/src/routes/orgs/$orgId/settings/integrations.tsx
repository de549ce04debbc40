import { useEffect, useEffectEvent, useState } from 'react';
import { createFileRoute } from '@tanstack/react-router';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import type { Schemas } from '../../../../api/client';
import { googleIntegrationsQuery, integrationKeys, integrationQuery, integrationsQuery, useDeleteIntegration } from '../../../../queries/content';
import { compact, int, oneOf, PAGE, PAGE_SIZE, str } from '../../../../lib/list';
import { useRole } from '../../../../lib/account';
import { formatDateTime, relative } from '../../../../lib/format';
import { Badge } from '../../../../components/ui/page';
import { Table, Th, Td } from '../../../../components/ui/table';
import { Empty, ErrorState, FormError } from '../../../../components/ui/states';
import { noItems, QueryState } from '../../../../components/ui/query-state';
import { Pagination } from '../../../../components/ui/pagination';
import { Button } from '../../../../components/ui/button';
import { Modal } from '../../../../components/ui/dialog';
import { ConnectDialog, PROVIDER_LABELS } from '../../../../components/content/integrations/connect-dialog';
import { ReconnectDialog } from '../../../../components/content/integrations/reconnect-dialog';
import { OAuthConnectButtons, ProviderMark, useOAuthStart } from '../../../../components/content/integrations/oauth-buttons';
import { GoogleSetup } from '../../../../components/content/integrations/google-setup';
import { describeSources, type GoogleConfig } from '../../../../components/content/integrations/google';
import { oauthNotice, type OAuthNotice } from '../../../../components/content/integrations/oauth';
import { projectsQuery } from '../../../../queries/settings';
import { useList } from '../../../../lib/use-list';

const PROVIDERS = ['linkedin', 'x', 'google'] as const;
const STATUSES = ['connected', 'error'] as const;

interface Search {
  provider?: (typeof PROVIDERS)[number];
  status?: (typeof STATUSES)[number];
  page?: number;
  /** Set by the service's OAuth callback on the way back (read once, then removed). */
  connected?: string;
  error?: string;
  error_description?: string;
}

export const Route = createFileRoute('/orgs/$orgId/settings/integrations')({
  validateSearch: (raw: Record<string, unknown>): Search => {
    const page = int(raw.page, PAGE);
    return compact({
      provider: oneOf(raw.provider, PROVIDERS),
      status: oneOf(raw.status, STATUSES),
      page: page === PAGE ? undefined : page,
      connected: str(raw.connected)?.slice(0, 64),
      error: str(raw.error)?.slice(0, 64),
      error_description: str(raw.error_description)?.slice(0, 300),
    });
  },
  component: IntegrationsPage,
});

type Integration = Schemas['Integration'];

function IntegrationsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const queryClient = useQueryClient();
  const { canAdmin, canWrite } = useRole(orgId);
  const [pasting, setPasting] = useState(false);
  const [renewing, setRenewing] = useState<Integration | null>(null);
  const [removing, setRemoving] = useState<Integration | null>(null);
  const { page, setSearch, setPage } = useList(search);
  const oauth = useOAuthStart(orgId);

  // The way back from the provider: say what happened, then take the parameters out of the URL
  // (a reload or a shared link must not announce it again).
  const [notice, setNotice] = useState<OAuthNotice | null>(() => oauthNotice(search));
  const returning = Boolean(search.connected || search.error);
  const returned = useEffectEvent(() => {
    void queryClient.invalidateQueries({ queryKey: integrationKeys.all(orgId) });
    setSearch({ connected: undefined, error: undefined, error_description: undefined }, { keepPage: true });
  });
  useEffect(() => {
    if (returning) returned();
  }, [returning]);

  const query = { page, pageSize: PAGE_SIZE, provider: search.provider, status: search.status };
  const integrations = useQuery({ ...integrationsQuery(orgId, query), placeholderData: keepPreviousData });
  const google = useQuery(googleIntegrationsQuery(orgId));
  const connectedOne = useQuery({
    ...integrationQuery(orgId, notice?.integrationId),
    enabled: Boolean(notice?.integrationId),
    retry: false,
  });
  const projects = useQuery(projectsQuery(orgId));
  const projectName = (id: string | null) => (id === null ? 'All projects' : (projects.data?.find((p) => p.id === id)?.name ?? id));
  const filtered = Boolean(search.provider || search.status);
  const googleItems = google.data?.items ?? [];

  return (
    <div className="space-y-5">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="max-w-3xl">
          <h2 className="text-lg font-semibold text-slate-900">Integrations</h2>
          <p className="mt-1 text-sm text-slate-600">
            LinkedIn and X accounts publish your posts; a Google account brings GA4 and Search Console figures to Analytics. Connect through the provider's own
            sign-in: the connection renews itself. If it stops working, it shows an error here: reconnect it.
          </p>
        </div>
      </div>

      {notice ? <Notice notice={notice} connected={connectedOne.data} onDismiss={() => setNotice(null)} /> : null}

      <div className="flex flex-wrap items-end justify-between gap-3">
        <div className="flex flex-wrap items-end gap-3">
          <label className="text-sm">
            <span className="mb-1 block font-medium text-slate-700">Provider</span>
            <select
              value={search.provider ?? ''}
              onChange={(e) => setSearch({ provider: oneOf(e.target.value, PROVIDERS) })}
              className="rounded-md px-3 py-1.5 ring-1 ring-slate-300"
            >
              <option value="">Any provider</option>
              {PROVIDERS.map((p) => (
                <option key={p} value={p}>
                  {PROVIDER_LABELS[p]}
                </option>
              ))}
            </select>
          </label>
          <label className="text-sm">
            <span className="mb-1 block font-medium text-slate-700">Status</span>
            <select
              value={search.status ?? ''}
              onChange={(e) => setSearch({ status: oneOf(e.target.value, STATUSES) })}
              className="rounded-md px-3 py-1.5 ring-1 ring-slate-300"
            >
              <option value="">Any status</option>
              <option value="connected">Connected</option>
              <option value="error">Needs reconnecting</option>
            </select>
          </label>
        </div>
        {canAdmin ? <OAuthConnectButtons orgId={orgId} onPaste={() => setPasting(true)} /> : null}
      </div>

      <QueryState
        query={integrations}
        loading="Loading integrations…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={filtered ? 'No accounts match these filters' : 'No accounts connected'}>
            {filtered
              ? 'Try another filter.'
              : canAdmin
                ? 'Connect LinkedIn or X to publish approved posts, or Google to see your traffic in Analytics.'
                : 'An owner or admin can connect LinkedIn, X and Google accounts.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Integrations">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Name</Th>
                  <Th>Provider</Th>
                  <Th>Project</Th>
                  <Th>Status</Th>
                  <Th>Connected</Th>
                  {canAdmin ? (
                    <Th>
                      <span className="sr-only">Actions</span>
                    </Th>
                  ) : null}
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((i) => (
                  <tr key={i.id} className={notice?.integrationId === i.id ? 'bg-emerald-50/60' : undefined}>
                    <Td>
                      <span className="font-medium text-slate-900">{i.name}</span>
                      {i.provider === 'google' ? <p className="mt-0.5 text-xs text-slate-500">{describeSources(i.config as GoogleConfig)}</p> : null}
                    </Td>
                    <Td className="whitespace-nowrap">
                      <span className="inline-flex items-center gap-1.5">
                        <ProviderMark provider={i.provider} />
                        {PROVIDER_LABELS[i.provider]}
                      </span>
                      <p className="mt-0.5 text-xs text-slate-500">{i.authType === 'oauth' ? 'OAuth, renews itself' : 'Pasted token'}</p>
                    </Td>
                    <Td>{projectName(i.projectId)}</Td>
                    <Td className="max-w-sm">
                      <Badge>{i.status === 'error' ? 'error' : 'connected'}</Badge>
                      {i.lastError ? (
                        <p className="mt-1 text-xs text-red-700">
                          {i.lastError.message}{' '}
                          <span className="text-slate-500">
                            ({i.lastError.code}, {relative(i.lastError.at)})
                          </span>
                        </p>
                      ) : null}
                    </Td>
                    <Td className="whitespace-nowrap">{formatDateTime(i.createdAt)}</Td>
                    {canAdmin ? (
                      <Td className="whitespace-nowrap text-right">
                        <div className="flex justify-end gap-2">
                          {i.status === 'error' || i.authType === 'oauth' ? (
                            <Button
                              size="sm"
                              variant={i.status === 'error' ? 'primary' : 'secondary'}
                              aria-label={`Reconnect ${i.name}`}
                              disabled={oauth.busy}
                              onClick={() => (i.authType === 'oauth' ? oauth.mutate({ provider: i.provider, integrationId: i.id }) : setRenewing(i))}
                            >
                              {oauth.busy && oauth.variables?.integrationId === i.id ? 'Opening…' : 'Reconnect'}
                            </Button>
                          ) : null}
                          <Button size="sm" variant="ghost" aria-label={`Disconnect ${i.name}`} onClick={() => setRemoving(i)}>
                            Disconnect
                          </Button>
                        </div>
                      </Td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </Table>
            <FormError error={oauth.error} />
            {data.total > PAGE_SIZE || page > PAGE ? <Pagination page={page} pageSize={PAGE_SIZE} total={data.total} onPage={setPage} /> : null}
          </>
        )}
      </QueryState>

      {googleItems.length > 0 ? (
        <section aria-labelledby="google-sources" className="space-y-3">
          <div>
            <h2 id="google-sources" className="text-lg font-semibold text-slate-900">
              Google Analytics and Search Console
            </h2>
            <p className="mt-1 text-sm text-slate-600">
              Choose the GA4 property and the Search Console site each Google account reads. Figures sync every day, re-fetching the last days as Google revises
              them.
            </p>
          </div>
          {googleItems.map((i) => (
            <GoogleSetup key={i.id} orgId={orgId} integration={i} canManage={canAdmin} canSync={canWrite} />
          ))}
        </section>
      ) : google.isError ? (
        <ErrorState error={google.error} retry={() => void google.refetch()} />
      ) : null}

      <ConnectDialog orgId={orgId} open={pasting} onOpenChange={setPasting} />
      {renewing ? <ReconnectDialog orgId={orgId} integration={renewing} onClose={() => setRenewing(null)} /> : null}
      {removing ? <DisconnectDialog orgId={orgId} integration={removing} onClose={() => setRemoving(null)} /> : null}
    </div>
  );
}

/** The outcome of a return from the provider: a success names the account; a failure says what to do. */
function Notice({ notice, connected, onDismiss }: { notice: OAuthNotice; connected: Integration | undefined; onDismiss: () => void }) {
  const success = notice.tone === 'success';
  const text =
    success && connected ? oauthNotice({ connected: connected.id }, `${connected.name} (${PROVIDER_LABELS[connected.provider]})`)!.text : notice.text;
  const next =
    success &&
    connected?.provider === 'google' &&
    !(connected.config as GoogleConfig | undefined)?.propertyId &&
    !(connected.config as GoogleConfig | undefined)?.siteUrl
      ? ' Choose its GA4 property and Search Console site below, then sync.'
      : success && connected && connected.provider !== 'google'
        ? ' Posts can now be published through it.'
        : '';
  return (
    <div
      role={success ? 'status' : 'alert'}
      className={`flex items-start justify-between gap-3 rounded-md p-3 text-sm ${success ? 'bg-emerald-50 text-emerald-900 ring-1 ring-emerald-200' : 'bg-red-50 text-red-800 ring-1 ring-red-200'}`}
    >
      <p>
        {text}
        {next}
      </p>
      <button type="button" className="shrink-0 font-medium underline" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}

function DisconnectDialog({ orgId, integration, onClose }: { orgId: string; integration: Integration; onClose: () => void }) {
  const remove = useDeleteIntegration(orgId, integration.id);
  const description =
    integration.provider === 'google'
      ? 'Its tokens are deleted, and so are its synced figures and the rules that watch it.'
      : 'Its token is deleted. Posts scheduled through it will fail to publish until you choose another account for them.';
  return (
    <Modal open onOpenChange={(open) => !open && onClose()} title={`Disconnect ${integration.name}?`} description={description}>
      <FormError error={remove.error} />
      <div className="mt-4 flex justify-end gap-2">
        <Button onClick={onClose}>Cancel</Button>
        <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate(undefined, { onSuccess: onClose })}>
          Disconnect
        </Button>
      </div>
    </Modal>
  );
}
