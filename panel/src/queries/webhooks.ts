/**
 * Webhook endpoints and their deliveries: keys (an endpoint's deliveries under the endpoint, so a
 * change of the endpoint area reaches them), queries and changes.
 */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type BodyOf, type QueryOf } from '../api/client';

export type EndpointListQuery = QueryOf<'/api/v1/orgs/{orgId}/webhook-endpoints'>;
export type DeliveryListQuery = QueryOf<'/api/v1/orgs/{orgId}/webhook-endpoints/{id}/deliveries'>;

export const webhookKeys = {
  all: (orgId: string) => [orgId, 'webhooks'] as const,
  list: (orgId: string, query: EndpointListQuery) => [...webhookKeys.all(orgId), 'list', query] as const,
  detail: (orgId: string, id: string) => [...webhookKeys.all(orgId), id] as const,
  deliveries: (orgId: string, id: string) => [...webhookKeys.detail(orgId, id), 'deliveries'] as const,
  deliveryList: (orgId: string, id: string, query: DeliveryListQuery) => [...webhookKeys.deliveries(orgId, id), query] as const,
};

export const endpointsQuery = (orgId: string, query: EndpointListQuery) =>
  queryOptions({
    queryKey: webhookKeys.list(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/webhook-endpoints', { params: { path: { orgId }, query } })),
  });

export const endpointQuery = (orgId: string, id: string) =>
  queryOptions({
    queryKey: webhookKeys.detail(orgId, id),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/webhook-endpoints/{id}', { params: { path: { orgId, id } } })),
  });

export const deliveriesQuery = (orgId: string, id: string, query: DeliveryListQuery) =>
  queryOptions({
    queryKey: webhookKeys.deliveryList(orgId, id, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/webhook-endpoints/{id}/deliveries', { params: { path: { orgId, id }, query } })),
  });

const postEndpoint = (orgId: string, body: BodyOf<'/api/v1/orgs/{orgId}/webhook-endpoints', 'post'>) =>
  unwrap(api.POST('/api/v1/orgs/{orgId}/webhook-endpoints', { params: { path: { orgId } }, body }));

/** A new endpoint (its answer holds the signing secret, shown once); `onDone` runs first. */
export function useCreateEndpoint(orgId: string, onDone: (endpoint: Awaited<ReturnType<typeof postEndpoint>>) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: BodyOf<'/api/v1/orgs/{orgId}/webhook-endpoints', 'post'>) => postEndpoint(orgId, body),
    onSuccess: async (endpoint) => {
      onDone(endpoint);
      await queryClient.invalidateQueries({ queryKey: webhookKeys.all(orgId) });
    },
  });
}

/** Changes an endpoint (its fields, or only `active`); `onDone` runs first. */
export function useUpdateEndpoint(orgId: string, id: string, onDone?: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: BodyOf<'/api/v1/orgs/{orgId}/webhook-endpoints/{id}', 'patch'>) =>
      unwrap(api.PATCH('/api/v1/orgs/{orgId}/webhook-endpoints/{id}', { params: { path: { orgId, id } }, body })),
    onSuccess: async () => {
      onDone?.();
      await queryClient.invalidateQueries({ queryKey: webhookKeys.all(orgId) });
    },
  });
}

export function useDeleteEndpoint(orgId: string, id: string, onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/v1/orgs/{orgId}/webhook-endpoints/{id}', { params: { path: { orgId, id } } })),
    onSuccess: async () => {
      onDone();
      await queryClient.invalidateQueries({ queryKey: webhookKeys.all(orgId) });
    },
  });
}

/** A new signing secret (shown once): the old one stops verifying at once. */
export const useRotateSecret = (orgId: string, id: string) =>
  useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/orgs/{orgId}/webhook-endpoints/{id}/rotate-secret', { params: { path: { orgId, id } } })),
  });

/** A signed test delivery, sent at once. */
export const useTestEndpoint = (orgId: string, id: string) =>
  useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/orgs/{orgId}/webhook-endpoints/{id}/test', { params: { path: { orgId, id } } })),
  });

export function useResendDelivery(orgId: string, id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (deliveryId: string) =>
      unwrap(api.POST('/api/v1/orgs/{orgId}/webhook-endpoints/{id}/deliveries/{deliveryId}/resend', { params: { path: { orgId, id, deliveryId } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: webhookKeys.deliveries(orgId, id) }),
  });
}
