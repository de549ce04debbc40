import { describe, expect, it } from 'vitest';
import { applyEvent, EMPTY_TIMELINE, mergeSteps, runStatus, type ExecEvent, type RecordStep, type Timeline } from './timeline';

let clock = 0;
const at = () => new Date(Date.UTC(2026, 0, 1, 9, 0, clock++)).toISOString();
const ev = (seq: number, type: string, data: Record<string, unknown> = {}): ExecEvent => ({ seq, type, data: { type, runId: 'run_1', at: at(), ...data } });
const play = (events: ExecEvent[], from: Timeline = EMPTY_TIMELINE) => events.reduce(applyEvent, from);

const history = (): ExecEvent[] => [
  ev(1, 'run.started', { workflowId: 'wf_1' }),
  ev(2, 'node.started', { nodeId: 'trigger', attempt: 1 }),
  ev(3, 'node.finished', { nodeId: 'trigger', itemCount: 1, durationMs: 3 }),
  ev(4, 'node.started', { nodeId: 'fetch', attempt: 1 }),
  ev(5, 'node.failed', { nodeId: 'fetch', error: 'HTTP 503', willRetry: true }),
  ev(6, 'node.started', { nodeId: 'fetch', attempt: 2 }),
  ev(7, 'log', { nodeId: 'fetch', level: 'info', message: 'GET https://api.example.com answered 200' }),
  ev(8, 'node.finished', { nodeId: 'fetch', itemCount: 2, durationMs: 40 }),
  ev(9, 'node.started', { nodeId: 'approve', attempt: 1 }),
  ev(10, 'node.waiting', { nodeId: 'approve', expiresAt: '2026-01-02T09:00:00.000Z' }),
];

describe('the run timeline', () => {
  it('keeps one entry per node, in the order the nodes started, with retries and the failures before them', () => {
    const t = play(history());
    expect(t.order).toEqual(['trigger', 'fetch', 'approve']);
    expect(t.steps.trigger).toMatchObject({ status: 'SUCCEEDED', attempt: 1, itemCount: 1, durationMs: 3 });
    expect(t.steps.fetch).toMatchObject({ status: 'SUCCEEDED', attempt: 2, itemCount: 2, failures: [{ attempt: 1, error: 'HTTP 503', willRetry: true }] });
    expect(t.steps.approve!.status).toBe('WAITING');
    expect(t.status).toBe('WAITING');
    expect(t.logs.map((l) => l.message)).toEqual(['GET https://api.example.com answered 200']);
    expect(t.lastSeq).toBe(10);
  });

  it('shows a step between its failure and its retry as retrying, and a final failure as failed', () => {
    const retrying = play(history().slice(0, 5));
    expect(retrying.steps.fetch).toMatchObject({ status: 'RETRYING', attempt: 1 });
    const failed = play(
      [
        ev(6, 'node.started', { nodeId: 'fetch', attempt: 2 }),
        ev(7, 'node.failed', { nodeId: 'fetch', error: 'HTTP 500', willRetry: false }),
        ev(8, 'run.finished', { status: 'FAILED', costUsd: 0.25 }),
      ],
      retrying,
    );
    expect(failed.steps.fetch).toMatchObject({
      status: 'FAILED',
      attempt: 2,
      failures: [
        { attempt: 1, error: 'HTTP 503', willRetry: true },
        { attempt: 2, error: 'HTTP 500', willRetry: false },
      ],
    });
    expect(failed.status).toBe('FAILED');
    expect(failed.costUsd).toBe(0.25);
  });

  it('ignores the history replayed after a reconnect', () => {
    const first = play(history());
    const again = play([...history(), ev(11, 'node.finished', { nodeId: 'approve', itemCount: 1, durationMs: 90_000 })], first);
    expect(again.order).toEqual(['trigger', 'fetch', 'approve']);
    expect(again.steps.fetch!.failures).toHaveLength(1);
    expect(again.logs).toHaveLength(1);
    expect(again.steps.approve!.status).toBe('SUCCEEDED');
    expect(again.status).toBe('RUNNING');
  });

  it('de-duplicates by node even without sequence numbers: a repeated start does not reopen a finished step', () => {
    const noSeq = history().map((e) => ({ ...e, seq: Number.NaN }));
    const t = play([...noSeq, ...noSeq]);
    expect(t.order).toEqual(['trigger', 'fetch', 'approve']);
    expect(t.steps.trigger!.status).toBe('SUCCEEDED');
    expect(t.steps.fetch).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
    expect(t.steps.fetch!.failures).toHaveLength(1);
  });

  it('resumes after an approval and ends; a canceled run marks the unfinished steps canceled', () => {
    const done = play([
      ...history(),
      ev(11, 'node.finished', { nodeId: 'approve', itemCount: 1 }),
      ev(12, 'node.started', { nodeId: 'set', attempt: 1 }),
      ev(13, 'node.finished', { nodeId: 'set', itemCount: 1 }),
      ev(14, 'run.finished', { status: 'SUCCEEDED', costUsd: 0 }),
    ]);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.steps.set!.status).toBe('SUCCEEDED');
    const canceled = play([ev(11, 'run.finished', { status: 'CANCELED', costUsd: 0 })], play(history()));
    expect(canceled.steps.approve!.status).toBe('CANCELED');
    expect(canceled.steps.fetch!.status).toBe('SUCCEEDED');
    // A late event after the end does not reopen the run.
    expect(play([ev(12, 'node.started', { nodeId: 'late', attempt: 1 })], canceled).status).toBe('CANCELED');
  });

  it('ignores unknown event kinds', () => {
    const t = play(history());
    expect(applyEvent(t, ev(11, 'something.new'))).toBe(t);
  });
});

