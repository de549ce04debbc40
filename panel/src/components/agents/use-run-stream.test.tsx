/**
 * The agent run stream hook against a real SSE server on loopback: it speaks the protocol the
 * service does (SPEC stream rules: replay then live, a repeat after a reconnect, `done`, close).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen, waitFor } from '@testing-library/react';
import { useAgentRunStream } from './use-run-stream';

type Handler = (req: IncomingMessage, res: ServerResponse, connection: number) => void;

let server: Server;
let origin = '';
let handler: Handler = (_req, res) => res.end();
let connections = 0;
const urls: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    connections++;
    urls.push(req.url ?? '');
    handler(req, res, connections);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The panel asks its own origin (a relative URL); here that origin is the loopback server.
  const realFetch = globalThis.fetch;
  vi.stubGlobal('fetch', (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, 'http://localhost');
    return realFetch(`${origin}${url.pathname}${url.search}`, init);
  });
});

afterEach(() => {
  cleanup();
  connections = 0;
  urls.length = 0;
});

afterAll(async () => {
  vi.unstubAllGlobals();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function sse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // Reconnect fast after a dropped connection.
  res.write('retry: 20\n\n');
}

function step(res: ServerResponse, index: number, type = 'tool_call', name = 'lead_stats'): void {
  res.write(`event: step\nid: ${index}\ndata: ${JSON.stringify({ type: 'step', step: { index, type, name, at: '2026-03-01T10:00:00.000Z', input: {} } })}\n\n`);
}

function Probe({ onDone }: { onDone?: () => void }) {
  const stream = useAgentRunStream('org_1', 'arun_1', true, onDone);
  return (
    <div>
      <ol aria-label="steps">
        {stream.steps.map((s) => (
          <li key={s.index}>{`${s.index}:${s.type}`}</li>
        ))}
      </ol>
      <p data-testid="state">{stream.state}</p>
      {stream.done ? <p>done {stream.done.status}</p> : null}
      {stream.error ? <p role="alert">{stream.error}</p> : null}
    </div>
  );
}

describe('the agent run stream', () => {
  it('shows each step once across a reconnect that replays the history, then stops at done', async () => {
    handler = (req, res, connection) => {
      sse(res);
      if (connection === 1) {
        // The first connection drops after three steps, without `done`.
        step(res, 0, 'thinking');
        step(res, 1);
        step(res, 2, 'tool_result');
        res.end();
        return;
      }
      // The server replays everything, then the new step and `done`, then closes.
      step(res, 0, 'thinking');
      step(res, 1);
      step(res, 2, 'tool_result');
      step(res, 3, 'message');
      res.write(`event: done\ndata: ${JSON.stringify({ type: 'done', run: { id: 'arun_1', status: 'succeeded', summary: 'ok', usage: { costUsd: 0 } } })}\n\n`);
      res.end();
    };
    const onDone = vi.fn();
    render(<Probe onDone={onDone} />);
    await screen.findByText('done succeeded');
    const items = screen.getAllByRole('listitem').map((li) => li.textContent);
    expect(items).toEqual(['0:thinking', '1:tool_call', '2:tool_result', '3:message']);
    expect(screen.getByTestId('state').textContent).toBe('ended');
    expect(onDone).toHaveBeenCalledTimes(1);
    expect(urls[0]).toBe('/api/v1/orgs/org_1/agent-runs/arun_1/events');
    // After `done` the page closed the stream: no third connection.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(connections).toBe(2);
  });

  it('connects again with since=<last step> after a refused connection (an expired token)', async () => {
    handler = (req, res, connection) => {
      if (connection === 1) {
        sse(res);
        step(res, 0);
        step(res, 1);
        res.end();
        return;
      }
      if (connection === 2) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"statusCode":401}');
        return;
      }
      sse(res);
      step(res, 2, 'message');
      res.write(`event: done\ndata: ${JSON.stringify({ type: 'done', run: { id: 'arun_1', status: 'failed', summary: null, usage: {} } })}\n\n`);
      res.end();
    };
    render(<Probe />);
    await screen.findByText('done failed', undefined, { timeout: 5000 });
    expect(screen.getAllByRole('listitem').map((li) => li.textContent)).toEqual(['0:tool_call', '1:tool_call', '2:message']);
    expect(urls[2]).toBe('/api/v1/orgs/org_1/agent-runs/arun_1/events?since=1');
  });

  it('says so when the run is not there (404), without retrying', async () => {
    handler = (_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{"statusCode":404}');
    render(<Probe />);
    await waitFor(() => expect(screen.getByRole('alert').textContent).toBe('This run does not exist.'));
    expect(screen.getByTestId('state').textContent).toBe('failed');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(connections).toBe(1);
  });
});
