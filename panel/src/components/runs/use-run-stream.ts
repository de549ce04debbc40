import { useEffect, useRef, useState } from 'react';
import { apiEventSource } from '../../lib/sse';
import { applyEvent, EMPTY_TIMELINE, type Timeline } from './timeline';

/** The execution event kinds of SPEC "Execution event", and `reset`. */
const KINDS = ['run.started', 'node.started', 'node.finished', 'node.failed', 'node.waiting', 'run.finished', 'log'] as const;

export type StreamState = 'connecting' | 'live' | 'ended' | 'error';

/**
 * A run's stream (GET …/runs/:id/events) folded into a timeline. The access token goes in the
 * Authorization header (never the URL); a reconnect asks only for what came after the last event
 * seen (`since`), and what repeats anyway is ignored by the timeline. The stream closes after
 * `run.finished`, and so does this. `onChange` is called for events that change the run record
 * (step items, status), `reset` included, so the page refetches GET …/runs/:id.
 */
export function useRunStream(orgId: string, runId: string, onChange: (kind: string) => void): { timeline: Timeline; state: StreamState } {
  const [timeline, setTimeline] = useState<{ runId: string; value: Timeline }>({ runId, value: EMPTY_TIMELINE });
  const [state, setState] = useState<{ runId: string; value: StreamState }>({ runId, value: 'connecting' });
  const latest = useRef(onChange);
  useEffect(() => {
    latest.current = onChange;
  });

  useEffect(() => {
    let lastSeq = 0;
    const url = `/api/v1/orgs/${encodeURIComponent(orgId)}/runs/${encodeURIComponent(runId)}/events`;
    const source = apiEventSource(url, () => ({ since: lastSeq > 0 ? String(lastSeq) : undefined }));
    const status = (value: StreamState) => setState({ runId, value });
    source.addEventListener('open', () => status('live'));
    source.addEventListener('error', () => status(source.readyState === source.CLOSED ? 'error' : 'connecting'));
    for (const kind of KINDS) {
      source.addEventListener(kind, (message: MessageEvent) => {
        let data: Record<string, unknown>;
        try {
          data = JSON.parse(message.data as string) as Record<string, unknown>;
        } catch {
          return;
        }
        const seq = Number(message.lastEventId);
        if (Number.isFinite(seq) && seq > lastSeq) lastSeq = seq;
        setTimeline((t) => ({ runId, value: applyEvent(t.runId === runId ? t.value : EMPTY_TIMELINE, { seq, type: kind, data }) }));
        if (kind === 'run.finished') {
          source.close();
          status('ended');
        }
        if (kind !== 'log' && kind !== 'node.started') latest.current(kind);
      });
    }
    // The server's buffer for this client overflowed: it closes the stream; the record fills the
    // gap and the reconnect continues after the last event we have.
    source.addEventListener('reset', () => latest.current('reset'));
    return () => source.close();
  }, [orgId, runId]);

  return {
    timeline: timeline.runId === runId ? timeline.value : EMPTY_TIMELINE,
    state: state.runId === runId ? state.value : 'connecting',
  };
}
