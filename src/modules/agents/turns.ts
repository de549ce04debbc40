import { and, asc, eq, inArray, ne, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db.ts';
import type { Bus } from '../../platform/bus.ts';
import { newId } from '../../platform/ids.ts';
import type { NewEvent } from '../events/index.ts';
import { CONVERSATIONAL_TYPES } from './catalog.ts';
import { finishedEvent, publishDone, type RunRow } from './engine.ts';
import type { AgentRunner } from './runner.ts';
import { agentRuns, agents } from './tables.ts';

/**
 * Conversation turns: the agent runs of conversational types (CHATBOT), as the conversations bot
 * queues and takes them in its own transactions (the agent runner leaves them alone). Every
 * function works in the caller's transaction; a turn names its conversation in `input.conversationId`.
 */

const ofConversation = (orgId: string, conversationId: string) =>
  and(inArray(agentRuns.type, CONVERSATIONAL_TYPES), eq(agentRuns.orgId, orgId), sql`${agentRuns.input}->>'conversationId' = ${conversationId}`);

/** A saved agent of the organization (a bot's `agentId`), if it exists. */
export async function savedAgent(tx: Db, orgId: string, id: string) {
  const [row] = await tx
    .select()
    .from(agents)
    .where(and(eq(agents.id, id), eq(agents.orgId, orgId)));
  return row;
}

/** Whether the conversation has a turn waiting. */
export async function hasQueuedTurn(tx: Db, orgId: string, conversationId: string): Promise<boolean> {
  const [row] = await tx
    .select({ id: agentRuns.id })
    .from(agentRuns)
    .where(and(eq(agentRuns.status, 'QUEUED'), ofConversation(orgId, conversationId)))
    .limit(1);
  return Boolean(row);
}

/** Whether another turn of the conversation is running (on any instance). */
export async function hasRunningTurn(tx: Db, orgId: string, conversationId: string, exceptId: string): Promise<boolean> {
  const [row] = await tx
    .select({ id: agentRuns.id })
    .from(agentRuns)
    .where(and(eq(agentRuns.status, 'RUNNING'), ofConversation(orgId, conversationId), ne(agentRuns.id, exceptId)))
    .limit(1);
  return Boolean(row);
}

export interface NewTurn {
  orgId: string;
  projectId: string | null;
  type: string;
  conversationId: string;
  task: string;
  modelId: string;
  agentId: string | null;
  instructions: string | null;
  maxSteps: number;
  budgetUsd: number | null;
  at: Date;
}

/** A QUEUED turn. */
export async function queueTurn(tx: Db, turn: NewTurn): Promise<void> {
  await tx.insert(agentRuns).values({
    id: newId('agentRun', turn.at.getTime()),
    orgId: turn.orgId,
    projectId: turn.projectId,
    agentId: turn.agentId,
    type: turn.type,
    status: 'QUEUED',
    task: turn.task,
    input: { conversationId: turn.conversationId },
    modelId: turn.modelId,
    instructions: turn.instructions,
    maxSteps: turn.maxSteps,
    budgetUsd: turn.budgetUsd,
    budgetScope: turn.budgetUsd != null ? 'agent' : null,
    createdAt: turn.at,
  });
}

/** Queued turns, oldest first, locked for this transaction (SKIP LOCKED: another instance takes others). */
export function queuedTurns(tx: Db, limit: number): Promise<RunRow[]> {
  return tx
    .select()
    .from(agentRuns)
    .where(and(eq(agentRuns.status, 'QUEUED'), inArray(agentRuns.type, CONVERSATIONAL_TYPES)))
    .orderBy(asc(agentRuns.id))
    .limit(limit)
    .for('update', { skipLocked: true });
}

/** A queued turn starts: RUNNING, held by the instance's runner, with the input its model is given. */
export async function startTurn(
  tx: Db,
  id: string,
  set: { at: Date; leaseOwner: string; leaseUntil: Date; input: Record<string, unknown>; projectId: string | null },
): Promise<RunRow> {
  const [row] = await tx
    .update(agentRuns)
    .set({ status: 'RUNNING', startedAt: set.at, leaseOwner: set.leaseOwner, leaseUntil: set.leaseUntil, input: set.input, projectId: set.projectId })
    .where(and(eq(agentRuns.id, id), eq(agentRuns.status, 'QUEUED')))
    .returning();
  return row!;
}

/** A queued turn ends without a model call; null when it was no longer queued. */
export async function endTurn(tx: Db, id: string, end: { at: Date; status: 'failed' | 'canceled'; summary: string; error: string }): Promise<RunRow | null> {
  const [row] = await tx
    .update(agentRuns)
    .set({ status: end.status, summary: end.summary, error: end.error, startedAt: end.at, finishedAt: end.at, leaseOwner: null, leaseUntil: null })
    .where(and(eq(agentRuns.id, id), eq(agentRuns.status, 'QUEUED')))
    .returning();
  return row ?? null;
}

/**
 * The conversations bot's turns as the agents module hands them out (the conversations module's
 * AgentTurnsPort, joined in services.ts): the functions above, the end of a turn with its
 * `agent.run.finished`, and this instance's runner, which executes a started turn.
 */
export class ConversationTurns {
  private readonly runner: AgentRunner;
  private readonly events: { record(tx: Db, list: NewEvent | NewEvent[]): Promise<unknown> };
  private readonly bus: Bus;

  constructor(runner: AgentRunner, events: { record(tx: Db, list: NewEvent | NewEvent[]): Promise<unknown> }, bus: Bus) {
    this.runner = runner;
    this.events = events;
    this.bus = bus;
  }

  get activeCount(): number {
    return this.runner.activeCount;
  }

  savedAgent(tx: Db, orgId: string, id: string) {
    return savedAgent(tx, orgId, id);
  }

  hasQueued(tx: Db, orgId: string, conversationId: string): Promise<boolean> {
    return hasQueuedTurn(tx, orgId, conversationId);
  }

  hasRunning(tx: Db, orgId: string, conversationId: string, exceptId: string): Promise<boolean> {
    return hasRunningTurn(tx, orgId, conversationId, exceptId);
  }

  queue(tx: Db, turn: NewTurn): Promise<void> {
    return queueTurn(tx, turn);
  }

  queued(tx: Db, limit: number): Promise<RunRow[]> {
    return queuedTurns(tx, limit);
  }

  start(tx: Db, id: string, set: { at: Date; input: Record<string, unknown>; projectId: string | null }): Promise<RunRow> {
    return startTurn(tx, id, { ...set, leaseOwner: this.runner.owner, leaseUntil: this.runner.leaseUntil() });
  }

  async end(tx: Db, id: string, end: { at: Date; status: 'failed' | 'canceled'; summary: string; error: string }): Promise<RunRow | null> {
    const row = await endTurn(tx, id, end);
    if (!row) return null;
    await this.events.record(tx, finishedEvent(row));
    return row;
  }

  published(row: RunRow): Promise<void> {
    return publishDone(this.bus, row);
  }

  run(row: RunRow): Promise<RunRow> {
    return this.runner.track(row, []);
  }
}
