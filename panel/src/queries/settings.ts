import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';

/** The organization's projects (a short array, not paged). */
export const projectsQuery = (orgId: string) => queryOptions({
  queryKey: [orgId, 'projects'],
  queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/projects', { params: { path: { orgId } } })),
  staleTime: 60_000,
});
