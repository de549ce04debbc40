import { asc, and, eq, gt, sql } from 'drizzle-orm';
import type { Bus } from '../../platform/bus.ts';
import type { Db } from '../../platform/db.ts';
import type { OrgStreamPort } from './ports.ts';
import { agentSteps } from './tables.ts';

export const STEP_TYPES = ['thinking', 'message', 'tool_call', 'tool_result', 'error', 'handoff'] as const;
export type StepType = (typeof STEP_TYPES)[number];

export interface NewStep {
  type: StepType;
  name?: string;
  input?: unknown;
  output?: string;
  durationMs?: number;
  text?: string;
}

export interface AgentStep extends NewStep {
  index: number;
  at: string;
}

type StepRow = typeof agentSteps.$inferSelect;

export function publicStep(row: StepRow): AgentStep {
  const step: AgentStep = { index: row.index, type: row.type as StepType, at: row.at.toISOString() };
  if (row.name !== null) step.name = row.name;
  if (row.input !== null) step.input = row.input;
  if (row.output !== null) step.output = row.output;
  if (row.durationMs !== null) step.durationMs = row.durationMs;
  if (row.text !== null) step.text = row.text;
  return step;
}

/** Messages of one run's live channel: its steps as they are stored, then one `done`. */
export type RunMessage =
  { kind: 'step'; step: AgentStep } | { kind: 'done'; run: { id: string; status: string; summary: string | null; usage: Record<string, unknown> } };

export const runChannel = (runId: string) => `agent-run:${runId}`;

const LIMIT = 2000;

/** Streams shorten long values; GET …/agent-runs/:id has them whole. */
export function shortenStep(step: AgentStep): AgentStep {
  const out: AgentStep = { ...step };
  if (out.output && out.output.length > LIMIT) out.output = `${out.output.slice(0, LIMIT)}… (${out.output.length - LIMIT} more characters)`;
  if (out.text && out.text.length > LIMIT * 4) out.text = `${out.text.slice(0, LIMIT * 4)}… (${out.text.length - LIMIT * 4} more characters)`;
  if (out.input !== undefined && JSON.stringify(out.input).length > LIMIT) out.input = shortenValue(out.input);
  return out;
}

function shortenValue(value: unknown): unknown {
  if (typeof value === 'string') return value.length > LIMIT ? `${value.slice(0, LIMIT)}…` : value;
  if (Array.isArray(value)) return value.length > 50 ? [...value.slice(0, 50).map(shortenValue), `… ${value.length - 50} more`] : value.map(shortenValue);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shortenValue(v)]));
  return value;
}

/** Stores a step and announces it: on the run's channel (agent stream) and as `agent.step` on the organization stream. */
export class StepStore {
  private readonly db: Db;
  private readonly bus: Bus;
  private readonly orgStream: OrgStreamPort;

  constructor(db: Db, bus: Bus, orgStream: OrgStreamPort) {
    this.db = db;
    this.bus = bus;
    this.orgStream = orgStream;
  }

  /**
   * One round trip on PostgreSQL: the insert and the NOTIFYs for the other instances in one
   * statement; this instance's subscribers get the messages right after it.
   */
  async write(run: { id: string; orgId: string; projectId: string | null }, index: number, at: Date, step: NewStep): Promise<AgentStep> {
    const row = {
      runId: run.id,
      orgId: run.orgId,
      index,
      type: step.type,
      at,
      name: step.name ?? null,
      input: step.input === undefined ? null : step.input,
      output: step.output ?? null,
      durationMs: step.durationMs ?? null,
      text: step.text ?? null,
    };
    const stored = publicStep(row);
    const runMessage: RunMessage = { kind: 'step', step: stored };
    const orgMessage = {
      kind: 'agent.step',
      data: {
        agentRunId: run.id,
        type: stored.type,
        index: stored.index,
        ...(stored.name ? { name: stored.name } : {}),
        ...(run.projectId ? { projectId: run.projectId } : {}),
      },
    };
    const toRun = this.bus.notifyOthersSql(runChannel(run.id), [runMessage]);
    const toOrg = this.orgStream.notifyOthersSql(run.orgId, [orgMessage]);
    if (toRun && toOrg) {
      const notifies = [...toRun, ...toOrg];
      if (notifies.length === 0) {
        await this.db.insert(agentSteps).values(row);
      } else {
        const inserted = this.db.$with('inserted').as(this.db.insert(agentSteps).values(row).returning({ index: agentSteps.index }));
        await this.db
          .with(inserted)
          .select(Object.fromEntries(notifies.map((n, i) => [`n${i}`, n])))
          .from(inserted);
      }
      this.bus.emitLocal(runChannel(run.id), runMessage);
      this.orgStream.emitLocal(run.orgId, [orgMessage]);
      return stored;
    }
    // A step too large for a NOTIFY travels through the bus's large-message table.
    await this.db.insert(agentSteps).values(row);
    await Promise.all([this.bus.publish(runChannel(run.id), runMessage), this.orgStream.publish(run.orgId, orgMessage)]);
    return stored;
  }

  async list(orgId: string, runId: string, after = -1): Promise<AgentStep[]> {
    const rows = await this.db
      .select()
      .from(agentSteps)
      .where(and(eq(agentSteps.orgId, orgId), eq(agentSteps.runId, runId), gt(agentSteps.index, after)))
      .orderBy(asc(agentSteps.index));
    return rows.map(publicStep);
  }

  async nextIndex(tx: Db, runId: string): Promise<number> {
    const [row] = await tx
      .select({ next: sql<number>`coalesce(max(${agentSteps.index}), -1)::int + 1` })
      .from(agentSteps)
      .where(eq(agentSteps.runId, runId));
    return row?.next ?? 0;
  }
}
