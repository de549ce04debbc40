/**
 * An agent run's live steps (SPEC "SSE: agent run stream"): `step` events, then one `done`, then
 * the server closes. The stream replays the stored steps on every connection, so steps are kept by
 * `index` (a repeat is dropped). The access token goes in the Authorization header (never the URL),
 * fresh on every connection.
 */
import { useEffect, useRef, useState } from 'react';
import type { EventSource } from 'eventsource';
import { apiEventSource } from '../../lib/sse';
import { addStreamStep, type AgentStep } from './steps';

export interface DoneRun {
  id: string;
  status: string;
  summary: string | null;
  usage: { inputTokens?: number; outputTokens?: number; costUsd?: number };
}

export interface RunStream {
  steps: AgentStep[];
  done: DoneRun | null;
  /** connecting (or reconnecting), live (receiving), ended (done came), failed (the server refused). */
  state: 'idle' | 'connecting' | 'live' | 'ended' | 'failed';
  error: string | null;
}

/** Connections the stream may lose (network, a token that expired) before the page says it failed. */
const MAX_RETRIES = 5;

interface Held extends RunStream {
  /** The run these belong to: another run starts from nothing. */
  key: string;
}

const EMPTY: Omit<Held, 'key'> = { steps: [], done: null, state: 'idle', error: null };

export function useAgentRunStream(orgId: string, runId: string, enabled: boolean, onDone?: (run: DoneRun) => void): RunStream {
  const key = `${orgId}/${runId}`;
  const [held, setHeld] = useState<Held>({ key, ...EMPTY });
  const latestDone = useRef(onDone);
  useEffect(() => {
    latestDone.current = onDone;
  });

  useEffect(() => {
    if (!enabled) return;
    const update = (change: (current: Held) => Partial<Held>) =>
      setHeld((current) => {
        const base = current.key === key ? current : { key, ...EMPTY };
        return { ...base, ...change(base) };
      });
    let source: EventSource | null = null;
    let retryTimer: ReturnType<typeof setTimeout> | null = null;
    let retries = 0;
    let last = -1;
    let finished = false;

    const connect = () => {
      update(() => ({ state: 'connecting' }));
      // After a refused connection, ask only for what came after the last step seen (`since`).
      source = apiEventSource(`/api/v1/orgs/${encodeURIComponent(orgId)}/agent-runs/${encodeURIComponent(runId)}/events`, () => ({
        since: last >= 0 ? String(last) : undefined,
      }));
      source.addEventListener('open', () => {
        retries = 0;
        update(() => ({ state: 'live' }));
      });
      source.addEventListener('step', (message) => {
        const step = parse<{ step?: AgentStep }>(message.data)?.step;
        if (!step || typeof step.index !== 'number') return;
        last = Math.max(last, step.index);
        update((current) => ({ steps: addStreamStep(current.steps, step) }));
      });
      source.addEventListener('done', (message) => {
        const run = parse<{ run?: DoneRun }>(message.data)?.run ?? null;
        finished = true;
        // The server closes after `done`; closing here keeps the EventSource from reconnecting.
        source?.close();
        update(() => ({ state: 'ended', done: run }));
        if (run) latestDone.current?.(run);
      });
      source.addEventListener('error', (event) => {
        if (finished || !source) return;
        const code = (event as Event & { code?: number }).code;
        if (code === 403 || code === 404) {
          source.close();
          update(() => ({ state: 'failed', error: code === 404 ? 'This run does not exist.' : "You do not have access to this run's steps." }));
          return;
        }
        // The EventSource reconnects by itself after a dropped connection; a refused one (a 401 from
        // an expired token, a 429) it gives up on: connect again with a fresh token, a few times.
        if (source.readyState === source.CLOSED) {
          if (retries >= MAX_RETRIES) {
            update(() => ({ state: 'failed', error: (event as Event & { message?: string }).message ?? 'The live connection failed.' }));
            return;
          }
          retries++;
          retryTimer = setTimeout(connect, 1000 * retries);
        }
        update(() => ({ state: 'connecting' }));
      });
    };
    connect();
    return () => {
      finished = true;
      if (retryTimer) clearTimeout(retryTimer);
      source?.close();
    };
  }, [key, orgId, runId, enabled]);

  const { steps, done, state, error } = held.key === key ? held : EMPTY;
  return { steps, done, state, error };
}

function parse<T>(data: unknown): T | null {
  try {
    return JSON.parse(String(data)) as T;
  } catch {
    return null;
  }
}
