/** Approvals: keys, the queue, one approval, a run's pending ones, and the decisions. */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type QueryOf, type Schemas } from '../api/client';
import { runKeys } from './runs';

type Approval = Schemas['Approval'];
export type ApprovalListQuery = QueryOf<'/api/v1/orgs/{orgId}/approvals'>;

export const approvalKeys = {
  all: (orgId: string) => [orgId, 'approvals'] as const,
  list: (orgId: string, query: ApprovalListQuery) => [...approvalKeys.all(orgId), 'list', query] as const,
  detail: (orgId: string, id: string) => [...approvalKeys.all(orgId), 'one', id] as const,
  ofRun: (orgId: string, runId: string) => [...approvalKeys.all(orgId), 'run', runId] as const,
};

export const approvalsQuery = (orgId: string, query: ApprovalListQuery) =>
  queryOptions({
    queryKey: approvalKeys.list(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/approvals', { params: { path: { orgId }, query } })),
  });

export const approvalQuery = (orgId: string, id: string) =>
  queryOptions({
    queryKey: approvalKeys.detail(orgId, id),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/approvals/{id}', { params: { path: { orgId, id } } })),
  });

/** A run's pending approvals (read while it waits). */
export const runApprovalsQuery = (orgId: string, runId: string) =>
  queryOptions({
    queryKey: approvalKeys.ofRun(orgId, runId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/approvals', { params: { path: { orgId }, query: { runId, status: 'PENDING' } } })),
  });

/**
 * Approve (optionally with an edited payload) or reject: the approval's entry set, the approvals
 * and, for a workflow's, its runs stale; a refused decision refetches the approval (decided elsewhere).
 */
export function useDecideApproval(orgId: string, id: string) {
  const queryClient = useQueryClient();
  const done = async (updated: Approval) => {
    queryClient.setQueryData(approvalKeys.detail(orgId, id), updated);
    await queryClient.invalidateQueries({ queryKey: approvalKeys.all(orgId) });
    if (updated.runId) await queryClient.invalidateQueries({ queryKey: runKeys.all(orgId) });
  };
  const refetch = () => void queryClient.invalidateQueries({ queryKey: approvalKeys.detail(orgId, id) });
  const approve = useMutation({
    mutationFn: (body: { comment?: string; editedPayload?: unknown }) =>
      unwrap(api.POST('/api/v1/orgs/{orgId}/approvals/{id}/approve', { params: { path: { orgId, id } }, body })),
    onSuccess: done,
    onError: refetch,
  });
  const reject = useMutation({
    mutationFn: (body: { comment?: string }) => unwrap(api.POST('/api/v1/orgs/{orgId}/approvals/{id}/reject', { params: { path: { orgId, id } }, body })),
    onSuccess: done,
    onError: refetch,
  });
  return { approve, reject };
}
