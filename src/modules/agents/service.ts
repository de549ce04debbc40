import { eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { transaction, type Db } from '../../platform/db.ts';
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import type { Scope } from '../../platform/context.ts';
import { inScope } from '../../platform/tenant.ts';
import type { AgentsPorts } from './ports.ts';
import { AgentEngine, finishedEvent, FINAL_STATUSES, publishDone, runUsage, type RunRow } from './engine.ts';
import { ModelRegistry } from './models/registry.ts';
import { AGENT_CANCEL, AGENTS_WAKE, AgentRunner } from './runner.ts';
import { StepStore, type AgentStep } from './steps.ts';
import { ConversationTurns } from './turns.ts';
import { agentRuns, agents } from './tables.ts';
import { handoffTool } from './tools/index.ts';
import { AGENT_TYPES } from './catalog.ts';

export interface RunRequest {
  type: string;
  task: string;
  input?: Record<string, unknown>;
  projectId?: string;
  modelId?: string;
}

export interface AgentInput {
  name: string;
  type: string;
  instructions?: string | null;
  modelId?: string | null;
  maxSteps?: number | null;
  budgetUsd?: number | null;
  projectId?: string | null;
}

export interface InlineRequest {
  orgId: string;
  projectId: string | null;
  type: string;
  task: string;
  input?: Record<string, unknown>;
  modelId?: string;
  /** The workflow run (and workflow) the agent runs for: recorded on its usage rows. */
  workflowRunId?: string;
  workflowId?: string;
  /** A hard limit for this run (e.g. the workflow's remaining budget): the run ends budget_exceeded before passing it. */
  budgetUsd?: number | null;
  /** `workflow` when budgetUsd is the calling workflow's remaining budget (default `agent`). */
  budgetScope?: 'agent' | 'workflow';
  maxSteps?: number;
  instructions?: string;
  signal?: AbortSignal;
}

export interface InlineResult {
  agentRunId: string;
  status: string;
  summary: string;
  usage: { inputTokens: number; outputTokens: number; costUsd: number; modelId: string };
  reportId?: string;
  output?: unknown;
  error?: string;
}

export interface RunListQuery extends ListQuery {
  status?: string;
  type?: string;
  agentId?: string;
}

type AgentRow = typeof agents.$inferSelect;

export function publicAgent(row: AgentRow) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    instructions: row.instructions,
    modelId: row.modelId,
    maxSteps: row.maxSteps,
    budgetUsd: row.budgetUsd,
    projectId: row.projectId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function publicRun(row: RunRow, steps?: AgentStep[]) {
  const out: Record<string, unknown> = {
    id: row.id,
    agentId: row.agentId,
    type: row.type,
    status: row.status,
    task: row.task,
    input: row.input,
    modelId: row.modelId,
    projectId: row.projectId,
    summary: row.summary,
    error: row.error,
    output: row.output,
    reportId: row.reportId,
    usage: runUsage(row),
    maxSteps: row.maxSteps,
    budgetUsd: row.budgetUsd,
    workflowRunId: row.workflowRunId,
    stepCount: row.stepCount,
    createdAt: row.createdAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
  };
  if (steps) out.steps = steps;
  return out;
}

const RUN_SORT = {
  createdAt: agentRuns.createdAt,
  finishedAt: agentRuns.finishedAt,
  status: agentRuns.status,
  type: agentRuns.type,
  costUsd: agentRuns.costUsd,
};
const AGENT_SORT = { createdAt: agents.createdAt, name: agents.name, type: agents.type };
export const RUN_STATUSES = ['QUEUED', 'RUNNING', ...FINAL_STATUSES] as const;

/** Saved agents, agent runs (queued for the runner, or inline for workflows) and the agent catalog. */
export class AgentsService {
  readonly models: ModelRegistry;
  readonly steps: StepStore;
  readonly engine: AgentEngine;
  readonly runner: AgentRunner;
  /** The conversations bot's turns (its AgentTurnsPort). */
  readonly turns: ConversationTurns;
  private readonly deps: Deps;
  private readonly db: Db;
  private readonly ports: AgentsPorts;

  constructor(deps: Deps, ports: AgentsPorts) {
    this.deps = deps;
    this.db = deps.db;
    this.ports = ports;
    this.models = new ModelRegistry(deps.config);
    this.steps = new StepStore(deps.db, ports.bus, ports.orgStream);
    this.engine = new AgentEngine({
      deps,
      models: this.models,
      usage: ports.usage,
      budgets: ports.budgets,
      events: ports.events,
      bus: ports.bus,
      steps: this.steps,
      tools: ports.tools,
    });
    this.runner = new AgentRunner(deps, this.engine, ports.events, this.steps, ports.bus);
    this.turns = new ConversationTurns(this.runner, ports.events, ports.bus);
  }

  /** GET …/agent-types: every type with its description, tools (those installed here) and report type. */
  types() {
    return Object.values(AGENT_TYPES).map((t) => ({
      type: t.type,
      description: t.description,
      reportType: t.reportType,
      instructions: t.instructions,
      tools: [
        ...this.engine.toolsOf(t).map((tool) => ({ name: tool.name, description: tool.description })),
        ...(t.conversational ? [] : [{ name: handoffTool.name, description: handoffTool.description }]),
      ],
    }));
  }

  private assertType(type: string): void {
    if (!AGENT_TYPES[type])
      throw badRequest(`Unknown agent type "${type}"; one of ${Object.keys(AGENT_TYPES).join(', ')}`, [{ field: 'body.type', message: 'unknown agent type' }]);
  }

  /** The fallback (a saved agent's project) applies only to callers not bound to a project. */
  private projectFor(scope: Scope, requested: string | null | undefined, fallback: string | null = null): Promise<string | null> {
    return this.ports.orgs.projectFor(scope, requested ?? (scope.projectId ? null : fallback));
  }

  // ------------------------------------------------------------------ saved agents

  async createAgent(scope: Scope, input: AgentInput) {
    this.assertType(input.type);
    if (input.modelId) this.models.check(input.modelId);
    const projectId = await this.projectFor(scope, input.projectId);
    const now = this.deps.clock.now();
    const [row] = await this.db
      .insert(agents)
      .values({
        id: newId('agent', now.getTime()),
        orgId: scope.orgId,
        projectId,
        name: input.name,
        type: input.type,
        instructions: input.instructions ?? null,
        modelId: input.modelId ?? null,
        maxSteps: input.maxSteps ?? null,
        budgetUsd: input.budgetUsd ?? null,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return publicAgent(row!);
  }

  async getAgentRow(scope: Scope, id: string): Promise<AgentRow> {
    const [row] = await this.db
      .select()
      .from(agents)
      .where(inScope(scope, agents, eq(agents.id, id)));
    if (!row) throw notFound('Agent');
    return row;
  }

  async getAgent(scope: Scope, id: string) {
    return publicAgent(await this.getAgentRow(scope, id));
  }

  async listAgents(scope: Scope, query: ListQuery & { type?: string }) {
    const page = pageOf(query);
    const conditions: (SQL | undefined)[] = [query.type ? eq(agents.type, query.type) : undefined];
    if (query.q?.trim()) conditions.push(sql`${agents.name} ilike ${`%${query.q.trim().replace(/[\\%_]/g, (c) => '\\' + c)}%`}`);
    const where = inScope(scope, agents, ...conditions);
    const [items, counted] = await Promise.all([
      this.db
        .select()
        .from(agents)
        .where(where)
        .orderBy(...orderBy(query.sort, AGENT_SORT, '-createdAt', agents.id))
        .limit(page.limit)
        .offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(agents)
        .where(where),
    ]);
    return envelope(items.map(publicAgent), counted[0]?.n ?? 0, page);
  }

  async updateAgent(scope: Scope, id: string, patch: Partial<AgentInput>) {
    const before = await this.getAgentRow(scope, id);
    if (patch.type !== undefined) this.assertType(patch.type);
    if (patch.modelId) this.models.check(patch.modelId);
    const projectId = patch.projectId === undefined ? before.projectId : await this.projectFor(scope, patch.projectId);
    const set: Partial<AgentRow> = { updatedAt: this.deps.clock.now(), projectId };
    for (const key of ['name', 'type', 'instructions', 'modelId', 'maxSteps', 'budgetUsd'] as const) {
      if (patch[key] !== undefined) (set as Record<string, unknown>)[key] = patch[key];
    }
    const [row] = await this.db
      .update(agents)
      .set(set)
      .where(inScope(scope, agents, eq(agents.id, id)))
      .returning();
    if (!row) throw notFound('Agent');
    return publicAgent(row);
  }

  async deleteAgent(scope: Scope, id: string): Promise<void> {
    const deleted = await this.db
      .delete(agents)
      .where(inScope(scope, agents, eq(agents.id, id)))
      .returning({ id: agents.id });
    if (deleted.length === 0) throw notFound('Agent');
  }

  // ------------------------------------------------------------------ runs

  /** Queues an ad-hoc run (POST …/agents/run); the runner picks it up. 429 while the monthly budget is spent. */
  async startRun(scope: Scope, request: RunRequest, saved?: AgentRow) {
    this.assertType(request.type);
    const modelId = this.models.check(request.modelId ?? saved?.modelId ?? this.deps.config.defaultModel);
    const projectId = await this.projectFor(scope, request.projectId, saved?.projectId ?? null);
    await this.ports.budgets.assertCanStart(scope.orgId);
    const now = this.deps.clock.now();
    const [row] = await this.counted(scope.orgId, (db) =>
      db
        .insert(agentRuns)
        .values({
          id: newId('agentRun', now.getTime()),
          orgId: scope.orgId,
          projectId,
          agentId: saved?.id ?? null,
          type: request.type,
          status: 'QUEUED',
          task: request.task,
          input: request.input ?? {},
          modelId,
          instructions: saved?.instructions ?? null,
          maxSteps: saved?.maxSteps ?? this.deps.config.agentMaxSteps,
          budgetUsd: saved?.budgetUsd ?? null,
          budgetScope: saved?.budgetUsd != null ? 'agent' : null,
          createdAt: now,
        })
        .returning(),
    );
    await this.ports.bus.publish(AGENTS_WAKE, null);
    return publicRun(row!);
  }

  /** An agent run's insert, counted against the plan's agentRunsPerMonth in its transaction (429 PLAN_LIMIT beyond). */
  private async counted<T>(orgId: string, insert: (db: Db) => Promise<T>): Promise<T> {
    const plans = this.ports.plans;
    if (!plans?.enabled) return insert(this.db);
    return transaction(this.db, async (tx) => {
      await plans.take(tx, orgId, 'agentRunsPerMonth');
      return insert(tx);
    });
  }

  async runSaved(scope: Scope, agentId: string, request: { task: string; input?: Record<string, unknown>; projectId?: string }) {
    const saved = await this.getAgentRow(scope, agentId);
    return this.startRun(scope, { type: saved.type, task: request.task, input: request.input, projectId: request.projectId }, saved);
  }

  /**
   * Runs an agent to completion in this process and returns its result (the workflow engine's
   * `ai.agent` node, content generation). The run is recorded like any other (steps, usage,
   * events, stream); `signal` cancels it. Throws 422 MODEL_NOT_ALLOWED for an unusable model.
   */
  async runInline(request: InlineRequest): Promise<InlineResult> {
    this.assertType(request.type);
    if (AGENT_TYPES[request.type]!.conversational)
      throw badRequest(`${request.type} runs are conversation turns: they start when a contact writes to a bot-handled conversation`, [
        { field: 'type', message: 'is a conversation bot' },
      ]);
    const modelId = this.models.check(request.modelId ?? this.deps.config.defaultModel);
    const now = this.deps.clock.now();
    const [row] = await this.counted(request.orgId, (db) =>
      db
        .insert(agentRuns)
        .values({
          id: newId('agentRun', now.getTime()),
          orgId: request.orgId,
          projectId: request.projectId,
          type: request.type,
          status: 'RUNNING',
          task: request.task,
          input: request.input ?? {},
          modelId,
          instructions: request.instructions ?? null,
          maxSteps: request.maxSteps ?? this.deps.config.agentMaxSteps,
          budgetUsd: request.budgetUsd ?? null,
          budgetScope: request.budgetUsd != null ? (request.budgetScope ?? 'agent') : null,
          workflowId: request.workflowId ?? null,
          workflowRunId: request.workflowRunId ?? null,
          inline: true,
          leaseOwner: this.runner.owner,
          leaseUntil: this.runner.leaseUntil(),
          createdAt: now,
          startedAt: now,
        })
        .returning(),
    );
    const final = await this.runner.track(row!, request.signal ? [request.signal] : []);
    const result: InlineResult = {
      agentRunId: final.id,
      status: final.status,
      summary: final.summary ?? '',
      usage: runUsage(final),
      output: final.output ?? undefined,
    };
    if (final.reportId) result.reportId = final.reportId;
    if (final.error) result.error = final.error;
    return result;
  }

  async getRunRow(scope: Scope, id: string): Promise<RunRow> {
    const [row] = await this.db
      .select()
      .from(agentRuns)
      .where(inScope(scope, agentRuns, eq(agentRuns.id, id)));
    if (!row) throw notFound('Agent run');
    return row;
  }

  async getRun(scope: Scope, id: string) {
    const row = await this.getRunRow(scope, id);
    return publicRun(row, await this.steps.list(scope.orgId, id));
  }

  async listRuns(scope: Scope, query: RunListQuery) {
    const page = pageOf(query);
    const conditions: (SQL | undefined)[] = [];
    if (query.status) {
      const statuses = query.status
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
        .map((s) => (s.toUpperCase() === 'QUEUED' || s.toUpperCase() === 'RUNNING' ? s.toUpperCase() : s.toLowerCase()));
      const bad = statuses.filter((s) => !(RUN_STATUSES as readonly string[]).includes(s));
      if (bad.length)
        throw badRequest(`Unknown status ${bad.join(', ')}; allowed: ${RUN_STATUSES.join(', ')}`, [
          { field: 'querystring.status', message: `must be one of ${RUN_STATUSES.join(', ')}` },
        ]);
      conditions.push(inArray(agentRuns.status, statuses));
    }
    if (query.type) conditions.push(eq(agentRuns.type, query.type));
    if (query.agentId) conditions.push(eq(agentRuns.agentId, query.agentId));
    if (query.q?.trim()) conditions.push(sql`${agentRuns.task} ilike ${`%${query.q.trim().replace(/[\\%_]/g, (c) => '\\' + c)}%`}`);
    const where = inScope(scope, agentRuns, ...conditions);
    const [items, counted] = await Promise.all([
      this.db
        .select()
        .from(agentRuns)
        .where(where)
        .orderBy(...orderBy(query.sort, RUN_SORT, '-createdAt', agentRuns.id))
        .limit(page.limit)
        .offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(agentRuns)
        .where(where),
    ]);
    return envelope(
      items.map((r) => publicRun(r)),
      counted[0]?.n ?? 0,
      page,
    );
  }

  /**
   * Cancels a QUEUED or RUNNING run: it is `canceled` at once (agent.run.finished, `done` on its
   * stream) and the instance executing it aborts the model call in flight. A finished run is 409.
   */
  async cancel(scope: Scope, id: string) {
    const now = this.deps.clock.now();
    const row = await transaction(this.db, async (tx) => {
      const [updated] = await tx
        .update(agentRuns)
        .set({
          status: 'canceled',
          finishedAt: now,
          leaseOwner: null,
          leaseUntil: null,
          summary: sql`coalesce(${agentRuns.summary}, 'Canceled.')`,
          error: `Canceled by ${scope.actor.type} ${scope.actor.id}`,
        })
        .where(inScope(scope, agentRuns, eq(agentRuns.id, id), inArray(agentRuns.status, ['QUEUED', 'RUNNING'])))
        .returning();
      if (!updated) return null;
      await this.ports.events.record(tx, finishedEvent(updated));
      return updated;
    });
    if (!row) {
      const existing = await this.getRunRow(scope, id);
      throw conflict(`Agent run ${existing.id} already ended (${existing.status})`);
    }
    await this.ports.bus.publish(AGENT_CANCEL, { runId: id });
    this.runner.abort(id);
    await publishDone(this.ports.bus, row);
    return publicRun(row, await this.steps.list(scope.orgId, id));
  }
}
