import { queryOptions } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client';

export type Conversation = Schemas['Conversation'];
export type Message = Schemas['Message'];
export type Inbox = Schemas['Inbox'];

/** The channels of CONTRACT §8, with the names people know them by. */
export const CHANNELS = ['api', 'web', 'whatsapp', 'telegram', 'email'] as const;
export type ChannelName = (typeof CHANNELS)[number];
export const CHANNEL_LABELS: Record<string, string> = { api: 'API', web: 'Web chat', whatsapp: 'WhatsApp', telegram: 'Telegram', email: 'E-mail' };
export const channelLabel = (channel: string) => CHANNEL_LABELS[channel] ?? channel;

/** Every inbox of the organization, for names and the inbox filter (at most 100 are listed). */
export const inboxesQuery = (orgId: string) => queryOptions({
  queryKey: [orgId, 'inboxes', 'all'],
  queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/inboxes', { params: { path: { orgId }, query: { pageSize: 100 } } })),
  staleTime: 30_000,
});

/** The organization's members, for the assignee picker and names. */
export const membersQuery = (orgId: string) => queryOptions({
  queryKey: [orgId, 'members'],
  queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/members', { params: { path: { orgId } } })),
  staleTime: 60_000,
});

export const conversationQuery = (orgId: string, id: string) => queryOptions({
  queryKey: [orgId, 'conversations', 'one', id],
  queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/conversations/{id}', { params: { path: { orgId, id } } })),
});

export const THREAD_PAGE = 100;

/**
 * The latest `pages` × 100 messages of a conversation, oldest first (the API lists oldest first, so
 * the first answer gives the total and the last pages are read after it).
 */
export const messagesQuery = (orgId: string, id: string, pages: number) => queryOptions({
  queryKey: [orgId, 'conversations', 'messages', id, pages],
  queryFn: async () => {
    const get = (page: number) => unwrap(api.GET('/api/v1/orgs/{orgId}/conversations/{id}/messages', { params: { path: { orgId, id }, query: { page, pageSize: THREAD_PAGE } } }));
    const first = await get(1);
    const last = Math.max(1, Math.ceil(first.total / THREAD_PAGE));
    if (last === 1) return { items: first.items, total: first.total };
    const from = Math.max(1, last - pages + 1);
    const rest = await Promise.all(Array.from({ length: last - from + 1 }, (_, i) => from + i).map((p) => (p === 1 ? Promise.resolve(first) : get(p))));
    const seen = new Set<string>();
    const items = rest.flatMap((r) => r.items).filter((m) => !seen.has(m.id) && seen.add(m.id));
    return { items, total: first.total };
  },
});

/** Who a contact is, in one line. */
export const contactName = (c: Conversation['contact']) => c.name ?? c.address;

/** The conversation id an organization-stream event is about (conversation.message, message.*, conversation.*). */
export function conversationIdOf(data: unknown): string | undefined {
  const d = data as { conversationId?: string; conversation?: { id?: string }; payload?: { conversationId?: string; conversation?: { id?: string }; message?: { conversationId?: string } }; message?: { conversationId?: string } } | null;
  return d?.conversationId ?? d?.conversation?.id ?? d?.message?.conversationId ?? d?.payload?.conversationId ?? d?.payload?.conversation?.id ?? d?.payload?.message?.conversationId;
}
