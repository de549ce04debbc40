import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError, type Schemas } from '../../../api/client';
import { reconnect, reconnected } from '../../../queries/content';
import { Modal } from '../../ui/dialog';
import { Button } from '../../ui/button';
import { FormError } from '../../ui/states';
import { CredentialFields, credentialsOf, PROVIDER_LABELS } from './connect-dialog';

type Integration = Schemas['Integration'];

export function ReconnectDialog({ orgId, integration, onClose }: { orgId: string; integration: Integration; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [token, setToken] = useState('');
  const [author, setAuthor] = useState('');
  const [done, setDone] = useState<number | null>(null);
  const run = useMutation({
    mutationFn: () => reconnect(orgId, integration, credentialsOf(integration.provider, token, author)),
    onSuccess: (result) => setDone(result.moved),
    onSettled: () => reconnected(queryClient, orgId),
  });
  const errors = run.error instanceof ApiError ? run.error.fieldErrors : {};
  const submit = (e: FormEvent) => {
    e.preventDefault();
    run.mutate();
  };
  return (
    <Modal
      open
      onOpenChange={(open) => !open && onClose()}
      title={`Reconnect ${integration.name}`}
      description={`Give a new ${PROVIDER_LABELS[integration.provider]} token. Posts waiting to be published move to the renewed connection.`}
    >
      {done !== null ? (
        <div className="space-y-4">
          <p role="status" className="rounded-md bg-emerald-50 p-3 text-sm text-emerald-900">
            Reconnected. {done} waiting post{done === 1 ? '' : 's'} will publish through it.
          </p>
          <div className="flex justify-end">
            <Button variant="primary" onClick={onClose}>
              Done
            </Button>
          </div>
        </div>
      ) : (
        <form className="space-y-4" onSubmit={submit}>
          {integration.lastError ? <p className="rounded-md bg-red-50 p-3 text-sm text-red-800">Last error: {integration.lastError.message}</p> : null}
          <CredentialFields provider={integration.provider} token={token} author={author} errors={errors} onToken={setToken} onAuthor={setAuthor} />
          <FormError error={run.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={onClose}>Cancel</Button>
            <Button type="submit" variant="primary" disabled={run.isPending}>
              {run.isPending ? 'Reconnecting…' : 'Reconnect'}
            </Button>
          </div>
        </form>
      )}
    </Modal>
  );
}
