import { Type, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { principalKey } from '../auth/index.ts';
import { orgOf } from '../../platform/context.ts';
import type { Config } from '../../config.ts';
import type { SseStreams } from '../../platform/sse.ts';
import type { OrgStream } from './org-stream.ts';

export interface OrgStreamRoutesOptions {
  orgStream: OrgStream;
  config: Config;
  streams: SseStreams;
}

export const orgStreamRoutes = routesPlugin<OrgStreamRoutesOptions>('org-stream-routes', [ORG_ACCESS], (app, { orgStream, config, streams }) => {
  app.get(
    '/events',
    {
      config: { access: { scope: ['workflows:read', 'conversations:read'], write: false }, sse: true },
      schema: {
        tags: ['Streams'],
        summary:
          'Live organization stream (SSE): notification, approval.requested, conversation.message, run.status, agent.step and every platform event by its name. No replay.',
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }) }),
        querystring: Type.Object({
          access_token: Type.Optional(Type.String({ maxLength: 4096, description: 'access token for clients that cannot set headers' })),
        }),
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'text/event-stream' }), ...orgErrors() },
      },
    },
    async (request, reply) => {
      const ctx = orgOf(request);
      const userId = ctx.principal.kind === 'user' ? ctx.principal.userId : null;
      const stream = streams.open(request, reply, { credential: principalKey(ctx.principal), orgId: ctx.orgId }, { pingMs: config.ssePingMs });
      let seq = 0;
      const unsubscribe = orgStream.subscribe(ctx.orgId, (message) => {
        // A notification addressed to one user reaches only that user's sessions (and the organization's keys).
        if (message.userId && userId && message.userId !== userId) return;
        // A key bound to one project sees only that project's platform events.
        const projectId = (message.data as { projectId?: string } | null)?.projectId;
        if (ctx.projectId && projectId && projectId !== ctx.projectId) return;
        // ...and only its project's notifications, as in GET …/notifications (CONTRACT §2).
        if (ctx.projectId && message.kind === 'notification' && projectId !== ctx.projectId) return;
        stream.send(message.kind, message.data, ++seq);
      });
      stream.onClose(() => {
        unsubscribe();
      });
    },
  );
});
