import { useState } from 'react';
import { createFileRoute } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import type { Schemas } from '../../../api/client';
import { apiKeysQuery, useRevokeApiKey } from '../../../queries/api-keys';
import { useList } from '../../../lib/use-list';
import { compact, str } from '../../../lib/list';
import { useRole } from '../../../lib/account';
import { orgsQuery } from '../../../queries/account';
import { formatDate, relative } from '../../../lib/format';
import { PageHeader, Badge } from '../../../components/ui/page';
import { Table, Th, SortTh, Td } from '../../../components/ui/table';
import { Empty, FormError } from '../../../components/ui/states';
import { QueryState } from '../../../components/ui/query-state';
import { Button } from '../../../components/ui/button';
import { Modal } from '../../../components/ui/dialog';
import { CreateKeyDialog } from '../../../components/api-keys/create-dialog';
import { describeScopes } from '../../../components/api-keys/scopes';
import { CopyText } from '../../../components/settings/copy-text';
import { projectsQuery } from '../../../queries/settings';
import { sortRows } from '../../../components/settings/sort';

const SORTS = ['name', 'createdAt', 'lastUsedAt'] as const;
const DEFAULT_SORT = '-createdAt';

export const Route = createFileRoute('/orgs/$orgId/api-keys')({
  validateSearch: (raw: Record<string, unknown>): { sort?: string } => {
    const sort = str(raw.sort);
    return compact({ sort: sort && sort !== DEFAULT_SORT && (SORTS as readonly string[]).includes(sort.replace(/^-/, '')) ? sort : undefined });
  },
  component: ApiKeysPage,
});

type ApiKey = Schemas['ApiKey'];

function ApiKeysPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { clear } = useList(search);
  const { canAdmin } = useRole(orgId);
  const orgs = useQuery(orgsQuery);
  const org = orgs.data?.find((o) => o.id === orgId);
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const keys = useQuery(apiKeysQuery(orgId));
  const projects = useQuery({ ...projectsQuery(orgId), enabled: keys.isSuccess });
  const sort = search.sort ?? DEFAULT_SORT;
  const rows = sortRows(keys.data ?? [], sort, { name: (k) => k.name, createdAt: (k) => k.createdAt, lastUsedAt: (k) => k.lastUsedAt });
  const onSort = (next: string) => clear({ sort: next === DEFAULT_SORT ? undefined : next });

  return (
    <div>
      <PageHeader
        title="API keys"
        description="Keys let your own servers call the API with the X-Api-Key header, limited to the scopes you choose. A key is shown once, when it is created."
        actions={
          canAdmin ? (
            <Button variant="primary" onClick={() => setCreating(true)}>
              New API key
            </Button>
          ) : null
        }
      />
      <section aria-label="Organization" className="mb-5 grid grid-cols-1 gap-4 rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200 md:grid-cols-2">
        <div>
          <p className="mb-1 text-sm font-medium text-slate-700">Organization ID</p>
          <CopyText label="Organization ID" value={orgId} />
          <p className="mt-1 text-xs text-slate-500">
            {org ? `${org.name}: ` : ''}the <code>:orgId</code> in every API path.
          </p>
        </div>
        <div>
          <p className="mb-1 text-sm font-medium text-slate-700">API base URL</p>
          <CopyText label="API base URL" value={`${window.location.origin}/api/v1`} />
          <p className="mt-1 text-xs text-slate-500">
            Reference:{' '}
            <a href="/docs" className="text-indigo-700 hover:underline">
              API documentation
            </a>
            .
          </p>
        </div>
      </section>

      <QueryState
        query={keys}
        loading="Loading API keys…"
        retry
        isEmpty={() => rows.length === 0}
        empty={
          <Empty title="No API keys yet">
            {canAdmin ? 'Create one for each system that calls the API, so you can revoke it alone.' : 'An owner or admin can create keys.'}
          </Empty>
        }
      >
        {() => (
          <Table label="API keys">
            <thead className="bg-slate-50">
              <tr>
                <SortTh field="name" label="Name" sort={sort} onSort={onSort} />
                <Th>Key</Th>
                <Th>Scopes</Th>
                <Th>Project</Th>
                <SortTh field="lastUsedAt" label="Last used" sort={sort} onSort={onSort} />
                <SortTh field="createdAt" label="Created" sort={sort} onSort={onSort} />
                {canAdmin ? (
                  <Th>
                    <span className="sr-only">Actions</span>
                  </Th>
                ) : null}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {rows.map((key) => (
                <tr key={key.id}>
                  <Td className="font-medium text-slate-900">{key.name}</Td>
                  <Td>
                    <code className="font-mono text-xs">{key.prefix}…</code>
                  </Td>
                  <Td>
                    <div className="flex max-w-md flex-wrap gap-1">
                      {describeScopes(key.scopes).map((s) => (
                        <Badge key={s} tone="violet">
                          {s}
                        </Badge>
                      ))}
                    </div>
                  </Td>
                  <Td>{key.projectId ? (projects.data?.find((p) => p.id === key.projectId)?.name ?? key.projectId) : 'All projects'}</Td>
                  <Td className="whitespace-nowrap">{key.lastUsedAt ? relative(key.lastUsedAt) : 'Never'}</Td>
                  <Td className="whitespace-nowrap">{formatDate(key.createdAt)}</Td>
                  {canAdmin ? (
                    <Td>
                      <Button size="sm" variant="danger" onClick={() => setRevoking(key)} aria-label={`Revoke ${key.name}`}>
                        Revoke
                      </Button>
                    </Td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </QueryState>
      {canAdmin ? <CreateKeyDialog orgId={orgId} open={creating} onOpenChange={setCreating} /> : null}
      {revoking ? <RevokeDialog orgId={orgId} apiKey={revoking} onClose={() => setRevoking(null)} /> : null}
    </div>
  );
}

function RevokeDialog({ orgId, apiKey, onClose }: { orgId: string; apiKey: ApiKey; onClose: () => void }) {
  const revoke = useRevokeApiKey(orgId, apiKey.id, onClose);
  return (
    <Modal
      open
      onOpenChange={(open) => !open && onClose()}
      title={`Revoke ${apiKey.name}?`}
      description="The key stops working at once; whatever uses it gets 401 from now on. This cannot be undone."
    >
      <FormError error={revoke.error} />
      <div className="mt-4 flex justify-end gap-2">
        <Button onClick={onClose}>Cancel</Button>
        <Button variant="danger" disabled={revoke.isPending} onClick={() => revoke.mutate()}>
          Revoke key
        </Button>
      </div>
    </Modal>
  );
}
