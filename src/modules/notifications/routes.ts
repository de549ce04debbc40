import { Type, Timestamp, Nullable, ListEnvelope, ListQueryProps, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import type { Clock } from '../../platform/clock.ts';
import type { NotificationsService } from './service.ts';

const NotificationSchema = Type.Object(
  {
    id: Type.String(),
    kind: Type.String(),
    title: Type.String(),
    body: Type.String(),
    link: Nullable(Type.String()),
    userId: Nullable(Type.String()),
    projectId: Nullable(Type.String({ description: 'the project it is about; null for organization-level ones' })),
    read: Type.Boolean({ description: 'read by the caller (each user and API key has its own read state)' }),
    readAt: Nullable(Timestamp),
    createdAt: Timestamp,
  },
  { $id: 'Notification' },
);

// Notifications belong to people and integrations watching the organization: the same scopes as its stream.
const access = { scope: ['workflows:read', 'conversations:read'], write: false };
const tags = ['Notifications'];

export interface NotificationRoutesOptions {
  notifications: NotificationsService;
  clock: Clock;
}

export const notificationRoutes = routesPlugin<NotificationRoutesOptions>('notification-routes', [ORG_ACCESS], (app, { notifications, clock }) => {
  app.addSchema(NotificationSchema);

  app.get(
    '/notifications',
    {
      config: { access },
      schema: {
        tags,
        summary: "Notifications for the caller (organization-wide and their own; for a key bound to a project, that project's), newest first",
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }) }),
        querystring: Type.Object(
          { ...ListQueryProps, unread: Type.Optional(Type.Boolean()), kind: Type.Optional(Type.String({ maxLength: 100 })) },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(Type.Ref('Notification')), ...orgErrors() },
      },
    },
    async (request) => {
      return notifications.list(orgOf(request), request.query);
    },
  );

  app.post(
    '/notifications/:id/read',
    {
      config: { access },
      schema: {
        tags,
        summary: 'Mark a notification read for the caller only',
        params: Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) }),
        response: { 204: Type.Null(), ...orgErrors() },
      },
    },
    async (request, reply) => {
      await notifications.markRead(orgOf(request), request.params.id, clock.now());
      reply.code(204).send(null);
    },
  );
});
