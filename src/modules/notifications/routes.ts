import { Type, Timestamp, Nullable, ListEnvelope, ListQueryProps, orgErrors } from '../../platform/http/schemas.ts';
import type { App } from '../../platform/http/types.ts';
import { orgOf, type OrgContext } from '../auth/guard.ts';

const NotificationSchema = Type.Object({
  id: Type.String(), kind: Type.String(), title: Type.String(), body: Type.String(), link: Nullable(Type.String()),
  userId: Nullable(Type.String()), read: Type.Boolean(), readAt: Nullable(Timestamp), createdAt: Timestamp,
}, { $id: 'Notification' });

// Notifications belong to people and integrations watching the organization: the same scopes as its stream.
const access = { scope: ['workflows:read', 'conversations:read'], write: false };
const tags = ['Notifications'];
const userOf = (ctx: OrgContext) => (ctx.principal.kind === 'user' ? ctx.principal.userId : null);

export function notificationRoutes(app: App): void {
  const { notifications, clock } = app.services;
  app.addSchema(NotificationSchema);

  app.get('/notifications', {
    config: { access },
    schema: {
      tags, summary: 'Notifications for the caller (organization-wide and their own), newest first',
      params: Type.Object({ orgId: Type.String() }),
      querystring: Type.Object({ ...ListQueryProps, unread: Type.Optional(Type.Boolean()), kind: Type.Optional(Type.String({ maxLength: 100 })) }, { additionalProperties: false }),
      response: { 200: ListEnvelope(Type.Ref('Notification')), ...orgErrors() },
    },
  }, async (request) => {
    const ctx = orgOf(request);
    return notifications.list(ctx.orgId, userOf(ctx), request.query);
  });

  app.post('/notifications/:id/read', {
    config: { access },
    schema: {
      tags, summary: 'Mark a notification read', params: Type.Object({ orgId: Type.String(), id: Type.String({ maxLength: 64 }) }),
      response: { 204: Type.Null(), ...orgErrors() },
    },
  }, async (request, reply) => {
    const ctx = orgOf(request);
    await notifications.markRead(ctx.orgId, userOf(ctx), request.params.id, clock.now());
    reply.code(204).send(null);
  });
}
