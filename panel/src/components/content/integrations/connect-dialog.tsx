import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { ApiError, type Schemas } from '../../../api/client';
import { Modal } from '../../ui/dialog';
import { Button } from '../../ui/button';
import { SelectField, TextField } from '../../ui/field';
import { FormError } from '../../ui/states';
import { projectsQuery } from '../../../queries/settings';
import { useConnectIntegration } from '../../../queries/content';

type Integration = Schemas['Integration'];
export type Provider = Integration['provider'];
export const PROVIDER_LABELS: Record<Provider, string> = { linkedin: 'LinkedIn', x: 'X', google: 'Google' };
/** The providers a pasted token connects (Google connects only through OAuth). */
export const TOKEN_PROVIDERS = ['linkedin', 'x'] as const;
export type TokenProvider = (typeof TOKEN_PROVIDERS)[number];

/** The credentials a pasted token gives (the secondary way; the OAuth buttons are the first). */
export function credentialsOf(provider: Provider, token: string, author: string): Record<string, string> {
  return provider === 'linkedin' ? { accessToken: token.trim(), author: author.trim() } : { accessToken: token.trim() };
}

export function CredentialFields({
  provider,
  token,
  author,
  errors,
  onToken,
  onAuthor,
}: {
  provider: Provider;
  token: string;
  author: string;
  errors: Record<string, string>;
  onToken: (value: string) => void;
  onAuthor: (value: string) => void;
}) {
  return (
    <>
      <TextField
        label="Access token"
        type="password"
        autoComplete="off"
        required
        maxLength={4096}
        value={token}
        error={errors.credentials}
        hint={
          provider === 'x'
            ? 'An OAuth 2.0 user access token with the tweet.write scope.'
            : 'A LinkedIn access token with the w_member_social (or w_organization_social) permission.'
        }
        onChange={(e) => onToken(e.target.value)}
      />
      {provider === 'linkedin' ? (
        <TextField
          label="Author"
          required
          maxLength={200}
          value={author}
          placeholder="urn:li:person:… or urn:li:organization:…"
          hint="Who the posts are published as."
          onChange={(e) => onAuthor(e.target.value)}
        />
      ) : null}
    </>
  );
}

/** Connects a LinkedIn or X account by an access token the user already has (`POST …/integrations`). */
export function ConnectDialog({ orgId, open, onOpenChange }: { orgId: string; open: boolean; onOpenChange: (open: boolean) => void }) {
  const projects = useQuery(projectsQuery(orgId));
  const [provider, setProvider] = useState<TokenProvider>('linkedin');
  const [name, setName] = useState('');
  const [projectId, setProjectId] = useState('');
  const [token, setToken] = useState('');
  const [author, setAuthor] = useState('');
  const connect = useConnectIntegration(orgId);
  const close = (next: boolean) => {
    onOpenChange(next);
    if (!next) {
      setName('');
      setToken('');
      setAuthor('');
      connect.reset();
    }
  };
  const errors = connect.error instanceof ApiError ? connect.error.fieldErrors : {};
  const submit = (e: FormEvent) => {
    e.preventDefault();
    connect.mutate(
      { provider, name: name.trim(), projectId: projectId || null, credentials: credentialsOf(provider, token, author) },
      { onSuccess: () => close(false) },
    );
  };
  return (
    <Modal
      open={open}
      onOpenChange={close}
      title="Connect an account with a token"
      description="For an access token you already have. A pasted token is not renewed: when it expires, reconnect. The token is stored encrypted and never shown again."
    >
      <form className="space-y-4" onSubmit={submit}>
        <SelectField
          label="Provider"
          value={provider}
          options={TOKEN_PROVIDERS.map((p) => ({ value: p, label: PROVIDER_LABELS[p] }))}
          onChange={(e) => setProvider(e.target.value as TokenProvider)}
        />
        <TextField
          label="Name"
          required
          maxLength={200}
          value={name}
          error={errors.name}
          placeholder={provider === 'x' ? 'Acme on X' : 'Acme company page'}
          onChange={(e) => setName(e.target.value)}
        />
        {(projects.data?.length ?? 0) > 1 ? (
          <SelectField
            label="Project"
            value={projectId}
            hint="An account for all projects, or for one."
            options={[{ value: '', label: 'All projects' }, ...(projects.data ?? []).map((p) => ({ value: p.id, label: p.name }))]}
            onChange={(e) => setProjectId(e.target.value)}
          />
        ) : null}
        <CredentialFields provider={provider} token={token} author={author} errors={errors} onToken={setToken} onAuthor={setAuthor} />
        <FormError error={connect.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => close(false)}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={connect.isPending}>
            {connect.isPending ? 'Connecting…' : 'Connect'}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
