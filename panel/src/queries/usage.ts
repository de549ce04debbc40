/** AI usage, the monthly budget and the dashboard's figures: keys, queries, and saving the budget. */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type QueryOf } from '../api/client';
import type { paths } from '../api/schema';

export type UsageQuery = QueryOf<'/api/v1/orgs/{orgId}/usage'>;
type StatsBody = NonNullable<paths['/api/v1/orgs/{orgId}/stats/query']['post']['requestBody']>['content']['application/json'];

export const usageKeys = {
  all: (orgId: string) => [orgId, 'usage'] as const,
  report: (orgId: string, query: UsageQuery) => [...usageKeys.all(orgId), query] as const,
};

export const budgetKeys = {
  all: (orgId: string) => [orgId, 'budget'] as const,
};

export const statsKeys = {
  all: (orgId: string) => [orgId, 'stats'] as const,
  dashboard: (orgId: string, range: unknown, timeZone: string) => [...statsKeys.all(orgId), 'dashboard', range, timeZone] as const,
};

export const usageQuery = (orgId: string, query: UsageQuery) =>
  queryOptions({
    queryKey: usageKeys.report(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/usage', { params: { path: { orgId }, query } })),
  });

export const budgetQuery = (orgId: string) =>
  queryOptions({
    queryKey: budgetKeys.all(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/budget', { params: { path: { orgId } } })),
  });

/** The dashboard's series (POST …/stats/query) for a range, keyed by the range and the time zone. */
export const dashboardStatsQuery = (
  orgId: string,
  range: { from: string; to: string; granularity: StatsBody['granularity'] },
  timeZone: string,
  metrics: StatsBody['metrics'],
) =>
  queryOptions({
    queryKey: statsKeys.dashboard(orgId, range, timeZone),
    queryFn: () =>
      unwrap(
        api.POST('/api/v1/orgs/{orgId}/stats/query', {
          params: { path: { orgId } },
          body: { metrics, from: range.from, to: range.to, granularity: range.granularity, timezone: timeZone },
        }),
      ),
  });

/** PUT …/budget: the answer is the budget's entry; the usage reports (which show it) are stale. */
const putBudget = (orgId: string, monthlyLimitUsd: number | null) =>
  unwrap(api.PUT('/api/v1/orgs/{orgId}/budget', { params: { path: { orgId } }, body: { monthlyLimitUsd } }));

export function useSaveBudget(orgId: string, onSaved: (budget: Awaited<ReturnType<typeof putBudget>>) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (monthlyLimitUsd: number | null) => putBudget(orgId, monthlyLimitUsd),
    onSuccess: async (data) => {
      onSaved(data);
      queryClient.setQueryData(budgetKeys.all(orgId), data);
      await queryClient.invalidateQueries({ queryKey: usageKeys.all(orgId) });
    },
  });
}
