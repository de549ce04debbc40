import { useState, type FormEvent } from 'react';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { login } from '../queries/account';
import { startSession } from '../lib/session';
import { str } from '../lib/list';
import { AuthLayout } from '../components/auth-layout';
import { TextField } from '../components/ui/field';
import { Button } from '../components/ui/button';
import { FormError } from '../components/ui/states';

export const Route = createFileRoute('/login')({
  validateSearch: (raw: Record<string, unknown>): { redirect?: string } => ({ redirect: str(raw.redirect) }),
  component: Login,
});

/** Only a path of this panel: never an address elsewhere (an open redirect). */
function safeRedirect(target: string | undefined): string {
  return target && target.startsWith('/') && !target.startsWith('//') ? target : '/';
}

function Login() {
  const { redirect } = Route.useSearch();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useMutation({
    mutationFn: () => login({ email, password, cookie: true }),
    onSuccess: async (data) => {
      startSession(data.tokens);
      queryClient.clear();
      await navigate({ href: safeRedirect(redirect) });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate();
  };
  return (
    <AuthLayout
      title="Sign in"
      footer={
        <>
          No account yet?{' '}
          <Link to="/register" className="font-medium text-indigo-600">
            Create one
          </Link>
        </>
      }
    >
      <form onSubmit={submit} className="space-y-4">
        <TextField label="Email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <TextField label="Password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        <FormError error={signIn.error} />
        <Button type="submit" variant="primary" className="w-full" disabled={signIn.isPending}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </Button>
        <p className="text-center text-sm">
          <Link to="/reset-password" className="text-slate-600 hover:text-indigo-600">
            Forgot your password?
          </Link>
        </p>
      </form>
    </AuthLayout>
  );
}
