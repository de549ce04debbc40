/** API keys: key, query and changes. */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type BodyOf } from '../api/client';

export const apiKeyKeys = {
  all: (orgId: string) => [orgId, 'api-keys'] as const,
};

export const apiKeysQuery = (orgId: string) =>
  queryOptions({
    queryKey: apiKeyKeys.all(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/api-keys', { params: { path: { orgId } } })),
  });

/** A new key (its answer holds the secret, shown once). */
export function useCreateApiKey(orgId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: BodyOf<'/api/v1/orgs/{orgId}/api-keys', 'post'>) =>
      unwrap(api.POST('/api/v1/orgs/{orgId}/api-keys', { params: { path: { orgId } }, body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiKeyKeys.all(orgId) }),
  });
}

/** Revokes a key; `onDone` runs first (the dialog closes). */
export function useRevokeApiKey(orgId: string, id: string, onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/v1/orgs/{orgId}/api-keys/{id}', { params: { path: { orgId, id } } })),
    onSuccess: async () => {
      onDone();
      await queryClient.invalidateQueries({ queryKey: apiKeyKeys.all(orgId) });
    },
  });
}
