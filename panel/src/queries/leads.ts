/**
 * Leads: keys (`leadKeys.all(orgId)` is what every change of a lead and lib/stream.tsx's lead
 * events make stale: the lists, one lead, its history, a campaign's audience count), queries and
 * changes.
 */
import { infiniteQueryOptions, queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type QueryOf } from '../api/client';

export type LeadListQuery = QueryOf<'/api/v1/orgs/{orgId}/leads'>;

export const leadKeys = {
  all: (orgId: string) => [orgId, 'leads'] as const,
  list: (orgId: string, query: LeadListQuery) => [...leadKeys.all(orgId), 'list', query] as const,
  detail: (orgId: string, id: string) => [...leadKeys.all(orgId), 'one', id] as const,
  history: (orgId: string, id: string) => [...leadKeys.all(orgId), 'history', id] as const,
  audience: (orgId: string, projectId: string | undefined, filter: unknown) => [...leadKeys.all(orgId), 'audience', projectId, filter] as const,
};

export const leadsQuery = (orgId: string, query: LeadListQuery) =>
  queryOptions({
    queryKey: leadKeys.list(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/leads', { params: { path: { orgId }, query } })),
  });

export const leadQuery = (orgId: string, id: string) =>
  queryOptions({
    queryKey: leadKeys.detail(orgId, id),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/leads/{id}', { params: { path: { orgId, id } } })),
  });

/** A lead's events, 20 at a time, newest first. */
export const leadHistoryQuery = (orgId: string, id: string) =>
  infiniteQueryOptions({
    queryKey: leadKeys.history(orgId, id),
    initialPageParam: 1,
    queryFn: ({ pageParam }) =>
      unwrap(api.GET('/api/v1/orgs/{orgId}/leads/{id}/events', { params: { path: { orgId, id }, query: { page: pageParam, pageSize: 20 } } })),
    getNextPageParam: (last) => (last.page * last.pageSize < last.total ? last.page + 1 : undefined),
  });

/** How many leads a filter reaches (a campaign's audience): the count of a one-lead page. */
export const audienceQuery = (orgId: string, projectId: string | undefined, filter: { status?: string; tags?: string[]; minScore?: number }) =>
  queryOptions({
    queryKey: leadKeys.audience(orgId, projectId, filter),
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/orgs/{orgId}/leads', {
          params: { path: { orgId }, query: { pageSize: 1, projectId, status: filter.status, tags: filter.tags?.join(','), minScore: filter.minScore } },
        }),
      ),
  });

/**
 * Every change of a lead makes all the lead queries stale (lists, the lead, its history). `onDone`
 * runs with the answer before the refetches, as the page's own state changed before them.
 */
function useLeadsMutation<V, R>(orgId: string, mutationFn: (variables: V) => Promise<R>, onDone?: (data: R) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn,
    onSuccess: (data) => {
      onDone?.(data);
      return queryClient.invalidateQueries({ queryKey: leadKeys.all(orgId) });
    },
  });
}

export const useUpdateLead = (orgId: string, id: string, onDone?: () => void) =>
  useLeadsMutation(
    orgId,
    (body: Record<string, unknown>) => unwrap(api.PATCH('/api/v1/orgs/{orgId}/leads/{id}', { params: { path: { orgId, id } }, body: body as never })),
    onDone,
  );

const postLead = (orgId: string, body: Record<string, unknown>) =>
  unwrap(api.POST('/api/v1/orgs/{orgId}/leads', { params: { path: { orgId } }, body: body as never }));
export const useCreateLead = (orgId: string, onDone: (lead: Awaited<ReturnType<typeof postLead>>) => void) =>
  useLeadsMutation(orgId, (body: Record<string, unknown>) => postLead(orgId, body), onDone);

export type BulkAction = 'tag' | 'untag' | 'setStatus' | 'delete';
const postBulk = (orgId: string, body: { ids: string[]; action: BulkAction; value?: string | string[] }) =>
  unwrap(api.POST('/api/v1/orgs/{orgId}/leads/bulk', { params: { path: { orgId } }, body }));
export const useBulkLeads = (orgId: string, onDone: (result: Awaited<ReturnType<typeof postBulk>>) => void) =>
  useLeadsMutation(orgId, (body: { ids: string[]; action: BulkAction; value?: string | string[] }) => postBulk(orgId, body), onDone);

/** One chunk of a CSV import (or its dry run); the caller makes the leads stale once all are sent (`leadsImported`). */
export const importLeads = (orgId: string, csv: string, dryRun: boolean) =>
  unwrap(
    api.POST('/api/v1/orgs/{orgId}/leads/import', {
      params: { path: { orgId }, query: { dryRun } },
      body: csv as never,
      bodySerializer: (body: unknown) => body as string,
      headers: { 'content-type': 'text/csv' },
    }),
  );
