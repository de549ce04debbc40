import type { Schemas } from '../../api/client';

export type Conversation = Schemas['Conversation'];
export type Message = Schemas['Message'];
export type Inbox = Schemas['Inbox'];

/** The channels of CONTRACT §8, with the names people know them by. */
export const CHANNELS = ['api', 'web', 'whatsapp', 'telegram', 'email'] as const;
export type ChannelName = (typeof CHANNELS)[number];
export const CHANNEL_LABELS: Record<string, string> = { api: 'API', web: 'Web chat', whatsapp: 'WhatsApp', telegram: 'Telegram', email: 'E-mail' };
export const channelLabel = (channel: string) => CHANNEL_LABELS[channel] ?? channel;

/** Who a contact is, in one line. */
export const contactName = (c: Conversation['contact']) => c.name ?? c.address;

/** The conversation id an organization-stream event is about (conversation.message, message.*, conversation.*). */
export function conversationIdOf(data: unknown): string | undefined {
  const d = data as {
    conversationId?: string;
    conversation?: { id?: string };
    payload?: { conversationId?: string; conversation?: { id?: string }; message?: { conversationId?: string } };
    message?: { conversationId?: string };
  } | null;
  return (
    d?.conversationId ??
    d?.conversation?.id ??
    d?.message?.conversationId ??
    d?.payload?.conversationId ??
    d?.payload?.conversation?.id ??
    d?.payload?.message?.conversationId
  );
}
