import { useState, type FormEvent } from 'react';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError } from '../api/client';
import { register as registerAccount } from '../queries/account';
import { startSession } from '../lib/session';
import { AuthLayout } from '../components/auth-layout';
import { TextField } from '../components/ui/field';
import { Button } from '../components/ui/button';
import { FormError } from '../components/ui/states';

export const Route = createFileRoute('/register')({ component: Register });

function Register() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [form, setForm] = useState({ name: '', email: '', password: '', organizationName: '' });
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [key]: e.target.value });
  const register = useMutation({
    mutationFn: () =>
      registerAccount({
        email: form.email,
        password: form.password,
        name: form.name || undefined,
        organizationName: form.organizationName || undefined,
        cookie: true,
      }),
    onSuccess: async (data) => {
      startSession(data.tokens);
      queryClient.clear();
      await navigate({ to: '/orgs/$orgId', params: { orgId: data.organization.id } });
    },
  });
  const fields = register.error instanceof ApiError ? register.error.fieldErrors : {};
  const submit = (event: FormEvent) => {
    event.preventDefault();
    register.mutate();
  };
  return (
    <AuthLayout
      title="Create your account"
      footer={
        <>
          Already have an account?{' '}
          <Link to="/login" className="font-medium text-indigo-600">
            Sign in
          </Link>
        </>
      }
    >
      <form onSubmit={submit} className="space-y-4">
        <TextField label="Your name" autoComplete="name" value={form.name} onChange={set('name')} />
        <TextField label="Email" type="email" autoComplete="email" required value={form.email} onChange={set('email')} error={fields.email} />
        <TextField
          label="Password"
          type="password"
          autoComplete="new-password"
          required
          minLength={8}
          value={form.password}
          onChange={set('password')}
          error={fields.password}
          hint="At least 8 characters, not a common password."
        />
        <TextField
          label="Organization name"
          value={form.organizationName}
          onChange={set('organizationName')}
          hint="Your company or team; you can add more later."
        />
        <FormError error={register.error} />
        <Button type="submit" variant="primary" className="w-full" disabled={register.isPending}>
          Create account
        </Button>
      </form>
    </AuthLayout>
  );
}
