import { AppError, badRequest } from '../../platform/errors.ts';
import type { Actor, Scope } from '../../platform/context.ts';
import { MAX_LENGTH, PLATFORMS, type Platform } from '../../shared/platforms.ts';
import type { ContentService, Post } from './service.ts';

/**
 * The part of the agents module generation needs (`services.agents.runInline`). The CONTENT_WRITER
 * agent's `create_draft` tool stores each draft through ContentService.createDraft with the run as
 * actor (`{ type: 'agent', id: agentRunId }`), so the drafts of a run are found by its id.
 */
export interface InlineAgentRunner {
  runInline(input: {
    orgId: string;
    projectId: string | null;
    type: 'CONTENT_WRITER';
    task: string;
    input: Record<string, unknown>;
    modelId?: string;
    actor?: Actor;
  }): Promise<{ agentRunId: string; status: string; summary: string | null; usage: Record<string, unknown>; output?: unknown }>;
}

export interface GenerateInput {
  projectId?: string;
  platforms: Platform[];
  topic: string;
  count: number;
  language: string;
  modelId?: string;
}

/** Ids the run reports in its output (`postIds`, or `drafts`/`posts` with ids), besides those it wrote as actor. */
function outputIds(output: unknown): string[] {
  if (!output || typeof output !== 'object') return [];
  const o = output as { postIds?: unknown; drafts?: unknown; posts?: unknown };
  const ids: string[] = [];
  if (Array.isArray(o.postIds)) ids.push(...o.postIds.filter((v): v is string => typeof v === 'string'));
  for (const list of [o.drafts, o.posts]) {
    if (Array.isArray(list)) for (const d of list) if (d && typeof (d as { id?: unknown }).id === 'string') ids.push((d as { id: string }).id);
  }
  return ids.filter((id) => id.startsWith('post_')).slice(0, 200);
}

export function generationTask(input: GenerateInput): string {
  const limits = input.platforms
    .map(
      (p) =>
        `${p} at most ${MAX_LENGTH[p]} characters${p === 'X' ? ' as X counts them (a link counts 23, emoji and CJK characters 2), hashtags included' : ''}`,
    )
    .join('; ');
  return [
    `Write ${input.count} distinct social media draft post${input.count === 1 ? '' : 's'} for each of these platforms: ${input.platforms.join(', ')}.`,
    `Language: ${input.language}. Topic: ${input.topic}`,
    `Save every draft with the create_draft tool (platform, body, hashtags each starting with #). Limits: ${limits}.`,
    `That is ${input.count * input.platforms.length} drafts in total; do not publish anything.`,
  ].join('\n');
}

/** POST …/content/generate: `count` drafts per platform through the CONTENT_WRITER agent. */
export async function generateDrafts(content: ContentService, agents: InlineAgentRunner | undefined, scope: Scope, input: GenerateInput, projectId: string) {
  const platforms = [...new Set(input.platforms)];
  const unknown = platforms.filter((p) => !(PLATFORMS as readonly string[]).includes(p));
  if (unknown.length)
    throw badRequest(`Unknown platform ${unknown.join(', ')}`, [{ field: 'body.platforms', message: `must be among ${PLATFORMS.join(', ')}` }]);
  if (!agents) throw new AppError(503, 'AGENTS_UNAVAILABLE', 'Content generation needs the agents module, which is not available in this build');
  const request = { ...input, platforms };
  const result = await agents.runInline({
    orgId: scope.orgId,
    projectId,
    type: 'CONTENT_WRITER',
    task: generationTask(request),
    input: {
      topic: input.topic,
      platforms,
      count: input.count,
      language: input.language,
      projectId,
      limits: Object.fromEntries(platforms.map((p) => [p, MAX_LENGTH[p]])),
    },
    ...(input.modelId ? { modelId: input.modelId } : {}),
    actor: scope.actor,
  });
  const items: Post[] = await content.byAgentRun(scope.orgId, result.agentRunId, outputIds(result.output));
  if (items.length === 0) {
    if (result.status === 'budget_exceeded') throw new AppError(429, 'BUDGET_EXCEEDED', result.summary || 'The budget does not allow this generation');
    if (result.status !== 'succeeded') throw new AppError(502, 'UPSTREAM', `The CONTENT_WRITER agent ended ${result.status}: ${result.summary ?? 'no drafts'}`);
  }
  return { agentRunId: result.agentRunId, status: result.status, summary: result.summary, usage: result.usage, items };
}
