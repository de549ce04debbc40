import type { UseQueryResult } from '@tanstack/react-query';
import { formatDateTime, relative } from '../../lib/format';
import { Empty } from '../ui/states';
import { noItems, QueryState } from '../ui/query-state';
import { channelLabel, contactName, type Conversation } from './model';

interface Page {
  items: Conversation[];
  total: number;
}

/** The left pane: the conversations matching the filters, most recent message first. */
export function ConversationList({
  list,
  filtered,
  selected,
  page,
  pageSize,
  inboxName,
  onPage,
  onOpen,
}: {
  list: UseQueryResult<Page>;
  filtered: boolean;
  selected: string | undefined;
  page: number;
  pageSize: number;
  inboxName: (id: string) => string | undefined;
  onPage: (page: number) => void;
  onOpen: (id: string) => void;
}) {
  const pages = Math.max(1, Math.ceil((list.data?.total ?? 0) / pageSize));
  return (
    <section aria-label="Conversation list" className="flex w-80 shrink-0 flex-col">
      <div className="min-h-0 flex-1 overflow-y-auto">
        <QueryState
          query={list}
          loading="Loading conversations…"
          retry
          errorClassName="p-3"
          isEmpty={noItems}
          empty={
            <div className="p-3">
              <Empty title={filtered ? 'No conversations match these filters' : 'No open conversations'}>
                {filtered ? 'Try another search or clear the filters.' : 'Messages from your inboxes appear here as they arrive.'}
              </Empty>
            </div>
          }
        >
          {(data) => (
            <ul aria-label="Conversations" className="divide-y divide-slate-100">
              {data.items.map((c) => (
                <Row key={c.id} conversation={c} inbox={inboxName(c.inboxId)} selected={c.id === selected} onOpen={() => onOpen(c.id)} />
              ))}
            </ul>
          )}
        </QueryState>
      </div>
      {list.data && list.data.total > pageSize ? (
        <nav aria-label="Pagination" className="flex items-center justify-between border-t border-slate-200 px-3 py-2 text-xs text-slate-600">
          <button type="button" className="rounded px-2 py-1 ring-1 ring-slate-300 disabled:opacity-40" disabled={page <= 1} onClick={() => onPage(page - 1)}>
            Previous
          </button>
          <span>
            Page {page} of {pages}
          </span>
          <button
            type="button"
            className="rounded px-2 py-1 ring-1 ring-slate-300 disabled:opacity-40"
            disabled={page >= pages}
            onClick={() => onPage(page + 1)}
          >
            Next
          </button>
        </nav>
      ) : null}
    </section>
  );
}

function Row({ conversation: c, inbox, selected, onOpen }: { conversation: Conversation; inbox: string | undefined; selected: boolean; onOpen: () => void }) {
  const name = contactName(c.contact);
  const unread = c.unreadCount > 0;
  return (
    <li>
      <button
        type="button"
        onClick={onOpen}
        aria-current={selected ? 'true' : undefined}
        aria-label={`${name}${unread ? `, ${c.unreadCount} unread` : ''}`}
        className={`block w-full px-3 py-2.5 text-left hover:bg-slate-50 ${selected ? 'bg-indigo-50 hover:bg-indigo-50' : ''}`}
      >
        <span className="flex items-baseline justify-between gap-2">
          <span className={`truncate text-sm ${unread ? 'font-semibold text-slate-900' : 'font-medium text-slate-800'}`}>{name}</span>
          <span className="shrink-0 text-xs text-slate-500" title={formatDateTime(c.lastMessageAt)}>
            {relative(c.lastMessageAt)}
          </span>
        </span>
        {c.contact.name ? <span className="block truncate text-xs text-slate-500">{c.contact.address}</span> : null}
        <span className="mt-1 flex items-center gap-1.5 text-xs">
          <span className="rounded bg-slate-100 px-1.5 py-0.5 text-slate-700">
            {channelLabel(c.channel)}
            {inbox ? ` · ${inbox}` : ''}
          </span>
          <span className={`rounded px-1.5 py-0.5 ${c.handledBy === 'bot' ? 'bg-violet-50 text-violet-700' : 'bg-sky-50 text-sky-700'}`}>
            {c.handledBy === 'bot' ? 'Bot' : 'Person'}
          </span>
          {c.status === 'CLOSED' ? <span className="rounded bg-slate-100 px-1.5 py-0.5 text-slate-500">Closed</span> : null}
          {unread ? (
            <span aria-label={`${c.unreadCount} unread`} className="ml-auto min-w-5 rounded-full bg-indigo-600 px-1.5 text-center font-semibold text-white">
              {c.unreadCount > 99 ? '99+' : c.unreadCount}
            </span>
          ) : null}
        </span>
      </button>
    </li>
  );
}