const rec = (nodeId: string, attempt: number, status: string, extra: Partial<RecordStep> = {}): RecordStep => ({
  nodeId,
  attempt,
  status,
  startedAt: `2026-01-01T09:00:0${attempt}.000Z`,
  finishedAt: null,
  durationMs: null,
  itemCount: null,
  items: null,
  outputs: null,
  error: null,
  ...extra,
});

describe('merging the stream with the run record', () => {
  it('takes items from the record and status from whichever knows more', () => {
    const t = play(history().slice(0, 6)); // fetch attempt 2 running
    const record = [
      rec('trigger', 1, 'SUCCEEDED', { items: [{ topic: 'x' }], itemCount: 1 }),
      rec('fetch', 1, 'FAILED', { error: { code: 'HTTP', message: 'HTTP 503', willRetry: true } }),
      rec('fetch', 2, 'SUCCEEDED', { items: [{ a: 1 }, { a: 2 }], itemCount: 2, finishedAt: '2026-01-01T09:00:09.000Z' }),
    ];
    const steps = mergeSteps(t, record);
    expect(steps.map((s) => [s.nodeId, s.status])).toEqual([
      ['trigger', 'SUCCEEDED'],
      ['fetch', 'SUCCEEDED'],
    ]);
    expect(steps[1]!.record!.items).toEqual([{ a: 1 }, { a: 2 }]);
    expect(steps[1]!.attempts).toHaveLength(2);
    expect(steps[1]!.failures).toEqual([expect.objectContaining({ attempt: 1, error: 'HTTP 503', willRetry: true })]);
    expect(steps[0]!.record!.items).toEqual([{ topic: 'x' }]);
  });

  it('shows steps only the record has (skipped ones, or all of them before the stream connects)', () => {
    const record = [
      rec('trigger', 1, 'SUCCEEDED'),
      rec('no', 1, 'SKIPPED', { startedAt: '2026-01-01T09:00:05.000Z' }),
      rec('yes', 1, 'FAILED', { startedAt: '2026-01-01T09:00:04.000Z', error: { message: 'boom', willRetry: false } }),
    ];
    expect(mergeSteps(EMPTY_TIMELINE, record).map((s) => [s.nodeId, s.status, s.error])).toEqual([
      ['trigger', 'SUCCEEDED', undefined],
      ['yes', 'FAILED', 'boom'],
      ['no', 'SKIPPED', undefined],
    ]);
  });

  it('prefers the stream when it is ahead of the record', () => {
    const t = play(history());
    const steps = mergeSteps(t, [rec('trigger', 1, 'SUCCEEDED'), rec('fetch', 1, 'RUNNING')]);
    expect(steps.find((s) => s.nodeId === 'fetch')).toMatchObject({ status: 'SUCCEEDED', attempt: 2 });
    expect(steps.find((s) => s.nodeId === 'approve')!.status).toBe('WAITING');
  });

  it('gives the run status: final from either side, else the stream', () => {
    const waiting = play(history());
    expect(runStatus(waiting, 'RUNNING')).toBe('WAITING');
    expect(runStatus(waiting, 'CANCELED')).toBe('CANCELED');
    expect(runStatus(EMPTY_TIMELINE, 'QUEUED')).toBe('QUEUED');
  });
});
