import { Type } from 'typebox';
import type { DraftRequest } from '../ports.ts';
import type { ToolDef } from './types.ts';

/** Present only when the content port is installed. */
export const createContentDraft: ToolDef = {
  name: 'create_draft',
  description:
    'Create a social media post draft (status DRAFT, to be approved by a person): platform (LINKEDIN, X, …), body, hashtags (each starting with #), optional scheduledAt (ISO 8601).',
  input: Type.Object(
    {
      platform: Type.String({ minLength: 1, maxLength: 32 }),
      body: Type.String({ minLength: 1, maxLength: 10_000 }),
      hashtags: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 100, pattern: '^#' }), { maxItems: 30 })),
      scheduledAt: Type.Optional(Type.String({ maxLength: 40 })),
    },
    { additionalProperties: false },
  ),
  available: (ports) => Boolean(ports.content),
  async execute(ctx, input) {
    const { content } = ctx;
    if (!content) return { error: 'Content drafts are not available' };
    // The input matched the tool's schema; the content service checks the platform and the rest.
    const post = await content.createDraft(ctx.leadScope, { ...input, ...(ctx.projectId ? { projectId: ctx.projectId } : {}) } as unknown as DraftRequest);
    return { postId: post.id, status: post.status ?? 'DRAFT', platform: post.platform ?? input.platform };
  },
};
