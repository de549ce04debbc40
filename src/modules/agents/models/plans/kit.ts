/**
 * What every offline plan reads and writes: the state of a run's conversation (the tool calls so far
 * with their results), the turn a plan returns, and helpers over the tool results.
 */

export interface ToolResult {
  toolName: string;
  input: Record<string, unknown>;
  output: unknown;
}

export interface PlanState {
  agentType: string;
  task: string;
  input: Record<string, unknown>;
  /** Handoffs already made in this run. */
  handoffs: number;
  /** Tool names the model was offered. */
  tools: Set<string>;
  /** Every tool call of this conversation with its result, in order. */
  results: ToolResult[];
}

export interface Turn {
  reasoning?: string;
  text?: string;
  toolCalls?: { toolName: string; input: Record<string, unknown> }[];
}

export interface LeadLike {
  id: string;
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  company?: string | null;
  website?: string | null;
  source?: string | null;
  status?: string;
  score?: number | null;
  tags?: string[];
  custom?: Record<string, unknown>;
}

export const results = (s: PlanState, ...names: string[]) => s.results.filter((r) => names.includes(r.toolName));
export const ok = (r: ToolResult) => r.output !== null && typeof r.output === 'object' && !('error' in (r.output as object));
export const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
export const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

export function leadsFrom(list: ToolResult[]): LeadLike[] {
  const seen = new Map<string, LeadLike>();
  for (const r of list) {
    if (!ok(r)) continue;
    const out = r.output as { items?: LeadLike[]; id?: string };
    for (const lead of out.items ?? (out.id ? [out as LeadLike] : [])) seen.set(lead.id, lead);
  }
  return [...seen.values()];
}

export function reportOf(s: PlanState): { reportId: string } | undefined {
  const r = results(s, 'create_report').find(ok);
  return r ? (r.output as { reportId: string }) : undefined;
}

/** After the report: hand off when the input asks for it, else finish with the summary. */
export function closing(s: PlanState, summary: string): Turn {
  const to = str(s.input.handoffTo);
  if (to && to !== s.agentType && s.handoffs === 0 && s.tools.has('handoff') && results(s, 'handoff').length === 0) {
    return {
      reasoning: `The task continues with ${to}; handing the run over with what I found.`,
      toolCalls: [{ toolName: 'handoff', input: { to, task: str(s.input.handoffTask) ?? s.task, context: summary } }],
    };
  }
  return { text: summary };
}

export function reportFailed(s: PlanState): string | undefined {
  const failed = results(s, 'create_report').find((r) => !ok(r));
  return failed ? String((failed.output as { error?: unknown })?.error ?? 'unknown error') : undefined;
}

export interface LeadStats {
  total?: number;
  byStatus?: Record<string, number>;
  bySource?: Record<string, number>;
  averageScore?: number | null;
  createdLast7Days?: number;
  createdLast30Days?: number;
}

export function urlsOf(input: Record<string, unknown>): string[] {
  const list = [input.url, ...(Array.isArray(input.urls) ? input.urls : [])].filter((u): u is string => typeof u === 'string' && /^https?:\/\//.test(u));
  return [...new Set(list)].slice(0, 3);
}
