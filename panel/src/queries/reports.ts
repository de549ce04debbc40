/** Reports: keys, queries, and applying a recommendation (what it changes is stale after it). */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type QueryOf } from '../api/client';
import { agentRunKeys } from './agents';
import { postKeys } from './content';
import { leadKeys } from './leads';
import { runKeys } from './runs';
import { workflowKeys } from './workflows';

export type ReportListQuery = QueryOf<'/api/v1/orgs/{orgId}/reports'>;

export const reportKeys = {
  all: (orgId: string) => [orgId, 'reports'] as const,
  list: (orgId: string, query: ReportListQuery) => [...reportKeys.all(orgId), 'list', query] as const,
  detail: (orgId: string, id: string) => [...reportKeys.all(orgId), 'one', id] as const,
};

export const reportsQuery = (orgId: string, query: ReportListQuery) =>
  queryOptions({
    queryKey: reportKeys.list(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/reports', { params: { path: { orgId }, query } })),
  });

export const reportQuery = (orgId: string, id: string) =>
  queryOptions({
    queryKey: reportKeys.detail(orgId, id),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/reports/{id}', { params: { path: { orgId, id } } })),
  });

const applyRecommendation = (orgId: string, id: string, index: number) =>
  unwrap(api.POST('/api/v1/orgs/{orgId}/reports/{id}/apply-recommendation', { params: { path: { orgId, id } }, body: { index } }));

/**
 * Applies one recommendation of a report: the report's entry is the answer's; what the actions
 * change is stale: leads (tags, status), drafts, workflow runs, agent runs, reports, and the
 * workflows (use_template creates one; the lists missed it before). `onDone` runs first.
 */
export function useApplyRecommendation(orgId: string, id: string, onDone: (data: Awaited<ReturnType<typeof applyRecommendation>>) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (index: number) => applyRecommendation(orgId, id, index),
    onSuccess: (data) => {
      onDone(data);
      queryClient.setQueryData(reportKeys.detail(orgId, id), data.report);
      for (const key of [
        leadKeys.all(orgId),
        postKeys.all(orgId),
        runKeys.all(orgId),
        agentRunKeys.all(orgId),
        reportKeys.all(orgId),
        workflowKeys.lists(orgId),
      ]) {
        void queryClient.invalidateQueries({ queryKey: key });
      }
    },
  });
}
