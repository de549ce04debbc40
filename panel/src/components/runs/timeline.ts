/**
 * A run's timeline from its stream (SPEC "SSE: run stream"): one entry per node, updated by the
 * execution events as they arrive. The stream replays its history on every connection, so events
 * repeat after a reconnect: an event whose sequence number was already applied is ignored, and
 * every entry is keyed by `nodeId` and only moves forward (a replayed `node.started` never turns a
 * finished step back into a running one). Step items are not in the stream: they come from
 * GET …/runs/:id, merged in by `mergeSteps`.
 */
export type StepStatus = 'RUNNING' | 'WAITING' | 'SUCCEEDED' | 'FAILED' | 'RETRYING' | 'SKIPPED' | 'CANCELED';

export interface Failure {
  attempt: number;
  error: string;
  willRetry: boolean;
  at?: string;
}

export interface LogLine {
  seq: number;
  at?: string;
  level: string;
  message: string;
  nodeId?: string;
}

export interface StepView {
  nodeId: string;
  status: StepStatus;
  attempt: number;
  startedAt?: string;
  finishedAt?: string;
  durationMs?: number;
  itemCount?: number;
  /** When a waiting step (a delay) wakes up. */
  until?: string;
  /** Failed attempts, the retried ones included. */
  failures: Failure[];
}

export type RunStatus = 'QUEUED' | 'RUNNING' | 'WAITING' | 'SUCCEEDED' | 'FAILED' | 'CANCELED';

export interface Timeline {
  /** The highest sequence number applied (the stream's `id:`); 0 before any. */
  lastSeq: number;
  /** Node ids in the order their first event arrived. */
  order: string[];
  steps: Record<string, StepView>;
  status?: RunStatus;
  startedAt?: string;
  finishedAt?: string;
  costUsd?: number;
  logs: LogLine[];
}

