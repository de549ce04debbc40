import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { planTurn } from './offline-plans.ts';
import type { ToolResult, Turn } from './plans/kit.ts';

/** Provider options the agent loop passes to the offline model (`providerOptions.offline`). */
export interface OfflineOptions {
  agentType?: string;
  task?: string;
  input?: Record<string, unknown>;
  handoffs?: number;
}

/** Tokens are estimated at four characters each, so cost and budget logic work as with a real model. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function usage(inputTokens: number, outputTokens: number): LanguageModelV4Usage {
  return {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
  };
}

function outputValue(output: unknown): unknown {
  const o = output as { type?: string; value?: unknown };
  if (!o || typeof o !== 'object') return output;
  if (o.type === 'json' || o.type === 'error-json') return o.value;
  if (o.type === 'text' || o.type === 'error-text') {
    try {
      return JSON.parse(String(o.value));
    } catch {
      return { error: String(o.value) };
    }
  }
  return o.value ?? null;
}

/** The conversation's tool calls paired with their results. */
function toolResults(prompt: LanguageModelV4Prompt): ToolResult[] {
  const calls = new Map<string, { toolName: string; input: Record<string, unknown> }>();
  const out: ToolResult[] = [];
  for (const message of prompt) {
    if (message.role === 'assistant') {
      for (const part of message.content) {
        if (part.type === 'tool-call') {
          const input = typeof part.input === 'string' ? JSON.parse(part.input) : part.input;
          calls.set(part.toolCallId, { toolName: part.toolName, input: (input ?? {}) as Record<string, unknown> });
        }
      }
    } else if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        const call = calls.get(part.toolCallId);
        out.push({ toolName: part.toolName, input: call?.input ?? {}, output: outputValue(part.output) });
      }
    }
  }
  return out;
}

function textOf(prompt: LanguageModelV4Prompt, role: 'system' | 'user'): string {
  for (const m of prompt) {
    if (m.role !== role) continue;
    if (m.role === 'system') return m.content;
    return m.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
  }
  return '';
}

/**
 * `offline`: an AI SDK language model of our own that needs no network. Deterministic: from the
 * agent type and the tool results so far it decides the next tool calls (offline-plans.ts), so the
 * agent loop drives the real tools on the organization's data and ends with a templated summary.
 */
export class OfflineLanguageModel implements LanguageModelV4 {
  readonly specificationVersion = 'v4' as const;
  readonly provider = 'offline';
  readonly modelId = 'offline';
  readonly supportedUrls = {};

  private turn(options: LanguageModelV4CallOptions): { content: LanguageModelV4Content[]; turn: Turn; inputTokens: number; outputTokens: number } {
    const opts = (options.providerOptions?.offline ?? {}) as OfflineOptions;
    const system = textOf(options.prompt, 'system');
    const agentType = opts.agentType ?? /Agent type: ([A-Z_]+)/.exec(system)?.[1] ?? 'GENERAL';
    const task =
      opts.task ??
      textOf(options.prompt, 'user')
        .replace(/^Task:\s*/, '')
        .split('\n')[0] ??
      '';
    const tools = new Set((options.tools ?? []).map((t) => t.name));
    const turn = planTurn({ agentType, task, input: opts.input ?? {}, handoffs: opts.handoffs ?? 0, tools, results: toolResults(options.prompt) });
    const content: LanguageModelV4Content[] = [];
    if (turn.reasoning) content.push({ type: 'reasoning', text: turn.reasoning });
    if (turn.text) content.push({ type: 'text', text: turn.text });
    (turn.toolCalls ?? []).forEach((call, i) => {
      content.push({ type: 'tool-call', toolCallId: `offline_${options.prompt.length}_${i}`, toolName: call.toolName, input: JSON.stringify(call.input) });
    });
    const inputTokens = estimateTokens(JSON.stringify(options.prompt) + JSON.stringify(options.tools ?? []));
    const outputTokens = estimateTokens(JSON.stringify(content));
    return { content, turn, inputTokens, outputTokens };
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    options.abortSignal?.throwIfAborted();
    const { content, turn, inputTokens, outputTokens } = this.turn(options);
    return {
      content,
      finishReason: { unified: turn.toolCalls?.length ? 'tool-calls' : 'stop', raw: undefined },
      usage: usage(inputTokens, outputTokens),
      warnings: [],
    };
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    options.abortSignal?.throwIfAborted();
    const { content, turn, inputTokens, outputTokens } = this.turn(options);
    const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
    content.forEach((part, i) => {
      const id = String(i);
      if (part.type === 'reasoning')
        parts.push({ type: 'reasoning-start', id }, { type: 'reasoning-delta', id, delta: part.text }, { type: 'reasoning-end', id });
      else if (part.type === 'text') parts.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: part.text }, { type: 'text-end', id });
      else parts.push(part);
    });
    parts.push({
      type: 'finish',
      usage: usage(inputTokens, outputTokens),
      finishReason: { unified: turn.toolCalls?.length ? 'tool-calls' : 'stop', raw: undefined },
    });
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      start(controller) {
        for (const p of parts) controller.enqueue(p);
        controller.close();
      },
    });
    return { stream };
  }
}
