import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { ApiError } from '../../api/client';
import { useCreateApiKey } from '../../queries/api-keys';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { SecretOnce } from '../ui/copy';
import { SelectField, TextField } from '../ui/field';
import { FormError } from '../ui/states';
import { projectsQuery } from '../../queries/settings';
import { ScopePicker } from './scope-picker';
import { examplePath, type Scope } from './scopes';

/** A new API key with chosen scopes; afterwards the key itself, shown this once, and how to use it. */
export function CreateKeyDialog({ orgId, open, onOpenChange }: { orgId: string; open: boolean; onOpenChange: (open: boolean) => void }) {
  const projects = useQuery(projectsQuery(orgId));
  const [name, setName] = useState('');
  const [projectId, setProjectId] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const create = useCreateApiKey(orgId);
  const close = (next: boolean) => {
    onOpenChange(next);
    if (!next) {
      create.reset();
      setName('');
      setProjectId('');
      setScopes([]);
    }
  };
  const errors = create.error instanceof ApiError ? create.error.fieldErrors : {};
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ name: name.trim(), scopes, projectId: projectId || undefined });
  };
  const key = create.data;
  const example = key ? `curl -H "X-Api-Key: ${key.key}" ${window.location.origin}/api/v1/orgs/${orgId}${examplePath(key.scopes)}` : '';
  return (
    <Modal
      open={open}
      onOpenChange={close}
      title={key ? 'API key created' : 'New API key'}
      description={key ? undefined : 'For server-to-server calls; send it in the X-Api-Key header. Not for browsers.'}
      wide
    >
      {key ? (
        <div className="space-y-4">
          <SecretOnce label="API key" value={key.key} />
          <div className="text-sm text-slate-700">
            <p className="font-medium">Try it</p>
            <pre className="mt-1 overflow-x-auto rounded bg-slate-900 p-3 text-xs text-slate-100">{example}</pre>
          </div>
          <div className="flex justify-end">
            <Button variant="primary" onClick={() => close(false)}>
              Done
            </Button>
          </div>
        </div>
      ) : (
        <form className="space-y-4" onSubmit={submit}>
          <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
            <TextField
              label="Name"
              required
              maxLength={200}
              value={name}
              onChange={(e) => setName(e.target.value)}
              error={errors.name}
              placeholder="CRM sync"
              hint="Says what uses the key, for when you revoke it."
            />
            <SelectField
              label="Project"
              value={projectId}
              onChange={(e) => setProjectId(e.target.value)}
              error={errors.projectId}
              hint="A key bound to a project sees and changes only that project."
              options={[{ value: '', label: 'All projects' }, ...(projects.data ?? []).map((p) => ({ value: p.id, label: p.name }))]}
            />
          </div>
          <ScopePicker value={scopes} onChange={setScopes} error={Object.entries(errors).find(([f]) => f.startsWith('scopes'))?.[1]} />
          <FormError error={create.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => close(false)}>Cancel</Button>
            <Button type="submit" variant="primary" disabled={create.isPending || scopes.length === 0 || name.trim() === ''}>
              Create key
            </Button>
          </div>
        </form>
      )}
    </Modal>
  );
}
