/**
 * The organization stream (SPEC "SSE: organization stream"), one connection per signed-in page,
 * with the access token in the Authorization header (never in the URL). Pages subscribe to event
 * names; lists that change are refreshed by invalidating their queries.
 */
import { createContext, useContext, useEffect, useEffectEvent, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { apiEventSource } from './sse';
import { agentRunKeys } from '../queries/agents';
import { approvalKeys } from '../queries/approvals';
import { integrationKeys, postKeys } from '../queries/content';
import { leadKeys } from '../queries/leads';
import { notificationKeys } from '../queries/notifications';
import { reportKeys } from '../queries/reports';
import { runKeys } from '../queries/runs';
import { PLATFORM_EVENT_NAMES } from '../../../src/shared/event-names.ts';

type Listener = (type: string, data: unknown) => void;

const StreamContext = createContext<{ subscribe(listener: Listener): () => void } | null>(null);

/** Which cached queries an event makes stale (each area's whole key). */
const STALE: [RegExp, (orgId: string) => readonly unknown[]][] = [
  [/^lead\./, leadKeys.all],
  [/^(workflow\.run\.|run\.status)/, runKeys.all],
  [/^approval/, approvalKeys.all],
  [/^notification$/, notificationKeys.all],
  [/^(agent\.|agent\.step)/, agentRunKeys.all],
  [/^(report\.|agent\.report\.)/, reportKeys.all],
  [/^post\./, postKeys.all],
  [/^integration\./, integrationKeys.all],
];

/** Event names the panel listens for (an EventSource delivers only the named events it listens to). */
const STREAM_EVENTS = ['notification', 'approval.requested', 'run.status', 'agent.step', 'conversation.message', ...PLATFORM_EVENT_NAMES];

export function OrgStreamProvider({ orgId, children }: { orgId: string; children: ReactNode }) {
  const queryClient = useQueryClient();
  const [listeners] = useState(() => new Set<Listener>());

  useEffect(() => {
    const source = apiEventSource(`/api/v1/orgs/${encodeURIComponent(orgId)}/events`);
    const handle = (type: string) => (message: MessageEvent) => {
      let data: unknown = null;
      try {
        data = JSON.parse(message.data as string);
      } catch {
        return;
      }
      for (const [pattern, keyOf] of STALE) if (pattern.test(type)) void queryClient.invalidateQueries({ queryKey: keyOf(orgId) });
      for (const listener of listeners) listener(type, data);
    };
    for (const type of STREAM_EVENTS) source.addEventListener(type, handle(type));
    return () => source.close();
  }, [orgId, queryClient, listeners]);

  const [value] = useState(() => ({
    subscribe(listener: Listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  }));
  return <StreamContext.Provider value={value}>{children}</StreamContext.Provider>;
}

/** Calls `onEvent` for each organization event (the page must be inside an organization). */
export function useOrgEvents(onEvent: Listener): void {
  const stream = useContext(StreamContext);
  const handle = useEffectEvent(onEvent);
  useEffect(() => stream?.subscribe((type, data) => handle(type, data)), [stream]);
}
