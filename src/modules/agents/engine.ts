import { generateText, jsonSchema, streamText, tool, type ModelMessage, type ToolSet } from 'ai';
import { eq, and } from 'drizzle-orm';
import { Value } from 'typebox/value';
import type { Deps } from '../../platform/deps.ts';
import { transaction } from '../../platform/db.ts';
import type { Bus } from '../../platform/bus.ts';
import { SpanKind } from '@opentelemetry/api';
import { AppError } from '../../platform/errors.ts';
import { recordModelUsage } from '../../platform/metrics.ts';
import { withSpan } from '../../platform/tracing.ts';
import { explainErrors } from '../../platform/http/validation.ts';
import type { BudgetScope } from '../budgets/index.ts';
import type { BudgetsPort, EventsPort, ToolPorts, UsagePort } from './ports.ts';
import { estimateTokens, type OfflineOptions } from './models/offline.ts';
import type { ModelRegistry, ResolvedModel } from './models/registry.ts';
import { runChannel, type NewStep, type RunMessage, type StepStore } from './steps.ts';
import { agentRuns } from './tables.ts';
import { handoffTool, TOOLS } from './tools/index.ts';
import { HANDOFF_TOOL, type ToolContext, type ToolDef } from './tools/types.ts';
import { AGENT_TYPES, type AgentTypeDef } from './catalog.ts';

export type RunRow = typeof agentRuns.$inferSelect;
export type FinalStatus = 'succeeded' | 'failed' | 'budget_exceeded' | 'max_steps' | 'canceled';
export const FINAL_STATUSES: readonly FinalStatus[] = ['succeeded', 'failed', 'budget_exceeded', 'max_steps', 'canceled'];

/** Abort reason when the instance shuts down: the run fails (it was not canceled by anyone). */
export const SHUTDOWN = Symbol('shutdown');
const MAX_HANDOFFS = 3;
const TOOL_OUTPUT_LIMIT = 64 * 1024;
/** Output tokens assumed for the next call when the run has seen no larger answer (budget checks). */
const OUTPUT_ESTIMATE_FLOOR = 512;

export interface EngineDeps {
  deps: Deps;
  models: ModelRegistry;
  usage: UsagePort;
  budgets: BudgetsPort;
  events: EventsPort;
  bus: Bus;
  steps: StepStore;
  /** What the tools reach in other modules. */
  tools: ToolPorts;
}

interface State {
  type: AgentTypeDef;
  messages: ModelMessage[];
  nextIndex: number;
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  maxOutputTokens: number;
  /** Estimated prompt tokens of the next call, and the ratio of the provider's counts to our estimates. */
  promptEstimate: number;
  inputRatio: number;
  reportId: string | null;
  handoffs: number;
  lastText: string | null;
  postIds: string[];
  qualifiedLeadIds: string[];
  approvalIds: string[];
  /** Leads the run scored (update_lead / qualify_lead), by id. */
  scored: Map<string, { id: string; score: number | null; scoreReason: string | null; status: string }>;
}

interface Ending {
  status: FinalStatus;
  summary: string;
  error?: string;
  exceeded?: { scope: BudgetScope; limitUsd: number; usedUsd: number };
}

interface ModelAnswer {
  text: string;
  reasoning: string;
  toolCalls: { toolCallId: string; toolName: string; input: unknown; invalid?: boolean; error?: unknown }[];
  assistant: ModelMessage[];
  inputTokens: number | undefined;
  outputTokens: number | undefined;
}

export function runUsage(row: RunRow) {
  return { inputTokens: row.inputTokens, outputTokens: row.outputTokens, costUsd: row.costUsd, modelId: row.modelId };
}

function errorText(error: unknown): string {
  if (error instanceof AppError) return error.message;
  const e = error as { message?: string; statusCode?: number; responseBody?: string };
  const status = e?.statusCode ? ` (HTTP ${e.statusCode})` : '';
  return `${e?.message ?? String(error)}${status}`.slice(0, 2000);
}

