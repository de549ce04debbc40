import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { EventSourceMessage } from 'eventsource-parser';
import type { AutomationClient } from './client.ts';
import { ApiError, apiErrorOf } from './errors.ts';

/**
 * Async iterators over the three SSE streams (SPEC "Stream behavior"). Each follows one stream
 * across connections: when a connection drops it reconnects — with `since=<last id>` where the
 * stream replays (run and agent-run streams; the server ignores `Last-Event-ID`) — and never
 * yields an event twice; it ends after the terminal event (`run.finished`, `done`).
 */

// ---- Event shapes (SPEC "Execution event", "SSE: agent run stream", "SSE: organization stream") ----

interface ExecBase {
  runId: string;
  at: string;
}
export type ExecutionEvent =
  | (ExecBase & { type: 'run.started'; workflowId: string })
  | (ExecBase & { type: 'node.started'; nodeId: string; attempt: number })
  | (ExecBase & { type: 'node.finished'; nodeId: string; itemCount: number; durationMs: number })
  | (ExecBase & { type: 'node.failed'; nodeId: string; error: { code?: string; message: string } | string; willRetry: boolean })
  | (ExecBase & { type: 'node.waiting'; nodeId: string; until?: string })
  | (ExecBase & {
      type: 'run.finished';
      status: 'SUCCEEDED' | 'FAILED' | 'CANCELED';
      costUsd: number;
      error?: { code?: string; message: string; nodeId?: string };
    })
  | (ExecBase & { type: 'log'; nodeId?: string; level: string; message: string });

/** One message of a run stream: `id` is the run's event sequence number. */
export type RunStreamEvent = { [T in ExecutionEvent['type']]: { event: T; id: number; data: Extract<ExecutionEvent, { type: T }> } }[ExecutionEvent['type']];

export interface AgentStep {
  index: number;
  type: string;
  name?: string;
  [field: string]: unknown;
}
export interface AgentRunSummary {
  id: string;
  status: string;
  summary: string | null;
  usage: { inputTokens: number; outputTokens: number; costUsd: number; modelId?: string };
}
/** One message of an agent run stream: `id` is the step index (the `done` message's is one past the last step). */
export type AgentStreamEvent =
  { event: 'step'; id: number; data: { type: 'step'; step: AgentStep } } | { event: 'done'; id: number; data: { type: 'done'; run: AgentRunSummary } };

/** The platform event envelope (SPEC "Platform event envelope"). */
export interface PlatformEvent<P = Record<string, unknown>> {
  id: string;
  type: string;
  organizationId: string;
  projectId?: string;
  at: string;
  payload: P;
}
/** One message of the organization stream: `event` names its kind (or the platform event's type). */
export type OrgStreamEvent =
  | { event: 'notification'; data: { id: string; title: string; body: string; link?: string | null; createdAt: string; [k: string]: unknown } }
  | { event: 'approval.requested'; data: { approvalId: string; title: string; runId: string; nodeId: string; expiresAt: string } }
  | {
      event: 'conversation.message';
      data: { conversationId: string; channel: string; message: { id: string; direction: string; sender: string; text: string; at: string } };
    }
  | { event: 'run.status'; data: { runId: string; workflowId: string; status: string; costUsd?: number } }
  | { event: 'agent.step'; data: { agentRunId: string; type: string; index: number; name?: string } }
  | { event: string; data: PlatformEvent };

// ---- Options ----

export interface StreamOptions {
  /** The organization (default: the client's). */
  orgId?: string;
  /** Stops the iteration (and closes the connection) when aborted. */
  signal?: AbortSignal;
  /** Reconnect attempts in a row without receiving an event before giving up (default 10). */
  maxRetries?: number;
  /** First reconnect delay, doubled per attempt up to maxDelayMs (defaults 250 and 10,000 ms). */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** Told before each reconnect: the attempt (1, 2, …), the cursor resumed from, and why. */
  onReconnect?: (info: { attempt: number; since: number | undefined; reason: unknown }) => void;
}

