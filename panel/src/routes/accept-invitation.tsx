import { useState, type FormEvent } from 'react';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError } from '../api/client';
import { acceptInvitation, invitationSessionQuery } from '../queries/account';
import { str } from '../lib/list';
import { currentToken, signOut, startSession } from '../lib/session';
import { AuthLayout } from '../components/auth-layout';
import { TextField } from '../components/ui/field';
import { Button } from '../components/ui/button';
import { FormError, Loading } from '../components/ui/states';

/**
 * The invitation link (`?token=`): joins the organization, signed in. A new address becomes an
 * account with the password chosen here; an existing account proves itself with its password, or by
 * being the one signed in.
 */
export const Route = createFileRoute('/accept-invitation')({
  validateSearch: (raw: Record<string, unknown>): { token?: string } => ({ token: str(raw.token) }),
  component: AcceptInvitation,
});

function AcceptInvitation() {
  const { token } = Route.useSearch();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  // Someone signed in already (the cookie of an earlier session) may accept as that account.
  const session = useQuery(invitationSessionQuery);
  const accept = useMutation({
    mutationFn: async (as: 'password' | 'session') => {
      const bearer = as === 'session' ? await currentToken() : null;
      return acceptInvitation(
        as === 'password' ? { token: token!, password, name: name.trim() || undefined, cookie: true } : { token: token!, cookie: true },
        bearer,
      );
    },
    onSuccess: async (data) => {
      startSession(data.tokens);
      queryClient.clear();
      await navigate({ to: '/orgs/$orgId', params: { orgId: data.organization.id } });
    },
  });
  const errors = accept.error instanceof ApiError ? accept.error.fieldErrors : {};

  if (!token) {
    return (
      <AuthLayout title="Invitation">
        <p role="alert" className="text-sm text-slate-700">
          This page opens from the link in an invitation. Ask whoever invited you for the link, or{' '}
          <Link to="/login" className="font-medium text-indigo-600">
            sign in
          </Link>
          .
        </p>
      </AuthLayout>
    );
  }
  if (errors.token) {
    return (
      <AuthLayout title="Invitation">
        <div role="alert" className="space-y-2 text-sm text-slate-700">
          <p className="font-medium text-red-700">This invitation link does not work.</p>
          <p>It may have been used, revoked or replaced by a newer one, or it expired (links last 7 days). Ask for a new invitation.</p>
          <p>
            <Link to="/login" className="font-medium text-indigo-600">
              Sign in
            </Link>
          </p>
        </div>
      </AuthLayout>
    );
  }
  const submit = (event: FormEvent) => {
    event.preventDefault();
    accept.mutate('password');
  };
  return (
    <AuthLayout title="Join the organization">
      {session.isPending ? (
        <Loading />
      ) : session.data ? (
        <div className="mb-6 space-y-3 rounded-md bg-slate-50 p-3 text-sm ring-1 ring-slate-200">
          <p>
            You are signed in as <span className="font-medium">{session.data.user.email}</span>.
          </p>
          <Button variant="primary" className="w-full" disabled={accept.isPending} onClick={() => accept.mutate('session')}>
            Accept as {session.data.user.email}
          </Button>
          <button type="button" className="text-xs text-slate-600 underline" onClick={() => void signOut().then(() => session.refetch())}>
            Not you? Sign out
          </button>
        </div>
      ) : null}
      <form onSubmit={submit} className="space-y-4">
        <p className="text-sm text-slate-600">
          New here? Choose a password to create your account. Already have an account with the invited address? Enter its password.
        </p>
        <TextField
          label="Name"
          autoComplete="name"
          maxLength={200}
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={errors.name}
          hint="For a new account; optional."
        />
        <TextField
          label="Password"
          type="password"
          autoComplete="new-password"
          required
          maxLength={256}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={errors.password}
          hint="At least 8 characters, not a common password."
        />
        {accept.error && Object.keys(errors).length === 0 ? <FormError error={accept.error} /> : null}
        <Button type="submit" variant="primary" className="w-full" disabled={accept.isPending}>
          Accept invitation
        </Button>
      </form>
    </AuthLayout>
  );
}
