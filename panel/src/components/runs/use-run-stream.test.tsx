import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderHook, waitFor } from '@testing-library/react';
import { useRunStream } from './use-run-stream';

/** An SSE body as the service writes it: `event:`, `id:`, `data:` per message. */
function sse(messages: { event: string; id?: number; data: unknown }[], retryMs?: number): Response {
  const text =
    (retryMs ? `retry: ${retryMs}\n\n` : '') +
    messages.map((m) => `event: ${m.event}\n${m.id ? `id: ${m.id}\n` : ''}data: ${JSON.stringify(m.data)}\n\n`).join('');
  return new Response(
    new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(text));
        controller.close();
      },
    }),
    { status: 200, headers: { 'content-type': 'text/event-stream' } },
  );
}

const base = { runId: 'run_1', at: '2026-01-01T09:00:00.000Z' };
const history = [
  { event: 'run.started', id: 1, data: { ...base, type: 'run.started', workflowId: 'wf_1' } },
  { event: 'node.started', id: 2, data: { ...base, type: 'node.started', nodeId: 'trigger', attempt: 1 } },
  { event: 'node.finished', id: 3, data: { ...base, type: 'node.finished', nodeId: 'trigger', itemCount: 1, durationMs: 2 } },
];

afterEach(() => vi.unstubAllGlobals());

describe('useRunStream', () => {
  it('folds the stream into a timeline, reconnects after the last event seen, ignores repeats and stops after run.finished', async () => {
    const urls: string[] = [];
    const answers = [
      // The first connection drops after the history (retry quickly).
      () => sse(history, 10),
      // The reconnect asks `since=3`; a repeat of 3 slips through anyway, then the run ends.
      () =>
        sse(
          [
            history[2]!,
            { event: 'node.started', id: 4, data: { ...base, type: 'node.started', nodeId: 'send', attempt: 1 } },
            { event: 'node.failed', id: 5, data: { ...base, type: 'node.failed', nodeId: 'send', error: 'HTTP 503', willRetry: true } },
            { event: 'node.started', id: 6, data: { ...base, type: 'node.started', nodeId: 'send', attempt: 2 } },
            { event: 'node.finished', id: 7, data: { ...base, type: 'node.finished', nodeId: 'send', itemCount: 1, durationMs: 5 } },
            { event: 'run.finished', id: 8, data: { ...base, type: 'run.finished', status: 'SUCCEEDED', costUsd: 0.01 } },
          ],
          10,
        ),
    ];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (input: string | URL) => {
        const url = new URL(String(input));
        urls.push(url.pathname + url.search);
        const next = answers.shift();
        return next ? next() : new Response(null, { status: 204 });
      }),
    );
    const changes: string[] = [];
    const { result } = renderHook(() => useRunStream('org_1', 'run_1', (kind) => changes.push(kind)));

    await waitFor(() => expect(result.current.state).toBe('ended'));
    const { timeline } = result.current;
    expect(timeline.status).toBe('SUCCEEDED');
    expect(timeline.order).toEqual(['trigger', 'send']);
    expect(timeline.steps.send).toMatchObject({ status: 'SUCCEEDED', attempt: 2, failures: [{ attempt: 1, error: 'HTTP 503', willRetry: true }] });
    expect(timeline.costUsd).toBe(0.01);
    expect(urls).toEqual(['/api/v1/orgs/org_1/runs/run_1/events', '/api/v1/orgs/org_1/runs/run_1/events?since=3']);
    expect(changes).toContain('run.finished');
    // Closed after run.finished: no third connection.
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(urls).toHaveLength(2);
  });

  it('reports `reset` so the page refetches the run record', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () =>
        sse([
          ...history,
          { event: 'reset', data: { runId: 'run_1', reason: 'buffer exceeded', lastEventId: 3 } },
          { event: 'run.finished', id: 4, data: { ...base, type: 'run.finished', status: 'FAILED', costUsd: 0 } },
        ]),
      ),
    );
    const changes: string[] = [];
    const { result } = renderHook(() => useRunStream('org_1', 'run_1', (kind) => changes.push(kind)));
    await waitFor(() => expect(result.current.state).toBe('ended'));
    expect(changes).toContain('reset');
    expect(result.current.timeline.status).toBe('FAILED');
  });

  it('says so when the stream cannot be opened (an unknown run: 404)', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response(JSON.stringify({ statusCode: 404 }), { status: 404, headers: { 'content-type': 'application/json' } })),
    );
    const { result } = renderHook(() => useRunStream('org_1', 'run_x', () => undefined));
    await waitFor(() => expect(result.current.state).toBe('error'));
  });
});
