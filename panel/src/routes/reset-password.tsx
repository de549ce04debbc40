import { useState, type FormEvent } from 'react';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useMutation } from '@tanstack/react-query';
import { ApiError } from '../api/client';
import { confirmPasswordReset, requestPasswordReset } from '../queries/account';
import { str } from '../lib/list';
import { AuthLayout } from '../components/auth-layout';
import { TextField } from '../components/ui/field';
import { Button } from '../components/ui/button';
import { FormError } from '../components/ui/states';
import { passwordProblems } from '../components/settings/passwords';

/** A forgotten password: ask for a link by e-mail; the link (`?token=`) leads back here to set a new one. */
export const Route = createFileRoute('/reset-password')({
  validateSearch: (raw: Record<string, unknown>): { token?: string } => ({ token: str(raw.token) }),
  component: ResetPassword,
});

function ResetPassword() {
  const { token } = Route.useSearch();
  return token ? <SetNewPassword token={token} /> : <RequestLink />;
}

function RequestLink() {
  const [email, setEmail] = useState('');
  const request = useMutation({
    mutationFn: () => requestPasswordReset(email.trim()),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    request.mutate();
  };
  const errors = request.error instanceof ApiError ? request.error.fieldErrors : {};
  return (
    <AuthLayout
      title="Reset your password"
      footer={
        <>
          Remembered it?{' '}
          <Link to="/login" className="font-medium text-indigo-600">
            Sign in
          </Link>
        </>
      }
    >
      {request.isSuccess ? (
        <div role="status" className="space-y-3 text-sm text-slate-700">
          <p className="font-medium text-slate-900">Check your e-mail</p>
          <p>
            If <span className="font-medium">{email.trim()}</span> has an account, a link to set a new password is on its way. It works once, for one hour.
          </p>
          <p className="text-slate-500">
            Nothing arrived after a few minutes? Look in the spam folder, or ask your administrator whether this service sends e-mail.
          </p>
          <Button onClick={() => request.reset()}>Send another link</Button>
        </div>
      ) : (
        <form onSubmit={submit} className="space-y-4">
          <p className="text-sm text-slate-600">Enter the e-mail address of your account; we send you a link to choose a new password.</p>
          <TextField
            label="Email"
            type="email"
            autoComplete="email"
            required
            maxLength={254}
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            error={errors.email}
          />
          <FormError error={request.error} />
          <Button type="submit" variant="primary" className="w-full" disabled={request.isPending}>
            Send reset link
          </Button>
        </form>
      )}
    </AuthLayout>
  );
}

function SetNewPassword({ token }: { token: string }) {
  const [fields, setFields] = useState({ newPassword: '', confirm: '' });
  const [checked, setChecked] = useState(false);
  const confirm = useMutation({
    mutationFn: () => confirmPasswordReset(token, fields.newPassword),
  });
  const local = passwordProblems(fields);
  const remote = confirm.error instanceof ApiError ? confirm.error.fieldErrors : {};
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (Object.keys(local).length === 0) confirm.mutate();
  };
  if (confirm.isSuccess) {
    return (
      <AuthLayout title="Password changed">
        <div role="status" className="space-y-4 text-sm text-slate-700">
          <p>Your new password is set, and every session of your account was signed out.</p>
          <Link
            to="/login"
            className="inline-flex w-full items-center justify-center rounded-md bg-indigo-600 px-3.5 py-2 text-sm font-medium text-white hover:bg-indigo-500"
          >
            Sign in
          </Link>
        </div>
      </AuthLayout>
    );
  }
  return (
    <AuthLayout
      title="Choose a new password"
      footer={
        <Link to="/login" className="font-medium text-indigo-600">
          Back to sign in
        </Link>
      }
    >
      {remote.token ? (
        <div role="alert" className="space-y-3 text-sm">
          <p className="font-medium text-red-700">This link does not work any more.</p>
          <p className="text-slate-700">Reset links work once, for one hour, and only the newest one counts.</p>
          <Link to="/reset-password" search={{}} className="font-medium text-indigo-600">
            Ask for a new link
          </Link>
        </div>
      ) : (
        <form onSubmit={submit} className="space-y-4" noValidate>
          <TextField
            label="New password"
            type="password"
            autoComplete="new-password"
            required
            maxLength={256}
            value={fields.newPassword}
            onChange={(e) => setFields({ ...fields, newPassword: e.target.value })}
            error={(checked ? local.newPassword : undefined) ?? remote.newPassword}
            hint="At least 8 characters, not a common password."
          />
          <TextField
            label="Confirm new password"
            type="password"
            autoComplete="new-password"
            required
            maxLength={256}
            value={fields.confirm}
            onChange={(e) => setFields({ ...fields, confirm: e.target.value })}
            error={checked ? local.confirm : undefined}
          />
          {confirm.error && Object.keys(remote).length === 0 ? <FormError error={confirm.error} /> : null}
          <Button type="submit" variant="primary" className="w-full" disabled={confirm.isPending}>
            Set new password
          </Button>
        </form>
      )}
    </AuthLayout>
  );
}
