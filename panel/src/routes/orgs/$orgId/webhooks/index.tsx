import { useState } from 'react';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { endpointsQuery } from '../../../../queries/webhooks';
import { useList } from '../../../../lib/use-list';
import { compact, int, PAGE, PAGE_SIZE } from '../../../../lib/list';
import { useRole } from '../../../../lib/account';
import { formatDate } from '../../../../lib/format';
import { PageHeader, Badge } from '../../../../components/ui/page';
import { Table, Th, Td } from '../../../../components/ui/table';
import { Empty } from '../../../../components/ui/states';
import { QueryState } from '../../../../components/ui/query-state';
import { Pagination } from '../../../../components/ui/pagination';
import { Button } from '../../../../components/ui/button';
import { CreateEndpointDialog } from '../../../../components/webhooks/dialogs';
import { describeEvents } from '../../../../components/webhooks/events';
import { projectsQuery } from '../../../../queries/settings';

export const Route = createFileRoute('/orgs/$orgId/webhooks/')({
  validateSearch: (raw: Record<string, unknown>): { page?: number; pageSize?: number } => {
    const page = int(raw.page, PAGE);
    const pageSize = int(raw.pageSize, PAGE_SIZE, 1, 100);
    return compact({ page: page === PAGE ? undefined : page, pageSize: pageSize === PAGE_SIZE ? undefined : pageSize });
  },
  component: WebhooksPage,
});

function WebhooksPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const navigate = useNavigate({ from: Route.fullPath });
  const { canAdmin } = useRole(orgId);
  const [creating, setCreating] = useState(false);
  const { page, pageSize, setPage } = useList(search);
  const endpoints = useQuery({ ...endpointsQuery(orgId, { page, pageSize }), placeholderData: keepPreviousData });
  const projects = useQuery(projectsQuery(orgId));
  const projectName = (id: string | null) => (id ? (projects.data?.find((p) => p.id === id)?.name ?? id) : 'All projects');

  return (
    <div>
      <PageHeader
        title="Webhooks"
        description="Endpoints that receive platform events as signed HTTP requests, retried for about an hour when they fail."
        actions={
          canAdmin ? (
            <Button variant="primary" onClick={() => setCreating(true)}>
              New endpoint
            </Button>
          ) : null
        }
      />
      <QueryState
        query={endpoints}
        loading="Loading endpoints…"
        retry
        isEmpty={(data) => data.items.length === 0 && page === PAGE}
        empty={
          <Empty title="No webhook endpoints yet">
            {canAdmin ? 'Add one to receive events such as lead.created or post.published in your own systems.' : 'An owner or admin can add endpoints.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Webhook endpoints">
              <thead className="bg-slate-50">
                <tr>
                  <Th>URL</Th>
                  <Th>Events</Th>
                  <Th>Project</Th>
                  <Th>Status</Th>
                  <Th>Created</Th>
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((endpoint) => (
                  <tr key={endpoint.id} className="hover:bg-slate-50">
                    <Td className="max-w-md">
                      <Link
                        to="/orgs/$orgId/webhooks/$endpointId"
                        params={{ orgId, endpointId: endpoint.id }}
                        className="font-mono text-xs font-medium break-all text-indigo-700 hover:underline"
                      >
                        {endpoint.url}
                      </Link>
                      {endpoint.description ? <p className="mt-0.5 text-xs text-slate-500">{endpoint.description}</p> : null}
                    </Td>
                    <Td title={endpoint.events.join(', ')}>{describeEvents(endpoint.events)}</Td>
                    <Td>{projectName(endpoint.projectId)}</Td>
                    <Td>
                      <Badge tone={endpoint.active ? 'green' : 'red'}>{endpoint.active ? 'Active' : 'Inactive'}</Badge>
                      {endpoint.consecutiveFailures > 0 ? <p className="mt-1 text-xs text-red-700">{endpoint.consecutiveFailures} failed in a row</p> : null}
                    </Td>
                    <Td className="whitespace-nowrap">{formatDate(endpoint.createdAt)}</Td>
                  </tr>
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={pageSize} total={data.total} onPage={setPage} />
          </>
        )}
      </QueryState>
      <CreateEndpointDialog
        orgId={orgId}
        open={creating}
        onOpenChange={setCreating}
        onOpenEndpoint={(endpointId) => void navigate({ to: '/orgs/$orgId/webhooks/$endpointId', params: { orgId, endpointId } })}
      />
    </div>
  );
}
