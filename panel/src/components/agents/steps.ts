import type { Schemas } from '../../api/client';

export type AgentStep = Schemas['AgentStep'];

/** Final statuses of an agent run (CONTRACT §5): lowercase, unlike QUEUED and RUNNING. */
export const FINAL_STATUSES = ['succeeded', 'failed', 'budget_exceeded', 'max_steps', 'canceled'] as const;
export const RUN_STATUSES = ['QUEUED', 'RUNNING', ...FINAL_STATUSES] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export function isFinal(status: string | null | undefined): boolean {
  return (FINAL_STATUSES as readonly string[]).includes(status ?? '');
}

export const STATUS_LABELS: Record<string, string> = {
  QUEUED: 'Queued',
  RUNNING: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
  budget_exceeded: 'Budget exceeded',
  max_steps: 'Step limit reached',
  canceled: 'Canceled',
};

export function statusLabel(status: string): string {
  return STATUS_LABELS[status] ?? status;
}

/**
 * A step the stream delivered, added to what is shown. The stream replays its history on every
 * connection (SPEC stream rule 4), so a step already there (same `index`) is a repeat and is
 * dropped; the list stays in index order whatever order steps arrive in.
 */
export function addStreamStep(steps: readonly AgentStep[], step: AgentStep): AgentStep[] {
  if (steps.some((s) => s.index === step.index)) return steps as AgentStep[];
  const out = [...steps, step];
  // Steps nearly always arrive in order: only sort when this one does not.
  const last = steps[steps.length - 1];
  return last && last.index > step.index ? out.sort((a, b) => a.index - b.index) : out;
}

/**
 * The run record's steps (GET …/agent-runs/:id: full, un-shortened) over those the stream gave
 * (long outputs shortened): the record's version of a step wins, steps only the stream has yet
 * are kept.
 */
export function withRecordSteps(steps: readonly AgentStep[], record: readonly AgentStep[] | undefined): AgentStep[] {
  if (!record?.length) return steps as AgentStep[];
  const byIndex = new Map<number, AgentStep>();
  for (const s of steps) byIndex.set(s.index, s);
  for (const s of record) byIndex.set(s.index, s);
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

/** A step's one-line title for the timeline. */
export function stepTitle(step: AgentStep): string {
  switch (step.type) {
    case 'thinking':
      return 'Thinking';
    case 'message':
      return 'Message';
    case 'tool_call':
      return `Calls ${step.name ?? 'a tool'}`;
    case 'tool_result':
      return `${step.name ?? 'Tool'} answered${step.durationMs !== undefined ? ` in ${step.durationMs} ms` : ''}`;
    case 'error':
      return 'Error';
    case 'handoff':
      return 'Hand-off';
  }
}