export interface ReplayOptions extends StreamOptions {
  /** Start after this event id (skips the history up to it). */
  since?: number;
}

// ---- The core: one logical stream over many connections ----

interface Handling<T> {
  /** Yield this event (after de-duplication). */
  yield?: T;
  /** Advance the cursor to this id. */
  cursor?: number;
  /** The stream is over after this event. */
  terminal?: boolean;
  /** Close this connection and reconnect from the cursor (without yielding). */
  reconnect?: boolean;
}

interface Core<T> {
  client: AutomationClient;
  path: string;
  cursor: number | undefined;
  handle(message: EventSourceMessage, cursor: number | undefined): Handling<T>;
  /** Asked after a connection ended without its terminal event and without news: is the stream over? */
  isOver?: () => Promise<boolean>;
  options: StreamOptions;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

const retryable = (status: number) => status === 408 || status === 429 || status >= 500;

async function* follow<T>(core: Core<T>): AsyncGenerator<T, void, undefined> {
  const { client, options } = core;
  const maxRetries = options.maxRetries ?? 10;
  const minDelay = options.minDelayMs ?? 250;
  const maxDelay = options.maxDelayMs ?? 10_000;
  let cursor = core.cursor;
  let failures = 0;
  let reason: unknown = null;

  for (;;) {
    if (options.signal?.aborted) return;
    if (failures > 0) {
      if (failures > maxRetries) throw Object.assign(new Error(`The stream ${core.path} dropped ${failures} times in a row; giving up`), { cause: reason });
      options.onReconnect?.({ attempt: failures, since: cursor, reason });
      const wait =
        reason instanceof ApiError && reason.retryAfter !== undefined ? reason.retryAfter * 1000 : Math.min(maxDelay, minDelay * 2 ** (failures - 1));
      await sleep(wait, options.signal);
      if (options.signal?.aborted) return;
    }

    const controller = new AbortController();
    const onAbort = () => controller.abort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let progressed = false;
    try {
      const url = new URL(`${client.baseUrl}${core.path}`);
      if (cursor !== undefined) url.searchParams.set('since', String(cursor));
      let response: Response;
      try {
        response = await client.fetch(url, { headers: { accept: 'text/event-stream', ...(await client.authHeaders()) }, signal: controller.signal });
      } catch (error) {
        if (options.signal?.aborted) return;
        failures++;
        reason = error;
        continue;
      }
      if (!response.ok) {
        const error = await apiErrorOf(response, 'GET');
        if (!retryable(response.status)) throw error;
        failures++;
        reason = error;
        continue;
      }
      const events = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
      let ended = false;
      try {
        for await (const message of events) {
          const handling = core.handle(message, cursor);
          if (handling.cursor !== undefined) {
            if (cursor !== undefined && handling.cursor <= cursor) continue; // seen on an earlier connection
            cursor = handling.cursor;
          }
          progressed = true;
          failures = 0;
          if (handling.reconnect) break;
          if (handling.yield !== undefined) yield handling.yield;
          if (handling.terminal) {
            ended = true;
            return;
          }
        }
        reason = new Error('the connection closed');
      } catch (error) {
        if (options.signal?.aborted) return;
        if (ended) return;
        reason = error;
      }
      // The connection ended without the terminal event.
      if (!progressed && core.isOver && (await core.isOver())) return;
      failures = progressed ? 1 : failures + 1;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      controller.abort(); // closes the connection when the consumer stops early, too
    }
  }
}

function json(message: EventSourceMessage): unknown {
  try {
    return JSON.parse(message.data);
  } catch {
    return message.data;
  }
}

function orgOf(client: AutomationClient, options: StreamOptions): string {
  const orgId = options.orgId ?? client.orgId;
  if (!orgId) throw new Error('The stream needs an organization: pass orgId or create the client with orgId');
  return orgId;
}

const FINAL_RUN = new Set(['SUCCEEDED', 'FAILED', 'CANCELED']);

/**
 * A workflow run's execution events (GET …/runs/:runId/events): history, then live, each once and
 * in order, across reconnects (`since` = the last sequence number seen); ends after `run.finished`.
 * An `event: reset` (the server dropped a slow reader) resumes from the stored history.
 */
export function streamRunEvents(client: AutomationClient, runId: string, options: ReplayOptions = {}): AsyncGenerator<RunStreamEvent, void, undefined> {
  const orgId = orgOf(client, options);
  const path = `/api/v1/orgs/${encodeURIComponent(orgId)}/runs/${encodeURIComponent(runId)}/events`;
  return follow<RunStreamEvent>({
    client,
    path,
    options,
    cursor: options.since,
    handle(message) {
      if (message.event === 'reset') return { reconnect: true };
      const id = Number(message.id);
      if (!message.id || !Number.isSafeInteger(id)) return {};
      const data = json(message) as ExecutionEvent;
      return { cursor: id, yield: { event: message.event ?? data.type, id, data } as RunStreamEvent, terminal: message.event === 'run.finished' };
    },
    // A `since` at or past run.finished: the server sends nothing and closes.
    async isOver() {
      const res = await client.fetch(`${client.baseUrl}/api/v1/orgs/${encodeURIComponent(orgId)}/runs/${encodeURIComponent(runId)}`, {
        headers: await client.authHeaders(),
      });
      if (!res.ok) throw await apiErrorOf(res, 'GET');
      return FINAL_RUN.has(((await res.json()) as { status: string }).status);
    },
  });
}

/**
 * An agent run's steps (GET …/agent-runs/:id/events): one `step` per step index, across reconnects
 * (`since` = the last step index seen), then `done` with the run's summary and usage; then it ends.
 */
export function streamAgentRunEvents(
  client: AutomationClient,
  agentRunId: string,
  options: ReplayOptions = {},
): AsyncGenerator<AgentStreamEvent, void, undefined> {
  const orgId = orgOf(client, options);
  const path = `/api/v1/orgs/${encodeURIComponent(orgId)}/agent-runs/${encodeURIComponent(agentRunId)}/events`;
  return follow<AgentStreamEvent>({
    client,
    path,
    options,
    cursor: options.since,
    handle(message) {
      const data = json(message) as AgentStreamEvent['data'];
      if (message.event === 'done') return { yield: { event: 'done', id: Number(message.id), data } as AgentStreamEvent, terminal: true };
      if (message.event !== 'step') return {};
      const index = (data as { step: AgentStep }).step.index;
      return { cursor: index, yield: { event: 'step', id: index, data } as AgentStreamEvent };
    },
  });
}

/**
 * The organization stream (GET …/events): live only (SPEC: no replay), so a reconnect resumes with
 * what happens next; what was sent while disconnected is in notifications and the API. Never ends
 * on its own: stop it with `signal` or by leaving the loop. Messages carrying an `id` (platform
 * events, notifications) are yielded once even if a server sends one twice.
 */
export function streamOrgEvents(client: AutomationClient, options: StreamOptions = {}): AsyncGenerator<OrgStreamEvent, void, undefined> {
  const orgId = orgOf(client, options);
  const seen = new Set<string>();
  return follow<OrgStreamEvent>({
    client,
    path: `/api/v1/orgs/${encodeURIComponent(orgId)}/events`,
    options,
    cursor: undefined,
    handle(message) {
      if (!message.event) return {};
      const data = json(message) as { id?: unknown };
      const key = typeof data?.id === 'string' ? `${message.event}:${data.id}` : null;
      if (key) {
        if (seen.has(key)) return {};
        seen.add(key);
        if (seen.size > 10_000) seen.delete(seen.values().next().value!);
      }
      return { yield: { event: message.event, data } as OrgStreamEvent };
    },
  });
}
