import type { QueryClient } from '@tanstack/react-query';
import type { Schemas } from '../../api/client';

export const RUN_STATUSES = ['QUEUED', 'RUNNING', 'WAITING', 'SUCCEEDED', 'FAILED', 'CANCELED'] as const;
export type RunStatusName = (typeof RUN_STATUSES)[number];

interface ListPage {
  items: Schemas['RunSummary'][];
  total: number;
  page: number;
  pageSize: number;
}

/**
 * Applies an organization-stream `run.status` (`{ runId, status, costUsd? }`) to the cached run
 * lists at once, so a status changes on screen without waiting for the refetch the event also
 * causes (lib/stream.tsx invalidates `[orgId, 'runs']`).
 */
export function patchRunStatus(queryClient: QueryClient, orgId: string, data: unknown): void {
  const event = data as { runId?: unknown; status?: unknown; costUsd?: unknown } | null;
  if (!event || typeof event.runId !== 'string' || typeof event.status !== 'string' || !(RUN_STATUSES as readonly string[]).includes(event.status)) return;
  const status = event.status as RunStatusName;
  const costUsd = typeof event.costUsd === 'number' ? event.costUsd : undefined;
  queryClient.setQueriesData<ListPage>({ queryKey: [orgId, 'runs', 'list'] }, (page) => {
    if (!page?.items?.some((r) => r.id === event.runId)) return page;
    return { ...page, items: page.items.map((r) => (r.id === event.runId ? { ...r, status, costUsd: costUsd ?? r.costUsd } : r)) };
  });
}
