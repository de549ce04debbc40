/** The organization itself, its plan and its projects: keys, queries and changes. */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';

export const settingsKeys = {
  organization: (orgId: string) => [orgId, 'organization'] as const,
  plan: (orgId: string) => [orgId, 'plan'] as const,
  projects: (orgId: string) => [orgId, 'projects'] as const,
};

/** The organization's projects (a short array, not paged). */
export const projectsQuery = (orgId: string) =>
  queryOptions({
    queryKey: settingsKeys.projects(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/projects', { params: { path: { orgId } } })),
    staleTime: 60_000,
  });

export const organizationQuery = (orgId: string) =>
  queryOptions({
    queryKey: settingsKeys.organization(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}', { params: { path: { orgId } } })),
  });

export const planQuery = (orgId: string) =>
  queryOptions({
    queryKey: settingsKeys.plan(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/plan', { params: { path: { orgId } } })),
  });

/** A new project; `onDone` runs first (the name field empties), then the projects are stale. */
export function useCreateProject(orgId: string, onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => unwrap(api.POST('/api/v1/orgs/{orgId}/projects', { params: { path: { orgId } }, body: { name } })),
    onSuccess: async () => {
      onDone();
      await queryClient.invalidateQueries({ queryKey: settingsKeys.projects(orgId) });
    },
  });
}
