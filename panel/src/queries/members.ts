/** Members and invitations of an organization: keys, queries and changes. */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type BodyOf } from '../api/client';
import { meQuery, orgsQuery } from './account';

export const memberKeys = {
  all: (orgId: string) => [orgId, 'members'] as const,
};
export const invitationKeys = {
  all: (orgId: string) => [orgId, 'invitations'] as const,
};

/** The organization's members (names for assignees and authors; the members page reads it fresh). */
export const membersQuery = (orgId: string) =>
  queryOptions({
    queryKey: memberKeys.all(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/members', { params: { path: { orgId } } })),
    staleTime: 60_000,
  });

export const invitationsQuery = (orgId: string) =>
  queryOptions({
    queryKey: invitationKeys.all(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/invitations', { params: { path: { orgId } } })),
  });

type Role = BodyOf<'/api/v1/orgs/{orgId}/members/{userId}', 'patch'>['role'];

/** A member's new role: the members and one's own account (its roles) are stale; `onDone` runs first. */
export function useChangeRole<T extends { userId: string }>(
  orgId: string,
  onDone: (updated: Awaited<ReturnType<typeof patchRole>>, input: { member: T; role: Role }) => void,
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { member: T; role: Role }) => patchRole(orgId, input.member.userId, input.role),
    onSuccess: async (updated, input) => {
      onDone(updated, input);
      await queryClient.invalidateQueries({ queryKey: memberKeys.all(orgId) });
      await queryClient.invalidateQueries({ queryKey: meQuery.queryKey });
    },
  });
}
const patchRole = (orgId: string, userId: string, role: Role) =>
  unwrap(api.PATCH('/api/v1/orgs/{orgId}/members/{userId}', { params: { path: { orgId, userId } }, body: { role } }));

/** Removes a member, or leaves (`self`: the organizations one belongs to are stale instead of the members). */
export function useRemoveMember(orgId: string, userId: string, self: boolean, onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/v1/orgs/{orgId}/members/{userId}', { params: { path: { orgId, userId } } })),
    onSuccess: async () => {
      onDone();
      await queryClient.invalidateQueries({ queryKey: self ? orgsQuery.queryKey : memberKeys.all(orgId) });
    },
  });
}

export function useInvite(orgId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: BodyOf<'/api/v1/orgs/{orgId}/invitations', 'post'>) =>
      unwrap(api.POST('/api/v1/orgs/{orgId}/invitations', { params: { path: { orgId } }, body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: invitationKeys.all(orgId) }),
  });
}

export function useRevokeInvitation(orgId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/orgs/{orgId}/invitations/{id}', { params: { path: { orgId, id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: invitationKeys.all(orgId) }),
  });
}
