import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ApiError, unwrap, type Schemas } from '../../../api/client';
import { Modal } from '../../ui/dialog';
import { Button } from '../../ui/button';
import { FormError } from '../../ui/states';
import { CredentialFields, credentialsOf, PROVIDER_LABELS } from './connect-dialog';

type Integration = Schemas['Integration'];

/** Posts that still publish through an account: the ones not yet published. */
const WAITING = 'DRAFT,APPROVED,SCHEDULED,FAILED';

/**
 * Reconnects an account connected by a pasted token with a new token (an OAuth connection
 * reconnects through its provider instead, keeping its id). The API has no call that replaces a
 * pasted token in place, so the panel connects the account
 * again under the same name and project, moves the posts waiting on the old connection to the new
 * one, and then removes the old connection. A step that fails stops there and says what was done.
 */
export async function reconnect(orgId: string, old: Integration, credentials: Record<string, string>): Promise<{ integration: Integration; moved: number }> {
  const provider = old.provider;
  if (provider === 'google') throw new Error('A Google account reconnects through Google: use Reconnect on the integrations page.');
  const integration = await unwrap(api.POST('/api/v1/orgs/{orgId}/integrations', {
    params: { path: { orgId } },
    body: { provider, name: old.name, projectId: old.projectId, credentials },
  }));
  let moved = 0;
  try {
    const waiting: string[] = [];
    for (let page = 1; ; page++) {
      const list = await unwrap(api.GET('/api/v1/orgs/{orgId}/content', { params: { path: { orgId }, query: { status: WAITING, pageSize: 100, page, sort: 'createdAt' } } }));
      waiting.push(...list.items.filter((p) => p.integrationId === old.id).map((p) => p.id));
      if (page * list.pageSize >= list.total || list.items.length === 0) break;
    }
    for (const postId of waiting) {
      await unwrap(api.PATCH('/api/v1/orgs/{orgId}/content/{postId}', { params: { path: { orgId, postId } }, body: { integrationId: integration.id } }));
      moved++;
    }
    await unwrap(api.DELETE('/api/v1/orgs/{orgId}/integrations/{id}', { params: { path: { orgId, id: old.id } } }));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`The account is connected again as a new connection, but the old one was kept: ${moved} post${moved === 1 ? '' : 's'} moved before this failed: ${message}`, { cause: error });
  }
  return { integration, moved };
}

export function ReconnectDialog({ orgId, integration, onClose }: { orgId: string; integration: Integration; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [token, setToken] = useState('');
  const [author, setAuthor] = useState('');
  const [done, setDone] = useState<number | null>(null);
  const run = useMutation({
    mutationFn: () => reconnect(orgId, integration, credentialsOf(integration.provider, token, author)),
    onSuccess: (result) => setDone(result.moved),
    onSettled: async () => {
      await queryClient.invalidateQueries({ queryKey: [orgId, 'integrations'] });
      await queryClient.invalidateQueries({ queryKey: [orgId, 'posts'] });
    },
  });
  const errors = run.error instanceof ApiError ? run.error.fieldErrors : {};
  const submit = (e: FormEvent) => { e.preventDefault(); run.mutate(); };
  return (
    <Modal open onOpenChange={(open) => !open && onClose()} title={`Reconnect ${integration.name}`} description={`Give a new ${PROVIDER_LABELS[integration.provider]} token. Posts waiting to be published move to the renewed connection.`}>
      {done !== null ? (
        <div className="space-y-4">
          <p role="status" className="rounded-md bg-emerald-50 p-3 text-sm text-emerald-900">Reconnected. {done} waiting post{done === 1 ? '' : 's'} will publish through it.</p>
          <div className="flex justify-end"><Button variant="primary" onClick={onClose}>Done</Button></div>
        </div>
      ) : (
        <form className="space-y-4" onSubmit={submit}>
          {integration.lastError ? <p className="rounded-md bg-red-50 p-3 text-sm text-red-800">Last error: {integration.lastError.message}</p> : null}
          <CredentialFields provider={integration.provider} token={token} author={author} errors={errors} onToken={setToken} onAuthor={setAuthor} />
          <FormError error={run.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={onClose}>Cancel</Button>
            <Button type="submit" variant="primary" disabled={run.isPending}>{run.isPending ? 'Reconnecting…' : 'Reconnect'}</Button>
          </div>
        </form>
      )}
    </Modal>
  );
}
