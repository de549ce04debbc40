import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { ApiError } from '../../api/client';
import { changePassword, signInAgain } from '../../queries/account';
import { startSession } from '../../lib/session';
import { TextField } from '../ui/field';
import { Button } from '../ui/button';
import { FormError } from '../ui/states';
import { passwordProblems } from './passwords';

/**
 * Changes the signed-in user's password. The API then revokes every refresh token of the user (this
 * session's cookie too), so the form signs in again with the new password to keep this tab working.
 */
export function PasswordForm({ email }: { email: string }) {
  const [fields, setFields] = useState({ currentPassword: '', newPassword: '', confirm: '' });
  const [checked, setChecked] = useState(false);
  const [outcome, setOutcome] = useState<'renewed' | 'signed-out' | null>(null);
  const change = useMutation({
    mutationFn: async () => {
      await changePassword(fields.currentPassword, fields.newPassword);
      const data = await signInAgain(email, fields.newPassword);
      if (data) {
        startSession(data.tokens);
        return 'renewed' as const;
      }
      return 'signed-out' as const;
    },
    onSuccess: (result) => {
      setOutcome(result);
      setChecked(false);
      setFields({ currentPassword: '', newPassword: '', confirm: '' });
    },
  });
  const local = passwordProblems(fields);
  const remote = change.error instanceof ApiError ? change.error.fieldErrors : {};
  const set = (key: keyof typeof fields) => (e: { target: { value: string } }) => {
    setFields({ ...fields, [key]: e.target.value });
    setOutcome(null);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (Object.keys(local).length === 0) change.mutate();
  };
  return (
    <form className="space-y-4" onSubmit={submit} aria-label="Change password" noValidate>
      <input type="text" name="username" autoComplete="username" value={email} readOnly hidden />
      <TextField
        label="Current password"
        type="password"
        autoComplete="current-password"
        required
        maxLength={256}
        value={fields.currentPassword}
        onChange={set('currentPassword')}
        error={remote.currentPassword}
      />
      <TextField
        label="New password"
        type="password"
        autoComplete="new-password"
        required
        maxLength={256}
        value={fields.newPassword}
        onChange={set('newPassword')}
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
        onChange={set('confirm')}
        error={checked ? local.confirm : undefined}
      />
      {change.error && Object.keys(remote).length === 0 ? <FormError error={change.error} /> : null}
      {outcome ? (
        <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
          {outcome === 'renewed'
            ? 'Password changed. Your other sessions are signed out.'
            : 'Password changed. Sign in again with the new password when asked.'}
        </p>
      ) : null}
      <Button type="submit" variant="primary" disabled={change.isPending}>
        {change.isPending ? 'Changing…' : 'Change password'}
      </Button>
    </form>
  );
}
