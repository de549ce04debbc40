/** Analytics: the daily figures of a Google connection and the alert rules (keys, queries, changes). */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type BodyOf } from '../api/client';
import type { paths } from '../api/schema';

export type Rule = paths['/api/v1/orgs/{orgId}/analytics/rules/{id}']['get']['responses'][200]['content']['application/json'];
export type DailyAnswer = paths['/api/v1/orgs/{orgId}/analytics/daily']['get']['responses'][200]['content']['application/json'];

export const analyticsKeys = {
  all: (orgId: string) => [orgId, 'analytics'] as const,
  daily: (orgId: string, input: { integrationId: string; from: string; to: string }) => [...analyticsKeys.all(orgId), 'daily', input] as const,
  rules: (orgId: string) => [...analyticsKeys.all(orgId), 'rules'] as const,
  rulePage: (orgId: string, page: number) => [...analyticsKeys.rules(orgId), { page }] as const,
};

export const dailyQuery = (orgId: string, input: { integrationId: string; from: string; to: string }) =>
  queryOptions({
    queryKey: analyticsKeys.daily(orgId, input),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/analytics/daily', { params: { path: { orgId }, query: input } })),
  });

export const RULES_PAGE_SIZE = 20;

export const rulesQuery = (orgId: string, page: number) =>
  queryOptions({
    queryKey: analyticsKeys.rulePage(orgId, page),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/analytics/rules', { params: { path: { orgId }, query: { page, pageSize: RULES_PAGE_SIZE } } })),
  });

type RuleBody = BodyOf<'/api/v1/orgs/{orgId}/analytics/rules', 'post'>;

/** Creates a rule, or changes one (`id`): the rules are stale. */
export function useSaveRule(orgId: string, id: string | null) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RuleBody) =>
      id
        ? unwrap(api.PATCH('/api/v1/orgs/{orgId}/analytics/rules/{id}', { params: { path: { orgId, id } }, body }))
        : unwrap(api.POST('/api/v1/orgs/{orgId}/analytics/rules', { params: { path: { orgId } }, body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: analyticsKeys.rules(orgId) }),
  });
}

export function useDeleteRule(orgId: string, id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/v1/orgs/{orgId}/analytics/rules/{id}', { params: { path: { orgId, id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: analyticsKeys.rules(orgId) }),
  });
}
