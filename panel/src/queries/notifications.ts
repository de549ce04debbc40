/** The signed-in user's notifications in an organization: key, queries, marking one read. */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api/client';

export const notificationKeys = {
  all: (orgId: string) => [orgId, 'notifications'] as const,
  unread: (orgId: string) => [...notificationKeys.all(orgId), 'unread'] as const,
};

/** The latest 20 (read or not). */
export const notificationsQuery = (orgId: string) =>
  queryOptions({
    queryKey: notificationKeys.all(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/notifications', { params: { path: { orgId }, query: { pageSize: 20 } } })),
  });

/** How many are unread (the count of a one-item page). */
export const unreadNotificationsQuery = (orgId: string) =>
  queryOptions({
    queryKey: notificationKeys.unread(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/notifications', { params: { path: { orgId }, query: { unread: true, pageSize: 1 } } })),
  });

export function useReadNotification(orgId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.POST('/api/v1/orgs/{orgId}/notifications/{id}/read', { params: { path: { orgId, id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: notificationKeys.all(orgId) }),
  });
}