function plain(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

/**
 * The agent loop, the same for every provider: before each model call the step limit and the
 * budgets are checked; each call is one AI SDK call (streamed or not) with the type's tools and
 * records one usage row; every thinking, message, tool call, tool result, handoff and error is
 * stored as it happens and announced on the run's stream.
 */
export class AgentEngine {
  private readonly e: EngineDeps;

  constructor(engineDeps: EngineDeps) {
    this.e = engineDeps;
  }

  private get clock() {
    return this.e.deps.clock;
  }

  toolsOf(type: AgentTypeDef): ToolDef[] {
    // A conversation's bot writes no report.
    const names = type.conversational ? type.tools : [...type.tools, 'create_report'];
    return [...new Set(names)].map((n) => TOOLS[n]).filter((t): t is ToolDef => Boolean(t) && (!t!.available || t!.available(this.e.tools)));
  }

  private systemPrompt(run: RunRow, type: AgentTypeDef): string {
    return (
      `${type.instructions}\n\nAgent type: ${type.type}.${type.conversational ? '' : ` The report you write has type ${type.reportType}${type.alsoWrites ? ` (${type.alsoWrites.join(', ')} when input.reportType names it)` : ''}.`}` +
      (run.instructions ? `\n\nAdditional instructions:\n${run.instructions}` : '') +
      `\n\nToday is ${this.clock.now().toISOString().slice(0, 10)}.`
    );
  }

  private taskPrompt(task: string, input: Record<string, unknown>, projectId: string | null): string {
    return `Task: ${task}` + (Object.keys(input).length ? `\n\nInput (JSON):\n${JSON.stringify(input)}` : '') + (projectId ? `\n\nProject: ${projectId}` : '');
  }

  private sdkTools(state: State): ToolSet {
    const set: ToolSet = {};
    for (const t of this.toolsOf(state.type)) set[t.name] = tool({ description: t.description, inputSchema: jsonSchema(t.input as never) });
    // No agent hands over to a conversation's bot, and the bot's own `handoff` hands the conversation to people.
    const others = Object.keys(AGENT_TYPES).filter((k) => k !== state.type.type && !AGENT_TYPES[k]!.conversational);
    if (state.handoffs < MAX_HANDOFFS && others.length && !state.type.conversational) {
      set[HANDOFF_TOOL] = tool({
        description: `${handoffTool.description} Agent types: ${others.join(', ')}.`,
        inputSchema: jsonSchema(handoffTool.input as never),
      });
    }
    return set;
  }

  async execute(run: RunRow, signal: AbortSignal): Promise<RunRow> {
    const type = AGENT_TYPES[run.type];
    const state: State = {
      type: type!,
      messages: [{ role: 'user', content: this.taskPrompt(run.task, run.input, run.projectId) }],
      // A run executes once, from its start (an interrupted one is ended, not resumed).
      nextIndex: run.stepCount,
      modelCalls: 0,
      inputTokens: run.inputTokens,
      outputTokens: run.outputTokens,
      costUsd: run.costUsd,
      maxOutputTokens: 0,
      promptEstimate: 0,
      inputRatio: 1,
      reportId: run.reportId,
      handoffs: 0,
      lastText: null,
      postIds: [],
      qualifiedLeadIds: [],
      approvalIds: [],
      scored: new Map(),
    };
    let ending: Ending;
    try {
      if (!type) throw new AppError(422, 'AGENT_TYPE_UNKNOWN', `Unknown agent type ${run.type}`);
      const model = this.e.models.resolve(run.modelId);
      ending = await this.loop(run, state, model, signal);
    } catch (error) {
      ending = signal.aborted ? this.aborted(signal, state) : { status: 'failed', summary: state.lastText ?? 'The run failed.', error: errorText(error) };
    }
    if (ending.status === 'failed' || ending.status === 'budget_exceeded' || ending.status === 'max_steps') {
      await this.step(run, state, signal, { type: 'error', text: ending.error ?? ending.summary }).catch(() => {});
    }
    return this.finish(run, state, ending);
  }

  private aborted(signal: AbortSignal, state: State): Ending {
    if (signal.reason === SHUTDOWN) return { status: 'failed', summary: state.lastText ?? 'Interrupted.', error: 'The server shut down during the run' };
    return { status: 'canceled', summary: state.lastText ?? 'Canceled.' };
  }

  private async step(run: RunRow, state: State, signal: AbortSignal, step: NewStep): Promise<void> {
    // A canceled run writes nothing more (its final record was written by the cancel).
    if (signal.aborted && signal.reason !== SHUTDOWN) return;
    await this.e.steps.write(run, state.nextIndex++, this.clock.now(), step);
  }

  private async loop(run: RunRow, state: State, model: ResolvedModel, signal: AbortSignal): Promise<Ending> {
    for (;;) {
      if (signal.aborted) return this.aborted(signal, state);
      if (state.modelCalls >= run.maxSteps) {
        return {
          status: 'max_steps',
          summary: state.lastText ?? `Stopped after ${run.maxSteps} model calls.`,
          error: `Step limit reached: ${run.maxSteps} model calls`,
        };
      }
      const system = this.systemPrompt(run, state.type);
      const tools = this.sdkTools(state);
      const over = await this.budgetStop(run, state, system, tools);
      if (over) {
        return {
          status: 'budget_exceeded',
          summary: state.lastText ?? 'Stopped by the budget.',
          error: `Budget exceeded (${over.scope}): ${over.usedUsd} USD used of ${over.limitUsd} USD; the next model call would pass it`,
          exceeded: over,
        };
      }
      const answer = await withSpan(
        `chat ${model.modelId}`,
        SpanKind.CLIENT,
        { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model.modelId, 'agent.run.id': run.id },
        async (span) => {
          const result = await this.callModel(model, run, state, system, tools, signal);
          span?.setAttributes({ 'gen_ai.usage.input_tokens': result.inputTokens ?? 0, 'gen_ai.usage.output_tokens': result.outputTokens ?? 0 });
          return result;
        },
      );
      if (signal.aborted) return this.aborted(signal, state);
      state.modelCalls++;
      await this.recordUsage(run, state, model, answer);
      if (answer.reasoning) await this.step(run, state, signal, { type: 'thinking', text: answer.reasoning });
      if (answer.text) {
        state.lastText = answer.text;
        await this.step(run, state, signal, { type: 'message', text: answer.text });
      }
      if (answer.toolCalls.length === 0) return { status: 'succeeded', summary: answer.text || state.lastText || 'Done.' };
      state.messages.push(...answer.assistant);
      const handoff = await this.runTools(run, state, answer, signal);
      if (handoff) {
        const from = state.type.type;
        state.type = AGENT_TYPES[handoff.to]!;
        state.handoffs++;
        state.messages = [
          {
            role: 'user',
            content:
              `${this.taskPrompt(handoff.task, run.input, run.projectId)}\n\nHanded over by ${from}.${handoff.context ? `\nContext: ${handoff.context}` : ''}` +
              (state.reportId ? `\nReport already written: ${state.reportId}` : ''),
          },
        ];
      }
    }
  }

  private async callModel(model: ResolvedModel, run: RunRow, state: State, system: string, tools: ToolSet, signal: AbortSignal): Promise<ModelAnswer> {
    const providerOptions = model.offline
      ? { offline: { agentType: state.type.type, task: run.task, input: run.input, handoffs: state.handoffs } satisfies OfflineOptions as never }
      : undefined;
    const options = { model: model.model, system, messages: state.messages, tools, abortSignal: signal, maxRetries: 0, providerOptions };
    if (this.e.deps.config.modelStreaming) {
      const result = streamText({ ...options, onError: () => {} });
      for await (const part of result.fullStream) {
        if (part.type === 'error') throw part.error;
        if (part.type === 'abort') signal.throwIfAborted();
      }
      const [text, reasoning, toolCalls, usage, messages] = await Promise.all([
        result.text,
        result.reasoningText,
        result.toolCalls,
        result.usage,
        result.responseMessages,
      ]);
      return {
        text,
        reasoning: reasoning ?? '',
        toolCalls: toolCalls as ModelAnswer['toolCalls'],
        assistant: messages.filter((m) => m.role === 'assistant'),
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
      };
    }
    const result = await generateText(options);
    return {
      text: result.text,
      reasoning: result.reasoningText ?? '',
      toolCalls: result.toolCalls as ModelAnswer['toolCalls'],
      assistant: result.responseMessages.filter((m) => m.role === 'assistant'),
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
    };
  }

  /**
   * The next call's cost, estimated from the prompt size (system, messages and tool definitions, at
   * four characters a token, calibrated by the provider's own counts of the earlier calls) and the
   * largest answer of the run so far (at least OUTPUT_ESTIMATE_FLOOR tokens).
   */
  private async budgetStop(run: RunRow, state: State, system: string, tools: ToolSet): Promise<Ending['exceeded'] | null> {
    const limit = await this.e.budgets.limitOf(run.orgId);
    if (run.budgetUsd === null && limit === null) return null;
    state.promptEstimate = estimateTokens(
      system +
        JSON.stringify(state.messages) +
        JSON.stringify(Object.entries(tools).map(([name, t]) => [name, t.description, (t.inputSchema as { jsonSchema?: unknown }).jsonSchema])),
    );
    const next = this.e.usage.cost(run.modelId, Math.ceil(state.promptEstimate * state.inputRatio), Math.max(state.maxOutputTokens, OUTPUT_ESTIMATE_FLOOR));
    if (run.budgetUsd !== null && state.costUsd + next > run.budgetUsd) {
      return { scope: (run.budgetScope as BudgetScope | null) ?? 'agent', limitUsd: run.budgetUsd, usedUsd: state.costUsd };
    }
    if (limit !== null) {
      const status = await this.e.budgets.monthly(run.orgId);
      if (status.usedUsd + next > limit) return { scope: 'organization', limitUsd: limit, usedUsd: status.usedUsd };
    }
    return null;
  }

  /** One usage row per model call, and the run's running totals, in one transaction. */
  private async recordUsage(run: RunRow, state: State, model: ResolvedModel, answer: ModelAnswer): Promise<void> {
    const inputTokens = answer.inputTokens ?? estimateTokens(JSON.stringify(state.messages));
    const outputTokens = answer.outputTokens ?? estimateTokens(answer.text + answer.reasoning + JSON.stringify(answer.toolCalls));
    const costUsd = this.e.usage.cost(model.modelId, inputTokens, outputTokens);
    state.inputTokens += inputTokens;
    state.outputTokens += outputTokens;
    state.costUsd = Math.round((state.costUsd + costUsd) * 1e9) / 1e9;
    state.maxOutputTokens = Math.max(state.maxOutputTokens, outputTokens);
    if (answer.inputTokens && state.promptEstimate > 0) state.inputRatio = answer.inputTokens / state.promptEstimate;
    // The usage row and the run's totals in one statement.
    const { db } = this.e.deps;
    const usageRow = this.e.usage.recordCte(db, {
      orgId: run.orgId,
      projectId: run.projectId,
      modelId: model.modelId,
      agentRunId: run.id,
      agentType: run.type,
      workflowId: run.workflowId,
      workflowRunId: run.workflowRunId,
      inputTokens,
      outputTokens,
      costUsd,
    });
    await db
      .with(usageRow)
      .update(agentRuns)
      .set({
        inputTokens: state.inputTokens,
        outputTokens: state.outputTokens,
        costUsd: state.costUsd,
        modelCalls: run.modelCalls + state.modelCalls,
      })
      .where(eq(agentRuns.id, run.id));
    recordModelUsage(model.modelId, inputTokens, outputTokens, costUsd);
    if (costUsd > 0) await this.e.budgets.afterSpend(run.orgId);
  }

  private toolContext(run: RunRow, state: State, signal: AbortSignal): ToolContext {
    return {
      ...this.e.tools,
      orgId: run.orgId,
      projectId: run.projectId,
      agentRunId: run.id,
      agentType: state.type.type,
      workflowRunId: run.workflowRunId,
      input: run.input,
      leadScope: { orgId: run.orgId, projectId: run.projectId, actor: { type: 'agent', id: run.id } },
      signal,
      onReport: (id) => {
        state.reportId = id;
      },
    };
  }

  /** Runs the calls of one model answer in order; returns the handoff when one was made. */
  private async runTools(run: RunRow, state: State, answer: ModelAnswer, signal: AbortSignal): Promise<{ to: string; task: string; context?: string } | null> {
    const ctx = this.toolContext(run, state, signal);
    const available = new Map(this.toolsOf(state.type).map((t) => [t.name, t]));
    const parts: { type: 'tool-result'; toolCallId: string; toolName: string; output: { type: 'json'; value: never } }[] = [];
    let handoff: { to: string; task: string; context?: string } | null = null;
    for (const call of answer.toolCalls) {
      if (signal.aborted) break;
      const input = (call.input && typeof call.input === 'object' ? call.input : {}) as Record<string, unknown>;
      await this.step(run, state, signal, { type: 'tool_call', name: call.toolName, input: plain(input) });
      const started = performance.now();
      let output: unknown;
      if (call.toolName === HANDOFF_TOOL && !state.type.conversational) {
        const to = String(input.to ?? '');
        if (handoff) output = { error: 'Only one handoff per answer' };
        else if (!AGENT_TYPES[to] || to === state.type.type || AGENT_TYPES[to].conversational)
          output = {
            error: `Unknown agent type "${to}"; use one of ${Object.keys(AGENT_TYPES)
              .filter((k) => k !== state.type.type && !AGENT_TYPES[k]!.conversational)
              .join(', ')}`,
          };
        else if (state.handoffs >= MAX_HANDOFFS) output = { error: `At most ${MAX_HANDOFFS} handoffs per run` };
        else if (!Value.Check(handoffTool.input, input)) output = { error: 'handoff needs { to, task, context? }' };
        else {
          handoff = { to, task: String(input.task), context: typeof input.context === 'string' ? input.context : undefined };
          await this.step(run, state, signal, {
            type: 'handoff',
            name: to,
            input: { from: state.type.type, to, task: handoff.task, ...(handoff.context ? { context: handoff.context } : {}) },
          });
          output = { handedOffTo: to };
        }
      } else {
        output = await this.runTool(ctx, available.get(call.toolName), call, input, state);
      }
      let text = JSON.stringify(output ?? null);
      if (text.length > TOOL_OUTPUT_LIMIT) {
        output = { truncated: true, text: text.slice(0, TOOL_OUTPUT_LIMIT) };
        text = JSON.stringify(output);
      }
      await this.step(run, state, signal, { type: 'tool_result', name: call.toolName, output: text, durationMs: Math.round(performance.now() - started) });
      parts.push({ type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output: { type: 'json', value: plain(output) as never } });
    }
    if (parts.length) state.messages.push({ role: 'tool', content: parts });
    return handoff;
  }

  private async runTool(
    ctx: ToolContext,
    def: ToolDef | undefined,
    call: ModelAnswer['toolCalls'][number],
    input: Record<string, unknown>,
    state: State,
  ): Promise<unknown> {
    if (!def)
      return {
        error: `Tool "${call.toolName}" is not available to ${state.type.type}; available: ${this.toolsOf(state.type)
          .map((t) => t.name)
          .join(', ')}`,
      };
    if (!Value.Check(def.input, input)) {
      return { error: `Invalid input: ${explainErrors([...Value.Errors(def.input, input)], 'input', def.input).message}` };
    }
    try {
      const output = await def.execute(ctx, input);
      const o = output as Record<string, unknown> | null;
      if (call.toolName === 'create_draft' && typeof o?.postId === 'string') state.postIds.push(o.postId);
      if (call.toolName === 'qualify_lead' && typeof o?.id === 'string') state.qualifiedLeadIds.push(o.id);
      if (call.toolName === 'request_approval' && typeof o?.approvalId === 'string') state.approvalIds.push(o.approvalId);
      if ((call.toolName === 'qualify_lead' || call.toolName === 'update_lead') && typeof o?.id === 'string' && typeof o.score === 'number') {
        state.scored.set(o.id, { id: o.id, score: o.score, scoreReason: (o.scoreReason as string | null) ?? null, status: String(o.status) });
      }
      return plain(output);
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      return { error: errorText(error) };
    }
  }

  private output(state: State): Record<string, unknown> {
    const out: Record<string, unknown> = { text: state.lastText };
    if (state.reportId) out.reportId = state.reportId;
    if (state.postIds.length) out.postIds = state.postIds;
    if (state.qualifiedLeadIds.length) out.qualifiedLeadIds = state.qualifiedLeadIds;
    if (state.approvalIds.length) out.approvalIds = state.approvalIds;
    if (state.scored.size) {
      out.leads = [...state.scored.values()];
      // One lead scored (e.g. a workflow qualifying the lead of an event): its figures at the top.
      if (state.scored.size === 1) {
        const only = [...state.scored.values()][0]!;
        Object.assign(out, { leadId: only.id, score: only.score, scoreReason: only.scoreReason, leadStatus: only.status });
      }
    }
    if (state.lastText && /^\s*[{[]/.test(state.lastText)) {
      try {
        out.data = JSON.parse(state.lastText);
      } catch {
        // not JSON after all
      }
    }
    return out;
  }

  /**
   * Ends a RUNNING run: its final record, `agent.run.finished` (and `budget.exceeded`) in one
   * transaction, then `done` on its stream. A run already ended elsewhere (canceled) is left as is.
   */
  async finish(run: RunRow, state: State, ending: Ending): Promise<RunRow> {
    const now = this.clock.now();
    const finished = await transaction(this.e.deps.db, async (tx) => {
      const [row] = await tx
        .update(agentRuns)
        .set({
          status: ending.status,
          summary: ending.summary.slice(0, 20_000),
          error: ending.error ?? null,
          output: this.output(state),
          reportId: state.reportId,
          inputTokens: state.inputTokens,
          outputTokens: state.outputTokens,
          costUsd: state.costUsd,
          stepCount: state.nextIndex,
          finishedAt: now,
          leaseOwner: null,
          leaseUntil: null,
        })
        .where(and(eq(agentRuns.id, run.id), eq(agentRuns.status, 'RUNNING')))
        .returning();
      if (!row) return null;
      await this.e.events.record(tx, finishedEvent(row));
      if (ending.exceeded) {
        await this.e.budgets.exceeded(
          {
            orgId: row.orgId,
            projectId: row.projectId,
            scope: ending.exceeded.scope,
            limitUsd: ending.exceeded.limitUsd,
            usedUsd: ending.exceeded.usedUsd,
            runId: ending.exceeded.scope === 'workflow' && row.workflowRunId ? row.workflowRunId : row.id,
            agentRunId: row.id,
            workflowRunId: row.workflowRunId ?? undefined,
          },
          tx,
        );
        // Stopped by the monthly budget on its estimate: the month's 80 % (or 100 %) alert that the
        // spending reaches, if it has not gone out yet (nothing when it has).
        if (ending.exceeded.scope === 'organization') await this.e.budgets.alertReached(tx, row.orgId, ending.exceeded.limitUsd, ending.exceeded.usedUsd);
      }
      return row;
    });
    if (!finished) {
      const [current] = await this.e.deps.db.select().from(agentRuns).where(eq(agentRuns.id, run.id));
      return current!;
    }
    await publishDone(this.e.bus, finished);
    return finished;
  }
}

export function finishedEvent(row: RunRow) {
  const payload: Record<string, unknown> = {
    agentRunId: row.id,
    type: row.type,
    status: row.status,
    summary: row.summary,
    usage: runUsage(row),
  };
  if (row.reportId) payload.reportId = row.reportId;
  if (row.workflowRunId) payload.workflowRunId = row.workflowRunId;
  if (row.agentId) payload.agentId = row.agentId;
  return { orgId: row.orgId, projectId: row.projectId, type: 'agent.run.finished', payload };
}

export async function publishDone(bus: Bus, row: RunRow): Promise<void> {
  await bus.publish(runChannel(row.id), {
    kind: 'done',
    run: { id: row.id, status: row.status, summary: row.summary, usage: runUsage(row) },
  } satisfies RunMessage);
}
