/**
 * Workflow runs: keys (`runKeys.all(orgId)` is what lib/stream.tsx makes stale on run events),
 * the list and one run, cancelling, and a `run.status` event applied to the cached lists at once.
 */
import { queryOptions, useMutation, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { api, unwrap, type QueryOf, type Schemas } from '../api/client';
import { approvalKeys } from './approvals';

export type RunListQuery = QueryOf<'/api/v1/orgs/{orgId}/runs'>;

export const RUN_STATUSES = ['QUEUED', 'RUNNING', 'WAITING', 'SUCCEEDED', 'FAILED', 'CANCELED'] as const;
export type RunStatusName = (typeof RUN_STATUSES)[number];

export const runKeys = {
  all: (orgId: string) => [orgId, 'runs'] as const,
  lists: (orgId: string) => [...runKeys.all(orgId), 'list'] as const,
  list: (orgId: string, query: RunListQuery) => [...runKeys.lists(orgId), query] as const,
  detail: (orgId: string, runId: string) => [...runKeys.all(orgId), 'one', runId] as const,
};

export const runsQuery = (orgId: string, query: RunListQuery) =>
  queryOptions({
    queryKey: runKeys.list(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/runs', { params: { path: { orgId }, query } })),
  });

export const runQuery = (orgId: string, runId: string) =>
  queryOptions({
    queryKey: runKeys.detail(orgId, runId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/runs/{runId}', { params: { path: { orgId, runId } } })),
  });

/** POST …/runs/:id/cancel: the run's entry set, the lists and the approvals (closed with it) stale. */
export function useCancelRun(orgId: string, runId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/orgs/{orgId}/runs/{runId}/cancel', { params: { path: { orgId, runId } } })),
    onSuccess: async (updated) => {
      queryClient.setQueryData(runKeys.detail(orgId, runId), updated);
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: runKeys.lists(orgId) }),
        queryClient.invalidateQueries({ queryKey: approvalKeys.all(orgId) }),
      ]);
    },
  });
}

interface ListPage {
  items: Schemas['RunSummary'][];
  total: number;
  page: number;
  pageSize: number;
}

/**
 * Applies an organization-stream `run.status` (`{ runId, status, costUsd? }`) to the cached run
 * lists at once, so a status changes on screen without waiting for the refetch the event also
 * causes (lib/stream.tsx invalidates `runKeys.all`).
 */
export function patchRunStatus(queryClient: QueryClient, orgId: string, data: unknown): void {
  const event = data as { runId?: unknown; status?: unknown; costUsd?: unknown } | null;
  if (!event || typeof event.runId !== 'string' || typeof event.status !== 'string' || !(RUN_STATUSES as readonly string[]).includes(event.status)) return;
  const status = event.status as RunStatusName;
  const costUsd = typeof event.costUsd === 'number' ? event.costUsd : undefined;
  queryClient.setQueriesData<ListPage>({ queryKey: runKeys.lists(orgId) }, (page) => {
    if (!page?.items?.some((r) => r.id === event.runId)) return page;
    return { ...page, items: page.items.map((r) => (r.id === event.runId ? { ...r, status, costUsd: costUsd ?? r.costUsd } : r)) };
  });
}
