import { createFileRoute } from '@tanstack/react-router';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { conversationKeys, conversationsQuery, inboxesQuery, useMarkRead } from '../../../queries/conversations';
import { membersQuery } from '../../../queries/members';
import { listSearch, oneOf, str, type ListSearch } from '../../../lib/list';
import { useRole } from '../../../lib/account';
import { meQuery } from '../../../queries/account';
import { useOrgEvents } from '../../../lib/stream';
import { useList } from '../../../lib/use-list';
import { PageHeader } from '../../../components/ui/page';
import { Button } from '../../../components/ui/button';
import { SearchBox } from '../../../components/ui/search-box';
import { ConversationList } from '../../../components/conversations/conversation-list';
import { Thread } from '../../../components/conversations/thread';
import { Details } from '../../../components/conversations/details';
import { channelLabel, conversationIdOf } from '../../../components/conversations/model';

const SORTS = ['lastMessageAt', 'openedAt'] as const;
/** `status` in the URL: absent means the open ones (the queue); ALL lists the closed ones too. */
const STATUSES = ['OPEN', 'CLOSED', 'ALL'] as const;
const HANDLED_BY = ['bot', 'human'] as const;

interface ConversationsSearch extends ListSearch {
  status?: 'CLOSED' | 'ALL';
  inboxId?: string;
  handledBy?: (typeof HANDLED_BY)[number];
  /** `mine`, `none` (unassigned), or a member's user id; absent: anyone. */
  assigneeId?: string;
  /** The conversation open beside the list (notification links lead here). */
  conversation?: string;
}

export const Route = createFileRoute('/orgs/$orgId/conversations')({
  validateSearch: (raw: Record<string, unknown>): ConversationsSearch => {
    const status = oneOf(raw.status, STATUSES);
    return {
      ...listSearch(raw, SORTS),
      status: status === 'OPEN' ? undefined : status,
      inboxId: str(raw.inboxId),
      handledBy: oneOf(raw.handledBy, HANDLED_BY),
      assigneeId: str(raw.assigneeId),
      conversation: str(raw.conversation),
    };
  },
  component: ConversationsPage,
});

const select = 'rounded-md px-3 py-2 ring-1 ring-slate-300';

function ConversationsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { canWrite } = useRole(orgId);
  const queryClient = useQueryClient();
  const me = useQuery(meQuery);
  const inboxes = useQuery(inboxesQuery(orgId));
  const members = useQuery(membersQuery(orgId));
  const { page, pageSize, setSearch, setPage, clear } = useList(search);
  const myId = me.data?.user.id;

  const status = search.status ?? 'OPEN';
  const assigneeId = search.assigneeId === 'mine' ? myId : search.assigneeId;
  const query = {
    page,
    pageSize,
    sort: search.sort,
    q: search.q,
    status: status === 'ALL' ? undefined : status,
    inboxId: search.inboxId,
    handledBy: search.handledBy,
    assigneeId,
  } as const;
  const list = useQuery({
    ...conversationsQuery(orgId, query),
    placeholderData: keepPreviousData,
    enabled: search.assigneeId !== 'mine' || Boolean(myId),
  });

  const open = search.conversation;
  const read = useMarkRead(orgId);

  // Live: a new message, a receipt, a hand-off or a close refreshes the list and the open thread; a
  // new inbound message in the open conversation is read at once (it is on the screen).
  useOrgEvents((type, data) => {
    if (!/^(conversation\.|message\.)/.test(type) && type !== 'notification') return;
    void queryClient.invalidateQueries({ queryKey: conversationKeys.all(orgId) });
    const inbound =
      type === 'message.received' || (type === 'conversation.message' && (data as { message?: { direction?: string } } | null)?.message?.direction === 'in');
    if (open && inbound && conversationIdOf(data) === open) read.mutate(open);
  });

  const filtered = Boolean(search.q || search.status || search.inboxId || search.handledBy || search.assigneeId);
  const inboxName = (id: string) => inboxes.data?.items.find((i) => i.id === id)?.name;

  return (
    <div className="flex h-[calc(100vh-8.5rem)] min-h-[36rem] flex-col">
      <PageHeader title="Conversations" description="Every channel's threads in one place: answer, leave private notes, hand off from the bot and close." />
      <form role="search" aria-label="Filter conversations" className="mb-3 flex flex-wrap items-end gap-3" onSubmit={(e) => e.preventDefault()}>
        <SearchBox value={search.q} onSearch={(q) => setSearch({ q })} placeholder="Text in any message" className="min-w-48 flex-1" />
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Status</span>
          <select
            value={status}
            onChange={(e) => {
              const next = oneOf(e.target.value, STATUSES);
              setSearch({ status: next === 'OPEN' ? undefined : next });
            }}
            className={select}
          >
            <option value="OPEN">Open</option>
            <option value="CLOSED">Closed</option>
            <option value="ALL">All</option>
          </select>
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Inbox</span>
          <select value={search.inboxId ?? ''} onChange={(e) => setSearch({ inboxId: e.target.value || undefined })} className={`${select} max-w-56`}>
            <option value="">Any inbox</option>
            {(inboxes.data?.items ?? []).map((i) => (
              <option key={i.id} value={i.id}>
                {i.name} ({channelLabel(i.channel)})
              </option>
            ))}
            {search.inboxId && inboxes.data && !inboxName(search.inboxId) ? <option value={search.inboxId}>{search.inboxId}</option> : null}
          </select>
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Handled by</span>
          <select value={search.handledBy ?? ''} onChange={(e) => setSearch({ handledBy: oneOf(e.target.value, HANDLED_BY) })} className={select}>
            <option value="">Bot or person</option>
            <option value="bot">Bot</option>
            <option value="human">Person</option>
          </select>
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Assignee</span>
          <select value={search.assigneeId ?? ''} onChange={(e) => setSearch({ assigneeId: e.target.value || undefined })} className={`${select} max-w-56`}>
            <option value="">Anyone</option>
            <option value="mine">Mine</option>
            <option value="none">Unassigned</option>
            {(members.data ?? [])
              .filter((m) => m.userId !== myId)
              .map((m) => (
                <option key={m.userId} value={m.userId}>
                  {m.name ?? m.email}
                </option>
              ))}
            {search.assigneeId &&
            search.assigneeId !== 'mine' &&
            search.assigneeId !== 'none' &&
            members.data &&
            !members.data.some((m) => m.userId === search.assigneeId) ? (
              <option value={search.assigneeId}>{search.assigneeId}</option>
            ) : null}
          </select>
        </label>
        {filtered ? (
          <Button variant="ghost" onClick={() => clear({ conversation: search.conversation })}>
            Clear filters
          </Button>
        ) : null}
      </form>

      <div className="flex min-h-0 flex-1 overflow-hidden rounded-lg bg-white shadow-xs ring-1 ring-slate-200">
        <ConversationList
          list={list}
          filtered={filtered}
          selected={open}
          page={page}
          pageSize={pageSize}
          inboxName={inboxName}
          onPage={setPage}
          onOpen={(id) => setSearch({ conversation: id, page: search.page })}
        />
        {open ? (
          <>
            <Thread
              key={open}
              orgId={orgId}
              conversationId={open}
              canWrite={canWrite}
              onOpened={() => read.mutate(open)}
              onClose={() => setSearch({ conversation: undefined, page: search.page })}
            />
            <Details key={`details-${open}`} orgId={orgId} conversationId={open} canWrite={canWrite} inboxName={inboxName} />
          </>
        ) : (
          <div className="flex flex-1 items-center justify-center border-l border-slate-200 p-8 text-center text-sm text-slate-500">
            Choose a conversation to read it and answer.
          </div>
        )}
      </div>
    </div>
  );
}