export interface ExecEvent {
  /** The stream's `id:` (its sequence number); NaN or 0 when absent. */
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

export const EMPTY_TIMELINE: Timeline = { lastSeq: 0, order: [], steps: {}, logs: [] };

/** At most this many log lines are kept (the newest). */
export const MAX_LOGS = 500;

const FINAL_RUN = new Set(['SUCCEEDED', 'FAILED', 'CANCELED']);
const FINAL_STEP = new Set<StepStatus>(['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELED']);

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

export function applyEvent(timeline: Timeline, event: ExecEvent): Timeline {
  const hasSeq = Number.isFinite(event.seq) && event.seq > 0;
  if (hasSeq && event.seq <= timeline.lastSeq) return timeline;
  const next: Timeline = { ...timeline, lastSeq: hasSeq ? event.seq : timeline.lastSeq };
  const { data } = event;
  const at = text(data.at);
  const nodeId = text(data.nodeId);
  // A final run stays final: a late or replayed event does not reopen it.
  const final = timeline.status !== undefined && FINAL_RUN.has(timeline.status);

  const step = (id: string): StepView => next.steps[id] ?? { nodeId: id, status: 'RUNNING', attempt: 0, failures: [] };
  const put = (view: StepView) => {
    if (!next.steps[view.nodeId]) next.order = [...next.order, view.nodeId];
    next.steps = { ...next.steps, [view.nodeId]: view };
  };

  switch (event.type) {
    case 'run.started':
      next.startedAt ??= at;
      if (!final) next.status = 'RUNNING';
      break;
    case 'node.started': {
      if (!nodeId) break;
      const attempt = num(data.attempt) ?? 1;
      const current = step(nodeId);
      // The same attempt again (a replay) or an older one changes nothing.
      if (next.steps[nodeId] && attempt <= current.attempt) break;
      put({ ...current, status: 'RUNNING', attempt, startedAt: at, finishedAt: undefined, durationMs: undefined, itemCount: undefined, until: undefined });
      if (!final) next.status = 'RUNNING';
      break;
    }
    case 'node.finished': {
      if (!nodeId) break;
      const current = step(nodeId);
      // A step ends once per attempt: an end of an ended step is a repeat.
      if (FINAL_STEP.has(current.status)) break;
      put({
        ...current,
        attempt: Math.max(current.attempt, 1),
        status: 'SUCCEEDED',
        finishedAt: at,
        itemCount: num(data.itemCount),
        durationMs: num(data.durationMs),
        until: undefined,
      });
      if (!final) next.status = 'RUNNING';
      break;
    }
    case 'node.failed': {
      if (!nodeId) break;
      const current = step(nodeId);
      if (FINAL_STEP.has(current.status)) break;
      const attempt = Math.max(current.attempt, 1);
      const willRetry = data.willRetry === true;
      const failure: Failure = { attempt, error: text(data.error) ?? 'failed', willRetry, at };
      const failures = current.failures.some((f) => f.attempt === attempt)
        ? current.failures.map((f) => (f.attempt === attempt ? failure : f))
        : [...current.failures, failure];
      put({ ...current, attempt, status: willRetry ? 'RETRYING' : 'FAILED', finishedAt: at, failures });
      break;
    }
    case 'node.waiting': {
      if (!nodeId) break;
      const current = step(nodeId);
      if (FINAL_STEP.has(current.status)) break;
      put({ ...current, attempt: Math.max(current.attempt, 1), status: 'WAITING', until: text(data.until) });
      if (!final) next.status = 'WAITING';
      break;
    }
    case 'run.finished': {
      const status = text(data.status);
      if (status && FINAL_RUN.has(status)) next.status = status as RunStatus;
      next.finishedAt = at;
      next.costUsd = num(data.costUsd) ?? next.costUsd;
      if (status === 'CANCELED') {
        next.steps = Object.fromEntries(
          Object.entries(next.steps).map(([id, s]) => [id, FINAL_STEP.has(s.status) ? s : { ...s, status: 'CANCELED' as const }]),
        );
      }
      break;
    }
    case 'log': {
      const line: LogLine = { seq: event.seq, at, level: text(data.level) ?? 'info', message: text(data.message) ?? '', nodeId };
      next.logs = [...timeline.logs, line].slice(-MAX_LOGS);
      break;
    }
    default:
      return timeline;
  }
  return next;
}

/** A step of the run record (GET …/runs/:id): one per node and attempt. */
export interface RecordStep {
  nodeId: string;
  status: string;
  attempt: number;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  itemCount: number | null;
  items: Record<string, unknown>[] | null;
  outputs: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
}

export interface MergedStep extends StepView {
  /** The latest attempt's record (its items and outputs), when the record has it. */
  record?: RecordStep;
  /** Every attempt in the record, oldest first. */
  attempts: RecordStep[];
  error?: string;
}

const RECORD_STATUS: Record<string, StepStatus> = {
  RUNNING: 'RUNNING',
  WAITING: 'WAITING',
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
  SKIPPED: 'SKIPPED',
  CANCELED: 'CANCELED',
};

function errorText(error: Record<string, unknown> | null | undefined): string | undefined {
  if (!error) return undefined;
  return text(error.message) ?? text(error.code) ?? JSON.stringify(error);
}

/**
 * The steps to show: the stream's entries (live) and the record's (items, and steps the stream
 * did not carry, such as skipped ones or those before a `reset`), one per node. Whichever knows
 * the later attempt wins; at the same attempt a final status wins over a running one.
 */
export function mergeSteps(timeline: Timeline, record: readonly RecordStep[] | undefined): MergedStep[] {
  const byNode = new Map<string, RecordStep[]>();
  for (const step of [...(record ?? [])].sort((a, b) => a.attempt - b.attempt)) {
    const list = byNode.get(step.nodeId) ?? [];
    list.push(step);
    byNode.set(step.nodeId, list);
  }
  const fromRecord = (attempts: RecordStep[]): StepView => {
    const latest = attempts[attempts.length - 1]!;
    const failures = attempts
      .filter((a) => a.status === 'FAILED')
      .map((a) => ({ attempt: a.attempt, error: errorText(a.error) ?? 'failed', willRetry: a.error?.willRetry === true, at: a.finishedAt ?? undefined }));
    const failedNow = latest.status === 'FAILED' && latest.error?.willRetry === true;
    return {
      nodeId: latest.nodeId,
      status: failedNow ? 'RETRYING' : (RECORD_STATUS[latest.status] ?? 'RUNNING'),
      attempt: latest.attempt,
      startedAt: latest.startedAt,
      finishedAt: latest.finishedAt ?? undefined,
      durationMs: latest.durationMs ?? undefined,
      itemCount: latest.itemCount ?? undefined,
      failures,
    };
  };

  const ids = [...timeline.order];
  const recordOnly = [...byNode.keys()].filter((id) => !timeline.steps[id]);
  recordOnly.sort((a, b) => (byNode.get(a)![0]!.startedAt < byNode.get(b)![0]!.startedAt ? -1 : 1));
  // Steps known only to the record go where their start time puts them among the streamed ones.
  for (const id of recordOnly) {
    const started = byNode.get(id)![0]!.startedAt;
    const at = ids.findIndex((other) => {
      const s = timeline.steps[other]?.startedAt ?? byNode.get(other)?.[0]?.startedAt;
      return s !== undefined && s > started;
    });
    if (at === -1) ids.push(id);
    else ids.splice(at, 0, id);
  }

  return ids.map((id) => {
    const attempts = byNode.get(id) ?? [];
    const streamed = timeline.steps[id];
    const recorded = attempts.length ? fromRecord(attempts) : undefined;
    let view: StepView;
    if (!streamed) view = recorded!;
    else if (!recorded) view = streamed;
    else if (recorded.attempt !== streamed.attempt) view = recorded.attempt > streamed.attempt ? recorded : streamed;
    else view = FINAL_STEP.has(recorded.status) && !FINAL_STEP.has(streamed.status) ? recorded : streamed;
    // Failures: the union of both, by attempt.
    const failures = new Map<number, Failure>();
    for (const f of [...(recorded?.failures ?? []), ...(streamed?.failures ?? [])]) failures.set(f.attempt, { ...failures.get(f.attempt), ...f });
    const record = attempts.find((a) => a.attempt === view.attempt) ?? attempts[attempts.length - 1];
    const merged: MergedStep = { ...view, failures: [...failures.values()].sort((a, b) => a.attempt - b.attempt), record, attempts };
    const latestFailure = merged.failures.find((f) => f.attempt === view.attempt);
    if ((view.status === 'FAILED' || view.status === 'RETRYING') && latestFailure) merged.error = latestFailure.error;
    return merged;
  });
}

/** The run's status to show: a final status from either source wins; otherwise the stream's (it is the newer). */
export function runStatus(timeline: Timeline, recordStatus: RunStatus | undefined): RunStatus | undefined {
  if (recordStatus && FINAL_RUN.has(recordStatus)) return recordStatus;
  if (timeline.status && FINAL_RUN.has(timeline.status)) return timeline.status;
  return timeline.status ?? recordStatus;
}

export function isFinalRun(status: string | undefined): boolean {
  return status !== undefined && FINAL_RUN.has(status);
}
