import { Type } from 'typebox';
import type { Scope } from '../../../platform/context.ts';
import { derivedId } from '../../../platform/ids.ts';
import { envelope, postSigned } from './signing.ts';
import { registerNode } from './registry.ts';
import { main, type Item, type NodeContext } from './types.ts';

/** The earlier form: a signed POST to a gateway (an SMS/WhatsApp bridge, a chat tool's incoming webhook). */
const WebhookForm = Type.Object(
  {
    channel: Type.Literal('webhook'),
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    to: Type.String({ minLength: 1, maxLength: 320 }),
    text: Type.String({ minLength: 1, maxLength: 4096 }),
    secret: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);

/** Through an inbox (CONTRACT §8): to a lead or an address, text or (WhatsApp) a template. */
const InboxForm = Type.Object(
  {
    inboxId: Type.String({ minLength: 1, maxLength: 64 }),
    to: Type.Optional(Type.String({ maxLength: 320 })),
    leadId: Type.Optional(Type.String({ maxLength: 64 })),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    template: Type.Optional(
      Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 512 }),
          language: Type.String({ minLength: 1, maxLength: 20 }),
          components: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 20 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

function scopeOf(ctx: NodeContext): Scope {
  return { orgId: ctx.orgId, projectId: ctx.projectId, actor: { type: 'workflow', id: ctx.workflowId } };
}

/** Empty strings from expressions over missing fields mean "not given". */
const given = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value);

registerNode({
  type: 'messaging.send',
  category: 'messaging',
  description:
    'Sends a message per item. Through an inbox: { inboxId, to | leadId, text | template } — in the contact\'s open conversation or a new one, queued (sender `campaign`) and delivered by the inbox\'s channel, whose rules apply (422 CHANNEL_WINDOW_CLOSED, CHANNEL_CANNOT_INITIATE); emits { messageId, conversationId }. Earlier form { channel: "webhook", url, to, text, secret? }: a signed POST (event `message.send`, payload { channel, to, text }) to `url`. In test mode nothing is sent (`dryRun: true`).',
  params: Type.Union([InboxForm, WebhookForm]),
  outputs: ['main'],
  async execute(ctx, exec) {
    const out: Item[] = [];
    for (const [index, item] of exec.items.entries()) {
      const params = await exec.params(item);
      if ('inboxId' in params) {
        if (ctx.signal.aborted) throw new Error('canceled');
        const to = given(params.to);
        const leadId = given(params.leadId);
        const sent = await ctx.conversations.sendFromWorkflow(scopeOf(ctx), {
          inboxId: params.inboxId,
          ...(to !== undefined ? { to } : {}),
          ...(leadId !== undefined ? { leadId } : {}),
          ...(params.text !== undefined ? { text: params.text } : {}),
          ...(params.template ? { template: params.template } : {}),
          // The same (run, node, item) always names the same message: a re-executed step queues nothing new.
          messageId: derivedId('message', ctx.runId, [ctx.nodeId, String(index)]),
          workflowId: ctx.workflowId,
          dryRun: ctx.testMode,
        });
        out.push(sent as Item);
        continue;
      }
      const message = { channel: params.channel, to: params.to, text: params.text };
      const body = envelope(ctx, 'message.send', { ...message, runId: ctx.runId, workflowId: ctx.workflowId, nodeId: ctx.nodeId }, index);
      if (ctx.testMode) {
        out.push({ dryRun: true, ...message, url: params.url, event: 'message.send', body });
        continue;
      }
      const sent = await postSigned(ctx, { url: params.url, secret: params.secret, event: 'message.send', body });
      out.push({ ...message, sent: true, messageId: body.id, statusCode: sent.statusCode });
    }
    return main(out);
  },
});
