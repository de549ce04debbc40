import { Type } from 'typebox';
import type { Scope } from '../../../platform/context.ts';
import { registerNode } from './registry.ts';
import { main, type Item, type NodeContext } from './types.ts';

/** A workflow acts in its whole organization; its project is only the default for new drafts. */
function scopeOf(ctx: NodeContext): Scope {
  return { orgId: ctx.orgId, projectId: null, actor: { type: 'workflow', id: ctx.workflowId } };
}

/** Empty strings from expressions over missing fields mean "not given". */
function given<T extends Record<string, unknown>>(params: T): T {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== '' && v !== null && v !== undefined)) as T;
}

const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as Item;

registerNode({
  type: 'content.createDraft',
  category: 'content',
  description:
    'Creates a draft post per item (platform LINKEDIN or X, body, hashtags with #, optional scheduledAt, integrationId, mediaIds) — the same rules as POST …/content; emits the drafts.',
  params: Type.Object(
    {
      platform: Type.Union([Type.Literal('LINKEDIN'), Type.Literal('X')]),
      body: Type.String({ minLength: 1, maxLength: 10_000 }),
      hashtags: Type.Optional(Type.Array(Type.String({ minLength: 2, maxLength: 100 }), { maxItems: 30 })),
      scheduledAt: Type.Optional(Type.String({ maxLength: 40 })),
      integrationId: Type.Optional(Type.String({ maxLength: 64 })),
      mediaIds: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 20 })),
      projectId: Type.Optional(Type.String({ maxLength: 64 })),
    },
    { additionalProperties: false },
  ),
  outputs: ['main'],
  async execute(ctx, exec) {
    const out: Item[] = [];
    for (const item of exec.items) {
      const params = given(await exec.params(item));
      out.push(plain(await ctx.content.createDraft(scopeOf(ctx), { ...params, projectId: params.projectId ?? ctx.projectId ?? undefined })));
    }
    return main(out);
  },
});

registerNode({
  type: 'content.publish',
  category: 'content',
  description:
    "Publishes a post per item (`postId`, default the item's `id`) through its integration (`integrationId` is used when the post has none); a DRAFT is approved by the workflow first. Emits the post (PUBLISHING; post.published or post.failed follow). In test mode nothing is sent or changed: emits the request that would be sent, with `dryRun: true`.",
  params: Type.Object(
    {
      postId: Type.Optional(Type.String({ maxLength: 64 })),
      integrationId: Type.Optional(Type.String({ maxLength: 64, description: 'integration to publish through when the post has none' })),
    },
    { additionalProperties: false },
  ),
  outputs: ['main'],
  async execute(ctx, exec) {
    const out: Item[] = [];
    for (const item of exec.items) {
      const { postId, integrationId } = given(await exec.params(item));
      const id = postId ?? (typeof item.id === 'string' ? item.id : undefined);
      if (!id) throw new Error('content.publish: no postId param and the item has no id');
      if (ctx.testMode) {
        out.push(plain({ dryRun: true, ...(await ctx.content.previewPublish(scopeOf(ctx), id, integrationId)) }));
        continue;
      }
      if (integrationId) {
        const post = await ctx.content.get(scopeOf(ctx), id);
        if (!post.integrationId) await ctx.content.update(scopeOf(ctx), id, { integrationId });
      }
      out.push(plain(await ctx.content.publishNow(scopeOf(ctx), id, { approveDraft: true })));
    }
    return main(out);
  },
});
