import { describe, expect, it } from 'vitest';
import { addStreamStep, isFinal, stepTitle, withRecordSteps, type AgentStep } from './steps';

const step = (index: number, extra: Partial<AgentStep> = {}): AgentStep => ({
  index,
  type: 'message',
  at: `2026-03-01T10:00:0${index}.000Z`,
  text: `step ${index}`,
  ...extra,
});

describe('steps from the agent run stream', () => {
  it('drops a step replayed after a reconnect (same index) and keeps the first copy', () => {
    let steps: AgentStep[] = [];
    for (const s of [step(0), step(1), step(0, { text: 'again' }), step(1), step(2)]) steps = addStreamStep(steps, s);
    expect(steps.map((s) => s.index)).toEqual([0, 1, 2]);
    expect(steps[0]!.text).toBe('step 0');
  });

  it('keeps index order when a step arrives late', () => {
    let steps: AgentStep[] = [];
    for (const s of [step(0), step(2), step(1)]) steps = addStreamStep(steps, s);
    expect(steps.map((s) => s.index)).toEqual([0, 1, 2]);
  });

  it('returns the same list for a repeat, so nothing re-renders', () => {
    const steps = [step(0)];
    expect(addStreamStep(steps, step(0))).toBe(steps);
  });

  it("prefers the run record's full steps over the stream's shortened ones, keeping steps only the stream has", () => {
    const streamed = [step(0, { type: 'tool_result', output: 'abc… (500 more characters)' }), step(1), step(2)];
    const record = [step(0, { type: 'tool_result', output: 'abc'.repeat(200) }), step(1)];
    const merged = withRecordSteps(streamed, record);
    expect(merged.map((s) => s.index)).toEqual([0, 1, 2]);
    expect(merged[0]!.output).toBe('abc'.repeat(200));
    expect(withRecordSteps(streamed, undefined)).toBe(streamed);
  });

  it('names steps and final statuses', () => {
    expect(stepTitle(step(0, { type: 'tool_call', name: 'lead_stats' }))).toBe('Calls lead_stats');
    expect(stepTitle(step(0, { type: 'tool_result', name: 'lead_stats', durationMs: 12 }))).toBe('lead_stats answered in 12 ms');
    expect(isFinal('succeeded')).toBe(true);
    expect(isFinal('canceled')).toBe(true);
    expect(isFinal('RUNNING')).toBe(false);
  });
});
