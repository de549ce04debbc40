import { useEffect, useId, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { conversationQuery, messagesQuery, useSendMessage } from '../../queries/conversations';
import { formatDateTime } from '../../lib/format';
import { Button } from '../ui/button';
import { ErrorState, FormError } from '../ui/states';
import { QueryState } from '../ui/query-state';
import { channelLabel, contactName, type Conversation, type Message } from './model';

/** The middle pane: the messages, oldest first, and the composer. Opening it marks it read (`onOpened`). */
export function Thread({
  orgId,
  conversationId,
  canWrite,
  onOpened,
  onClose,
}: {
  orgId: string;
  conversationId: string;
  canWrite: boolean;
  onOpened: () => void;
  onClose: () => void;
}) {
  const [pages, setPages] = useState(1);
  const conversation = useQuery(conversationQuery(orgId, conversationId));
  // A failed delivery reaches the organization stream as no event: while a reply waits to be sent,
  // the thread asks again now and then, so `sent` or `failed` (with its error) shows by itself.
  const messages = useQuery({
    ...messagesQuery(orgId, conversationId, pages),
    refetchInterval: (q) => (q.state.data?.items.some((m) => m.status === 'queued' && !m.private) ? 5_000 : false),
  });
  const log = useRef<HTMLDivElement>(null);
  const opened = useRef(onOpened);
  const count = messages.data?.items.length ?? 0;
  const lastId = messages.data?.items.at(-1)?.id;

  useEffect(() => {
    opened.current();
  }, [conversationId]);

  // The newest message in view when one arrives (not when earlier ones are loaded above).
  useEffect(() => {
    const el = log.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [lastId]);

  const c = conversation.data;
  return (
    <section aria-label="Thread" className="flex min-w-0 flex-1 flex-col border-x border-slate-200">
      <header className="flex items-center justify-between gap-3 border-b border-slate-200 px-4 py-3">
        <div className="min-w-0">
          <h2 className="truncate text-base font-semibold text-slate-900">{c ? contactName(c.contact) : 'Conversation'}</h2>
          {c ? (
            <p className="truncate text-xs text-slate-500">
              {channelLabel(c.channel)} · {c.contact.address}
              {c.subject ? ` · ${c.subject}` : ''}
            </p>
          ) : null}
        </div>
        <button type="button" className="rounded p-1 text-slate-500 hover:bg-slate-100" aria-label="Close conversation view" onClick={onClose}>
          ✕
        </button>
      </header>
      <div ref={log} role="log" aria-label="Messages" className="min-h-0 flex-1 space-y-3 overflow-y-auto bg-slate-50 px-4 py-4">
        <QueryState query={messages} loading="Loading messages…" retry>
          {(thread) => (
            <>
              {thread.total > count ? (
                <div className="text-center">
                  <button type="button" className="text-xs font-medium text-indigo-700 underline" onClick={() => setPages((p) => p + 1)}>
                    Show earlier messages ({thread.total - count} more)
                  </button>
                </div>
              ) : null}
              {count === 0 ? <p className="py-8 text-center text-sm text-slate-500">No messages yet.</p> : null}
              {thread.items.map((m) => (
                <MessageItem key={m.id} message={m} />
              ))}
            </>
          )}
        </QueryState>
      </div>
      {conversation.isError ? (
        <div className="p-3">
          <ErrorState error={conversation.error} />
        </div>
      ) : null}
      {c && canWrite ? <Composer orgId={orgId} conversation={c} /> : null}
      {c && !canWrite ? <p className="border-t border-slate-200 px-4 py-3 text-xs text-slate-500">Viewers read conversations; members answer them.</p> : null}
    </section>
  );
}

const SENDERS: Record<Message['sender'], string> = { contact: 'Contact', bot: 'Bot', human: 'Team', campaign: 'Campaign' };
const STATUS_TONES: Record<string, string> = {
  queued: 'text-amber-700',
  sent: 'text-slate-600',
  delivered: 'text-emerald-700',
  read: 'text-emerald-700',
  failed: 'text-red-700',
};

function MessageItem({ message: m }: { message: Message }) {
  const out = m.direction === 'out';
  const who = m.private ? 'Private note' : SENDERS[m.sender];
  const bubble = m.private
    ? 'border border-dashed border-amber-400 bg-amber-50 text-amber-950'
    : out
      ? 'bg-indigo-600 text-white'
      : 'bg-white text-slate-900 ring-1 ring-slate-200';
  return (
    <article aria-label={`${who}: ${m.text.slice(0, 80)}`} className={`flex flex-col ${out ? 'items-end' : 'items-start'}`}>
      <div className={`max-w-[80%] rounded-lg px-3 py-2 text-sm whitespace-pre-wrap break-words ${bubble}`}>
        {m.private ? <p className="mb-1 text-xs font-semibold tracking-wide text-amber-800 uppercase">Private note · not sent</p> : null}
        {m.text}
        {m.mediaUrl ? (
          <a href={m.mediaUrl} target="_blank" rel="noreferrer" className="mt-1 block text-xs underline">
            Attachment
          </a>
        ) : null}
      </div>
      <p className="mt-0.5 flex gap-1.5 text-xs text-slate-500">
        <span>{m.private ? SENDERS[m.sender] : who}</span>
        <span aria-hidden="true">·</span>
        <time dateTime={m.at}>{formatDateTime(m.at)}</time>
        {out && !m.private ? (
          <>
            <span aria-hidden="true">·</span>
            <span className={STATUS_TONES[m.status] ?? ''}>{m.status}</span>
          </>
        ) : null}
      </p>
      {m.status === 'failed' && m.error ? (
        <p role="note" className="mt-0.5 max-w-[80%] text-xs text-red-700">
          Not delivered: {m.error}
        </p>
      ) : null}
    </article>
  );
}

/** A reply (sent through the channel) or a private note (kept here, never sent). */
function Composer({ orgId, conversation: c }: { orgId: string; conversation: Conversation }) {
  const id = useId();
  const [mode, setMode] = useState<'reply' | 'note'>('reply');
  const [text, setText] = useState('');
  const send = useSendMessage(orgId, c.id, () => setText(''));
  const note = mode === 'note';
  const closed = c.status === 'CLOSED';
  const blocked = !note && closed;
  const submit = () => {
    const value = text.trim();
    if (!value || blocked || send.isPending) return;
    send.mutate({ text: value.slice(0, 4096), private: note });
  };
  return (
    <form
      className={`border-t border-slate-200 p-3 ${note ? 'bg-amber-50/60' : 'bg-white'}`}
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <div role="group" aria-label="Message kind" className="mb-2 flex gap-1">
        {(['reply', 'note'] as const).map((m) => (
          <button
            key={m}
            type="button"
            aria-pressed={mode === m}
            onClick={() => {
              setMode(m);
              send.reset();
            }}
            className={`rounded-md px-2.5 py-1 text-xs font-medium ${mode === m ? (m === 'note' ? 'bg-amber-200 text-amber-950' : 'bg-indigo-100 text-indigo-800') : 'text-slate-600 hover:bg-slate-100'}`}
          >
            {m === 'reply' ? 'Reply' : 'Private note'}
          </button>
        ))}
      </div>
      <label htmlFor={id} className="sr-only">
        {note ? 'Private note' : 'Reply'}
      </label>
      <textarea
        id={id}
        value={text}
        maxLength={4096}
        rows={3}
        disabled={blocked}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) {
            e.preventDefault();
            submit();
          }
        }}
        placeholder={blocked ? 'Reopen the conversation to reply' : note ? 'Only your team sees this' : `Reply to ${contactName(c.contact)}`}
        className="block w-full resize-y rounded-md border-0 px-3 py-2 text-sm text-slate-900 ring-1 ring-slate-300 ring-inset placeholder:text-slate-400 focus:ring-2 focus:ring-indigo-600 disabled:bg-slate-100"
      />
      <div className="mt-2 flex items-center justify-between gap-3">
        <p className="text-xs text-slate-500">
          {closed
            ? 'This conversation is closed: reopen it to reply (notes can still be added).'
            : note
              ? 'A private note is kept here and never sent to the contact.'
              : c.handledBy === 'bot'
                ? 'The bot handles this conversation: sending a reply takes it over.'
                : 'Ctrl+Enter sends.'}
        </p>
        <Button type="submit" variant="primary" size="sm" disabled={blocked || !text.trim() || send.isPending}>
          {note ? 'Add note' : c.handledBy === 'bot' ? 'Take over and send' : 'Send reply'}
        </Button>
      </div>
      <FormError error={send.error} />
    </form>
  );
}
