import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Button } from '../../ui/button';
import { FormError } from '../../ui/states';
import { projectsQuery } from '../../../queries/settings';
import { startOAuth } from '../../../queries/content';
import { returnToFor } from './oauth';

export const OAUTH_PROVIDERS = ['linkedin', 'x', 'google'] as const;
export type OAuthProvider = (typeof OAUTH_PROVIDERS)[number];
const LABELS: Record<OAuthProvider, string> = { linkedin: 'LinkedIn', x: 'X', google: 'Google' };

interface StartInput {
  provider: OAuthProvider;
  /** Reconnect: the integration whose id (and scheduled posts) are kept. */
  integrationId?: string;
  projectId?: string;
}

/**
 * Starts the provider's authorization (`POST …/integrations/oauth/:provider/start` with this page as
 * `returnTo`) and sends the browser to it. The mutation stays pending until the page is left, so its
 * button cannot start a second authorization; a refusal (422 `INTEGRATION_NOT_CONFIGURED`, 400 …) is
 * its error, with the service's message.
 */
export function useOAuthStart(orgId: string) {
  const [leaving, setLeaving] = useState(false);
  const start = useMutation({
    mutationFn: async ({ provider, integrationId, projectId }: StartInput) => {
      const { authorizationUrl } = await startOAuth(orgId, provider, {
        returnTo: returnToFor(window.location.href),
        ...(integrationId ? { integrationId } : {}),
        ...(projectId ? { projectId } : {}),
      });
      return authorizationUrl;
    },
    onSuccess: (url) => {
      setLeaving(true);
      window.location.assign(url);
    },
  });
  return { ...start, busy: start.isPending || leaving };
}

/** "Connect LinkedIn", "Connect X", "Connect Google": each runs the provider's OAuth flow. */
export function OAuthConnectButtons({ orgId, onPaste }: { orgId: string; onPaste?: () => void }) {
  const start = useOAuthStart(orgId);
  const projects = useQuery(projectsQuery(orgId));
  const [projectId, setProjectId] = useState('');
  const pending = start.busy ? start.variables?.provider : undefined;
  return (
    <div className="space-y-2">
      <div className="flex flex-wrap items-end justify-end gap-2">
        {(projects.data?.length ?? 0) > 1 ? (
          <label className="text-xs text-slate-600">
            For
            <select
              value={projectId}
              onChange={(e) => setProjectId(e.target.value)}
              className="mt-0.5 block rounded-md px-2 py-2 text-sm ring-1 ring-slate-300"
            >
              <option value="">All projects</option>
              {(projects.data ?? []).map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {OAUTH_PROVIDERS.map((provider) => (
          <Button
            key={provider}
            disabled={start.busy}
            aria-busy={pending === provider}
            onClick={() => start.mutate({ provider, projectId: projectId || undefined })}
          >
            <ProviderMark provider={provider} />
            {pending === provider ? `Opening ${LABELS[provider]}…` : `Connect ${LABELS[provider]}`}
          </Button>
        ))}
        {onPaste ? (
          <Button variant="ghost" onClick={onPaste}>
            Connect an account with a token
          </Button>
        ) : null}
      </div>
      {start.error ? (
        <div className="flex justify-end">
          <FormError error={start.error} />
        </div>
      ) : null}
    </div>
  );
}

const MARKS: Record<OAuthProvider, { text: string; className: string }> = {
  linkedin: { text: 'in', className: 'bg-[#0a66c2] text-white' },
  x: { text: '𝕏', className: 'bg-black text-white' },
  google: { text: 'G', className: 'bg-white text-[#4285f4] ring-1 ring-slate-200' },
};

/** A small provider mark beside its name (decorative: the name says it). */
export function ProviderMark({ provider }: { provider: string }) {
  const mark = MARKS[provider as OAuthProvider];
  if (!mark) return null;
  return (
    <span aria-hidden="true" className={`inline-flex size-5 items-center justify-center rounded text-[11px] leading-none font-bold ${mark.className}`}>
      {mark.text}
    </span>
  );
}
