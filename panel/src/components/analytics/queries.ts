import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema';

export type Rule = paths['/api/v1/orgs/{orgId}/analytics/rules/{id}']['get']['responses'][200]['content']['application/json'];
export type DailyAnswer = paths['/api/v1/orgs/{orgId}/analytics/daily']['get']['responses'][200]['content']['application/json'];

/** The organization's Google connections (the analytics sources), at most 100. */
export const googleIntegrationsQuery = (orgId: string) => queryOptions({
  queryKey: [orgId, 'integrations', 'list', { provider: 'google', pageSize: 100 }],
  queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/integrations', { params: { path: { orgId }, query: { provider: 'google', pageSize: 100 } } })),
});

export const dailyQuery = (orgId: string, input: { integrationId: string; from: string; to: string }) => queryOptions({
  queryKey: [orgId, 'analytics', 'daily', input],
  queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/analytics/daily', { params: { path: { orgId }, query: input } })),
});

export const RULES_PAGE_SIZE = 20;

export const rulesQuery = (orgId: string, page: number) => queryOptions({
  queryKey: [orgId, 'analytics', 'rules', { page }],
  queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/analytics/rules', { params: { path: { orgId }, query: { page, pageSize: RULES_PAGE_SIZE } } })),
});
