/**
 * The signed-in account: who it is and its organizations (keys and queries), and the calls of
 * signing in, registering, passwords and invitations. lib/session.ts keeps the tokens.
 */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type BodyOf } from '../api/client';
import { restore } from '../lib/session';

export const accountKeys = {
  me: ['me'] as const,
  orgs: ['orgs'] as const,
  invitationSession: ['accept-invitation', 'session'] as const,
};

/** The signed-in user and their memberships. */
export const meQuery = queryOptions({
  queryKey: accountKeys.me,
  queryFn: () => unwrap(api.GET('/api/v1/auth/me')),
  staleTime: 60_000,
});

export const orgsQuery = queryOptions({
  queryKey: accountKeys.orgs,
  queryFn: () => unwrap(api.GET('/api/v1/orgs')),
  staleTime: 60_000,
});

/** Someone signed in already (the cookie of an earlier session), or null: an invitation may be accepted as that account. */
export const invitationSessionQuery = queryOptions({
  queryKey: accountKeys.invitationSession,
  queryFn: async () => ((await restore()) ? unwrap(api.GET('/api/v1/auth/me')) : null),
  retry: false,
  staleTime: Infinity,
});

export const login = (body: BodyOf<'/api/v1/auth/login', 'post'>) => unwrap(api.POST('/api/v1/auth/login', { body }));
export const register = (body: BodyOf<'/api/v1/auth/register', 'post'>) => unwrap(api.POST('/api/v1/auth/register', { body }));
export const requestPasswordReset = (email: string) => unwrap(api.POST('/api/v1/auth/password-reset', { body: { email } }));
export const confirmPasswordReset = (token: string, newPassword: string) =>
  unwrap(api.POST('/api/v1/auth/password-reset/confirm', { body: { token, newPassword } }));
export const changePassword = (currentPassword: string, newPassword: string) =>
  unwrap(api.POST('/api/v1/auth/password', { body: { currentPassword, newPassword } }));

/** Signs in again (after a password change), or null when it is refused: no error state of its own. */
export async function signInAgain(email: string, password: string) {
  const { data, response } = await api.POST('/api/v1/auth/login', { body: { email, password, cookie: true } });
  return response.ok && data ? data : null;
}

/** Accepts an invitation, as a new account (a password) or as the signed-in one (`bearer`). */
export const acceptInvitation = (body: BodyOf<'/api/v1/auth/invitations/accept', 'post'>, bearer: string | null) =>
  unwrap(api.POST('/api/v1/auth/invitations/accept', { body, headers: bearer ? { authorization: `Bearer ${bearer}` } : {} }));

/** A new organization: one's organizations and memberships are stale. */
export function useCreateOrg() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => unwrap(api.POST('/api/v1/orgs', { body: { name } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: accountKeys.orgs });
      await queryClient.invalidateQueries({ queryKey: accountKeys.me });
    },
  });
}
