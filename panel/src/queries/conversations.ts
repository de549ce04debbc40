/**
 * Conversations and inboxes: keys (`conversationKeys.all(orgId)` is what a change of a
 * conversation, a message sent or read, and the stream's conversation events make stale: the
 * lists, one conversation, its messages), queries and changes.
 */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type BodyOf, type QueryOf } from '../api/client';
import type { Conversation } from '../components/conversations/model';

export type ConversationListQuery = QueryOf<'/api/v1/orgs/{orgId}/conversations'>;
export type InboxListQuery = QueryOf<'/api/v1/orgs/{orgId}/inboxes'>;

export const conversationKeys = {
  all: (orgId: string) => [orgId, 'conversations'] as const,
  list: (orgId: string, query: ConversationListQuery) => [...conversationKeys.all(orgId), 'list', query] as const,
  detail: (orgId: string, id: string) => [...conversationKeys.all(orgId), 'one', id] as const,
  messages: (orgId: string, id: string, pages: number) => [...conversationKeys.all(orgId), 'messages', id, pages] as const,
};

export const inboxKeys = {
  all: (orgId: string) => [orgId, 'inboxes'] as const,
  every: (orgId: string) => [...inboxKeys.all(orgId), 'all'] as const,
  list: (orgId: string, query: InboxListQuery) => [...inboxKeys.all(orgId), 'list', query] as const,
};

export const conversationsQuery = (orgId: string, query: ConversationListQuery) =>
  queryOptions({
    queryKey: conversationKeys.list(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/conversations', { params: { path: { orgId }, query } })),
  });

export const conversationQuery = (orgId: string, id: string) =>
  queryOptions({
    queryKey: conversationKeys.detail(orgId, id),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/conversations/{id}', { params: { path: { orgId, id } } })),
  });

export const THREAD_PAGE = 100;

/**
 * The latest `pages` × 100 messages of a conversation, oldest first (the API lists oldest first, so
 * the first answer gives the total and the last pages are read after it).
 */
export const messagesQuery = (orgId: string, id: string, pages: number) =>
  queryOptions({
    queryKey: conversationKeys.messages(orgId, id, pages),
    queryFn: async () => {
      const get = (page: number) =>
        unwrap(api.GET('/api/v1/orgs/{orgId}/conversations/{id}/messages', { params: { path: { orgId, id }, query: { page, pageSize: THREAD_PAGE } } }));
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

/** Every inbox of the organization, for names and the inbox filter (at most 100 are listed). */
export const inboxesQuery = (orgId: string) =>
  queryOptions({
    queryKey: inboxKeys.every(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/inboxes', { params: { path: { orgId }, query: { pageSize: 100 } } })),
    staleTime: 30_000,
  });

export const inboxListQuery = (orgId: string, query: InboxListQuery) =>
  queryOptions({
    queryKey: inboxKeys.list(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/inboxes', { params: { path: { orgId }, query } })),
  });

/** Marks a conversation read (one's own read marker). */
export function useMarkRead(orgId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.POST('/api/v1/orgs/{orgId}/conversations/{id}/read', { params: { path: { orgId, id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: conversationKeys.all(orgId) }),
  });
}

export type ConversationChange =
  { action: 'assign'; assigneeId: string | null } | { action: 'close' } | { action: 'reopen' } | { action: 'handoff'; reason: string; assigneeId?: string };

/**
 * Assign, close, reopen or hand off: the conversation's entry is the answer, every conversation
 * query stale. `onDone` runs with the answer first (a dialog closes at once).
 */
export function useChangeConversation(orgId: string, id: string, onDone?: (updated: Conversation) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (change: ConversationChange) => {
      const params = { path: { orgId, id } };
      if (change.action === 'assign')
        return unwrap(api.POST('/api/v1/orgs/{orgId}/conversations/{id}/assign', { params, body: { assigneeId: change.assigneeId } }));
      if (change.action === 'handoff')
        return unwrap(
          api.POST('/api/v1/orgs/{orgId}/conversations/{id}/handoff', {
            params,
            body: { reason: change.reason, ...(change.assigneeId ? { assigneeId: change.assigneeId } : {}) },
          }),
        );
      return unwrap(
        change.action === 'close'
          ? api.POST('/api/v1/orgs/{orgId}/conversations/{id}/close', { params })
          : api.POST('/api/v1/orgs/{orgId}/conversations/{id}/reopen', { params }),
      );
    },
    onSuccess: async (updated) => {
      onDone?.(updated);
      queryClient.setQueryData(conversationKeys.detail(orgId, id), updated);
      await queryClient.invalidateQueries({ queryKey: conversationKeys.all(orgId) });
    },
  });
}

/** A reply or a private note; `onDone` runs first (the composer empties). */
export function useSendMessage(orgId: string, id: string, onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: { text: string; private: boolean }) =>
      unwrap(api.POST('/api/v1/orgs/{orgId}/conversations/{id}/messages', { params: { path: { orgId, id } }, body })),
    onSuccess: async () => {
      onDone();
      await queryClient.invalidateQueries({ queryKey: conversationKeys.all(orgId) });
    },
  });
}

type InboxBody = BodyOf<'/api/v1/orgs/{orgId}/inboxes', 'post'>;
const postInbox = (orgId: string, body: InboxBody) => unwrap(api.POST('/api/v1/orgs/{orgId}/inboxes', { params: { path: { orgId } }, body }));

/** A new inbox (its answer holds the secrets shown once); `onDone` runs first. */
export function useCreateInbox(orgId: string, onDone: (inbox: Awaited<ReturnType<typeof postInbox>>) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: InboxBody) => postInbox(orgId, body),
    onSuccess: async (inbox) => {
      onDone(inbox);
      await queryClient.invalidateQueries({ queryKey: inboxKeys.all(orgId) });
    },
  });
}

export function useUpdateInbox(orgId: string, onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: string; body: BodyOf<'/api/v1/orgs/{orgId}/inboxes/{id}', 'patch'> }) =>
      unwrap(api.PATCH('/api/v1/orgs/{orgId}/inboxes/{id}', { params: { path: { orgId, id } }, body })),
    onSuccess: async () => {
      onDone();
      await queryClient.invalidateQueries({ queryKey: inboxKeys.all(orgId) });
    },
  });
}

/** Deleting an inbox deletes its conversations: both areas are stale. */
export function useDeleteInbox(orgId: string, onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/orgs/{orgId}/inboxes/{id}', { params: { path: { orgId, id } } })),
    onSuccess: async () => {
      onDone();
      await queryClient.invalidateQueries({ queryKey: inboxKeys.all(orgId) });
      await queryClient.invalidateQueries({ queryKey: conversationKeys.all(orgId) });
    },
  });
}
