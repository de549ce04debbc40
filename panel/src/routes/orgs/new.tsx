import { useState, type FormEvent } from 'react';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useCreateOrg } from '../../queries/account';
import { requireSession } from '../../lib/guard';
import { AuthLayout } from '../../components/auth-layout';
import { TextField } from '../../components/ui/field';
import { Button } from '../../components/ui/button';
import { FormError } from '../../components/ui/states';

export const Route = createFileRoute('/orgs/new')({
  beforeLoad: ({ location }) => requireSession(location),
  component: NewOrg,
});

function NewOrg() {
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const create = useCreateOrg();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(name, { onSuccess: (org) => navigate({ to: '/orgs/$orgId', params: { orgId: org.id } }) });
  };
  return (
    <AuthLayout title="Create an organization">
      <form onSubmit={submit} className="space-y-4">
        <TextField
          label="Organization name"
          required
          maxLength={200}
          value={name}
          onChange={(e) => setName(e.target.value)}
          hint="You become its owner; a Default project is created."
        />
        <FormError error={create.error} />
        <Button type="submit" variant="primary" className="w-full" disabled={create.isPending}>
          Create organization
        </Button>
      </form>
    </AuthLayout>
  );
}
