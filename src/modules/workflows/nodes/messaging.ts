import { Type } from 'typebox';
import { envelope, postSigned } from './signing.ts';
import { registerNode } from './registry.ts';
import { main, type Item } from './types.ts';

// Until channel integrations exist, a message goes out through a signed webhook (a gateway such
// as an SMS/WhatsApp bridge or a chat tool's incoming webhook receives `message.send`).
registerNode({
  type: 'messaging.send',
  category: 'messaging',
  description: 'Sends a message per item through a channel. Channel `webhook`: a signed POST (event `message.send`, payload { channel, to, text }) to `url`. In test mode nothing is sent (`dryRun: true`).',
  params: Type.Object({
    channel: Type.Literal('webhook'),
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    to: Type.String({ minLength: 1, maxLength: 320 }),
    text: Type.String({ minLength: 1, maxLength: 4096 }),
    secret: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  }, { additionalProperties: false }),
  outputs: ['main'],
  async execute(ctx, exec) {
    const out: Item[] = [];
    for (const [index, item] of exec.items.entries()) {
      const params = await exec.params(item);
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
