import { Type, Timestamp, Nullable, FreeObject } from '../../platform/http/schemas.ts';
import { CHANNELS } from './channel-types.ts';

const Literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

export const ChannelSchema = Type.String({ minLength: 1, maxLength: 20, description: `one of ${CHANNELS.join(', ')}` });

const Faq = Type.Array(
  Type.Object(
    { question: Type.String({ minLength: 1, maxLength: 500 }), answer: Type.String({ minLength: 1, maxLength: 4000 }) },
    { additionalProperties: false },
  ),
  { maxItems: 200 },
);

/** Every channel's settings; each channel accepts its own (checked by the channel). */
export const InboxConfigInput = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: '`api`: where outbound messages are delivered as signed webhooks' })),
    faq: Type.Optional(Faq),
    allowedOrigins: Type.Optional(Type.Array(Type.String({ maxLength: 300 }), { maxItems: 50 })),
    phoneNumberId: Type.Optional(Type.String({ maxLength: 100 })),
    address: Type.Optional(Type.String({ maxLength: 320 })),
    fromName: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const BotInput = Type.Object(
  {
    enabled: Type.Boolean(),
    agentId: Type.Optional(Type.String({ maxLength: 64 })),
    modelId: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const CredentialsInput = Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 4096 }), {
  maxProperties: 10,
  description: 'encrypted at rest, never returned',
});

export const InboxSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    channel: Type.String(),
    projectId: Type.String(),
    config: FreeObject("the channel's settings"),
    bot: Type.Object({ enabled: Type.Boolean(), agentId: Type.Optional(Type.String()), modelId: Type.Optional(Type.String()) }),
    inboundUrl: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    widgetSnippet: Type.Optional(Type.String({ description: '`web`: the HTML a site adds to embed the chat widget' })),
  },
  { $id: 'Inbox' },
);

export const ContactSchema = Type.Object({ id: Type.String(), name: Nullable(Type.String()), address: Type.String() });

export const ConversationSchema = Type.Object(
  {
    id: Type.String(),
    inboxId: Type.String(),
    channel: Type.String(),
    contact: ContactSchema,
    leadId: Type.Optional(Type.String()),
    subject: Type.Optional(Type.String()),
    status: Literals(['OPEN', 'CLOSED'] as const),
    handledBy: Literals(['bot', 'human'] as const),
    assigneeId: Type.Optional(Type.String()),
    handoffReason: Type.Optional(Type.String()),
    unreadCount: Type.Integer(),
    lastMessageAt: Timestamp,
    openedAt: Timestamp,
    closedAt: Type.Optional(Timestamp),
    resolvedBy: Type.Optional(Literals(['bot', 'human'] as const)),
  },
  { $id: 'Conversation' },
);

export const MessageSchema = Type.Object(
  {
    id: Type.String(),
    conversationId: Type.String(),
    direction: Literals(['in', 'out'] as const),
    sender: Literals(['contact', 'bot', 'human', 'campaign'] as const),
    text: Type.String(),
    mediaUrl: Type.Optional(Type.String()),
    private: Type.Boolean(),
    status: Literals(['received', 'queued', 'sent', 'delivered', 'read', 'failed'] as const),
    externalId: Type.Optional(Type.String()),
    error: Type.Optional(Type.String()),
    at: Timestamp,
  },
  { $id: 'Message' },
);

export const MessageText = Type.String({ minLength: 1, maxLength: 4096 });

/** A WhatsApp template message, sent instead of `text` (outside the 24-hour window only a template can be). */
export const MessageTemplateInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 512 }),
    language: Type.String({ minLength: 2, maxLength: 20, description: "the template's language code, e.g. `en_US`" }),
    components: Type.Optional(
      Type.Array(FreeObject('a template component as the WhatsApp Cloud API takes it (header, body, button parameters)'), { maxItems: 20 }),
    ),
  },
  { additionalProperties: false, description: 'instead of `text`: a pre-approved WhatsApp template' },
);
