import { Type, ListEnvelope, ListQueryProps, Nullable, OrgParams, orgErrors } from '../../platform/http/schemas.ts';
import { ORG_ACCESS, routesPlugin } from '../../platform/http/plugin.ts';
import { orgOf } from '../../platform/context.ts';
import {
  BotInput,
  ChannelSchema,
  ConversationSchema,
  CredentialsInput,
  InboxConfigInput,
  InboxSchema,
  MessageSchema,
  MessageTemplateInput,
  MessageText,
} from './schemas.ts';
import type { ConversationsService } from './service.ts';

const read = { scope: 'conversations:read' };
const write = { scope: 'conversations:write' };
const IdParams = Type.Object({ orgId: Type.String({ maxLength: 64 }), id: Type.String({ maxLength: 64 }) });
const Paging = { page: ListQueryProps.page, pageSize: ListQueryProps.pageSize };
const Status = Type.Union([Type.Literal('OPEN'), Type.Literal('CLOSED')]);
const HandledBy = Type.Union([Type.Literal('bot'), Type.Literal('human')]);
const ShortId = Type.String({ maxLength: 64 });

export interface ConversationRoutesOptions {
  conversations: ConversationsService;
}

export const conversationRoutes = routesPlugin<ConversationRoutesOptions>('conversation-routes', [ORG_ACCESS], (app, { conversations }) => {
  app.addSchema(InboxSchema);
  app.addSchema(ConversationSchema);
  app.addSchema(MessageSchema);
  const inboxTags = ['Inboxes'];
  const tags = ['Conversations'];

  app.get(
    '/inboxes',
    {
      config: { access: read },
      schema: {
        tags: inboxTags,
        summary: 'List inboxes',
        params: OrgParams,
        querystring: Type.Object({ ...Paging, channel: Type.Optional(ChannelSchema) }, { additionalProperties: false }),
        response: { 200: ListEnvelope(Type.Ref('Inbox')), ...orgErrors() },
      },
    },
    async (request) => conversations.listInboxes(orgOf(request), request.query),
  );

  app.post(
    '/inboxes',
    {
      config: { access: write },
      schema: {
        tags: inboxTags,
        summary: 'Create an inbox; the secrets it generated are shown only here',
        params: OrgParams,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            channel: ChannelSchema,
            projectId: Type.Optional(Type.String({ maxLength: 64 })),
            config: Type.Optional(InboxConfigInput),
            credentials: Type.Optional(CredentialsInput),
            bot: Type.Optional(BotInput),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Object({ ...InboxSchema.properties, secrets: Type.Optional(Type.Record(Type.String(), Type.String())) }), ...orgErrors(422) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return conversations.createInbox(orgOf(request), request.body);
    },
  );

  app.get(
    '/inboxes/:id',
    {
      config: { access: read },
      schema: { tags: inboxTags, summary: 'Get an inbox', params: IdParams, response: { 200: Type.Ref('Inbox'), ...orgErrors() } },
    },
    async (request) => conversations.publicInbox(await conversations.inboxRow(orgOf(request), request.params.id)),
  );

  app.patch(
    '/inboxes/:id',
    {
      config: { access: write },
      schema: {
        tags: inboxTags,
        summary: 'Change an inbox (its channel stays)',
        params: IdParams,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            config: Type.Optional(InboxConfigInput),
            credentials: Type.Optional(CredentialsInput),
            bot: Type.Optional(BotInput),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Type.Ref('Inbox'), ...orgErrors() },
      },
    },
    async (request) => conversations.updateInbox(orgOf(request), request.params.id, request.body),
  );

  app.delete(
    '/inboxes/:id',
    {
      config: { access: write },
      schema: {
        tags: inboxTags,
        summary: 'Delete an inbox with its contacts, conversations and messages',
        params: IdParams,
        response: { 204: Type.Null(), ...orgErrors() },
      },
    },
    async (request, reply) => {
      await conversations.deleteInbox(orgOf(request), request.params.id);
      reply.code(204).send(null);
    },
  );

  app.post(
    '/inboxes/:id/messages',
    {
      config: { access: write },
      schema: {
        tags: inboxTags,
        summary: 'Post an inbound message to an `api` inbox (stored before the answer; a retried externalId answers the stored message with 200)',
        params: IdParams,
        body: Type.Object(
          {
            contact: Type.Object(
              {
                name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
                address: Type.String({
                  minLength: 1,
                  maxLength: 320,
                  description: 'the contact on your side: an e-mail address or phone number links it to a lead',
                }),
              },
              { additionalProperties: false },
            ),
            text: MessageText,
            externalId: Type.Optional(
              Type.String({ minLength: 1, maxLength: 200, description: 'your id for the message; retries with the same id are stored once' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Ref('Message'), 201: Type.Ref('Message'), ...orgErrors(422) },
      },
    },
    async (request, reply) => {
      const scope = orgOf(request);
      const inbox = await conversations.inboundInbox(scope, request.params.id);
      if (inbox.channel !== 'api') throw conversations.wrongChannel(inbox.channel);
      const { message, duplicate } = await conversations.receiveInbound(inbox, request.body);
      reply.code(duplicate ? 200 : 201);
      return message;
    },
  );

  app.get(
    '/conversations',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List conversations, most recent message first',
        params: OrgParams,
        querystring: Type.Object(
          {
            ...Paging,
            sort: ListQueryProps.sort,
            q: Type.Optional(Type.String({ maxLength: 200, description: "text in any of the conversation's messages" })),
            status: Type.Optional(Status),
            inboxId: Type.Optional(ShortId),
            channel: Type.Optional(ChannelSchema),
            handledBy: Type.Optional(HandledBy),
            assigneeId: Type.Optional(Type.String({ maxLength: 64, description: "a member's user id, or `none` for conversations nobody is assigned" })),
            leadId: Type.Optional(ShortId),
          },
          { additionalProperties: false },
        ),
        response: { 200: ListEnvelope(Type.Ref('Conversation')), ...orgErrors() },
      },
    },
    async (request) => conversations.list(orgOf(request), request.query),
  );

  app.post(
    '/conversations',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Start a conversation with a lead through an inbox; the first message is queued for sending',
        params: OrgParams,
        body: Type.Object(
          {
            inboxId: ShortId,
            leadId: ShortId,
            text: Type.Optional(MessageText),
            template: Type.Optional(MessageTemplateInput),
            subject: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('Conversation'), ...orgErrors(422) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return conversations.start(orgOf(request), request.body);
    },
  );

  app.get(
    '/conversations/stats',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'Conversation statistics over a period (default: the last 30 days)',
        params: OrgParams,
        querystring: Type.Object(
          {
            from: Type.Optional(
              Type.String({ minLength: 10, maxLength: 40, description: 'date (the whole day, UTC) or ISO 8601 timestamp; default: 30 days before to' }),
            ),
            to: Type.Optional(Type.String({ minLength: 10, maxLength: 40, description: 'date (included) or ISO 8601 timestamp (excluded); default: now' })),
            inboxId: Type.Optional(ShortId),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            opened: Type.Integer(),
            closed: Type.Integer(),
            closedByBot: Type.Integer(),
            handoffs: Type.Integer(),
            handoffReasons: Type.Record(Type.String(), Type.Integer()),
            medianFirstReplySec: Nullable(Type.Integer()),
            medianHandoffSec: Nullable(Type.Integer()),
          }),
          ...orgErrors(),
        },
      },
    },
    async (request) => conversations.stats(orgOf(request), request.query),
  );

  app.get(
    '/conversations/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'Get a conversation', params: IdParams, response: { 200: Type.Ref('Conversation'), ...orgErrors() } },
    },
    async (request) => conversations.get(orgOf(request), request.params.id),
  );

  app.get(
    '/conversations/:id/messages',
    {
      config: { access: read },
      schema: {
        tags,
        summary: "A conversation's messages, oldest first",
        params: IdParams,
        querystring: Type.Object(Paging, { additionalProperties: false }),
        response: { 200: ListEnvelope(Type.Ref('Message')), ...orgErrors() },
      },
    },
    async (request) => conversations.listMessages(orgOf(request), request.params.id, request.query),
  );

  app.post(
    '/conversations/:id/messages',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Reply as a person (queued for sending; in a bot-handled conversation this is a takeover), or add a private note (never sent)',
        params: IdParams,
        body: Type.Object(
          { text: Type.Optional(MessageText), template: Type.Optional(MessageTemplateInput), private: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('Message'), ...orgErrors(409, 422) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return conversations.reply(orgOf(request), request.params.id, request.body);
    },
  );

  app.post(
    '/conversations/:id/handoff',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Hand the conversation to people: the bot stops, the organization is notified',
        params: IdParams,
        body: Type.Object({ reason: Type.String({ minLength: 1, maxLength: 200 }), assigneeId: Type.Optional(ShortId) }, { additionalProperties: false }),
        response: { 200: Type.Ref('Conversation'), ...orgErrors() },
      },
    },
    async (request) => conversations.handoff(orgOf(request), request.params.id, request.body),
  );

  app.post(
    '/conversations/:id/assign',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Assign the conversation to a member (null: nobody)',
        params: IdParams,
        body: Type.Object({ assigneeId: Nullable(ShortId) }, { additionalProperties: false }),
        response: { 200: Type.Ref('Conversation'), ...orgErrors() },
      },
    },
    async (request) => conversations.assign(orgOf(request), request.params.id, request.body.assigneeId),
  );

  app.post(
    '/conversations/:id/read',
    {
      // A key needs conversations:write: it changes state (the key's unread counts). A viewer may still
      // mark what it has read: the marker is the viewer's own, not the organization's data.
      config: { access: { scope: 'conversations:write', write: false } },
      schema: {
        tags,
        summary: 'Mark the conversation read for the caller (its unreadCount becomes 0)',
        params: IdParams,
        response: { 200: Type.Ref('Conversation'), ...orgErrors() },
      },
    },
    async (request) => conversations.read(orgOf(request), request.params.id),
  );

  app.post(
    '/conversations/:id/close',
    {
      config: { access: write },
      schema: { tags, summary: 'Close the conversation', params: IdParams, response: { 200: Type.Ref('Conversation'), ...orgErrors() } },
    },
    async (request) => conversations.close(orgOf(request), request.params.id),
  );

  app.post(
    '/conversations/:id/reopen',
    {
      config: { access: write },
      schema: { tags, summary: 'Reopen a closed conversation', params: IdParams, response: { 200: Type.Ref('Conversation'), ...orgErrors(409) } },
    },
    async (request) => conversations.reopen(orgOf(request), request.params.id),
  );
});
