import { Type } from 'typebox';
import { peerWith } from '../peers.ts';
import type { ToolDef } from './types.ts';

interface ContentPeer {
  createDraft(scope: unknown, input: Record<string, unknown>): Promise<{ id: string; status?: string; platform?: string }>;
}

/** Present only when the content module provides services.content.createDraft. */
export const createContentDraft: ToolDef = {
  name: 'create_draft',
  description: 'Create a social media post draft (status DRAFT, to be approved by a person): platform (LINKEDIN, X, …), body, hashtags (each starting with #), optional scheduledAt (ISO 8601).',
  input: Type.Object({
    platform: Type.String({ minLength: 1, maxLength: 32 }),
    body: Type.String({ minLength: 1, maxLength: 10_000 }),
    hashtags: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 100, pattern: '^#' }), { maxItems: 30 })),
    scheduledAt: Type.Optional(Type.String({ maxLength: 40 })),
  }, { additionalProperties: false }),
  available: (ctx) => Boolean(peerWith<ContentPeer>(ctx.peers, 'content', 'createDraft')),
  async execute(ctx, input) {
    const content = peerWith<ContentPeer>(ctx.peers, 'content', 'createDraft');
    if (!content) return { error: 'Content drafts are not available' };
    const post = await content.createDraft(ctx.leadScope, { ...input, ...(ctx.projectId ? { projectId: ctx.projectId } : {}) });
    return { postId: post.id, status: post.status ?? 'DRAFT', platform: post.platform ?? input.platform };
  },
};
