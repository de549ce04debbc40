import { useState } from 'react';
import { Popover } from 'radix-ui';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { notificationsQuery, unreadNotificationsQuery, useReadNotification } from '../queries/notifications';
import { useOrgEvents } from '../lib/stream';
import { panelPath } from '../lib/links';
import { relative } from '../lib/format';

/**
 * The bell: unread notifications of the signed-in user, live from the organization stream (a new
 * one appears without a reload), each marked read for this user only and leading to what it is about.
 */
export function NotificationBell({ orgId }: { orgId: string }) {
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [fresh, setFresh] = useState<string | null>(null);
  const list = useQuery(notificationsQuery(orgId));
  const unread = useQuery(unreadNotificationsQuery(orgId));
  useOrgEvents((type, data) => {
    if (type === 'notification') setFresh((data as { title?: string }).title ?? 'New notification');
  });
  const read = useReadNotification(orgId);
  const count = unread.data?.total ?? 0;
  return (
    <Popover.Root
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        if (next) setFresh(null);
      }}
    >
      <Popover.Trigger
        className="relative rounded-full p-2 text-slate-600 hover:bg-slate-100"
        aria-label={count ? `Notifications, ${count} unread` : 'Notifications'}
      >
        <svg viewBox="0 0 24 24" className="size-5" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true">
          <path d="M6 8a6 6 0 1 1 12 0c0 7 3 9 3 9H3s3-2 3-9" />
          <path d="M10.3 21a1.94 1.94 0 0 0 3.4 0" />
        </svg>
        {count ? (
          <span className="absolute -top-0.5 -right-0.5 min-w-5 rounded-full bg-red-600 px-1 text-center text-xs font-semibold text-white">
            {count > 99 ? '99+' : count}
          </span>
        ) : null}
      </Popover.Trigger>
      {fresh && !open ? (
        <span role="status" className="sr-only">
          {fresh}
        </span>
      ) : null}
      <Popover.Portal>
        <Popover.Content align="end" sideOffset={6} className="z-50 w-96 rounded-lg bg-white shadow-xl ring-1 ring-slate-200" aria-label="Notifications">
          <h2 className="border-b border-slate-200 px-4 py-2.5 text-sm font-semibold">Notifications</h2>
          <ul className="max-h-96 divide-y divide-slate-100 overflow-y-auto">
            {(list.data?.items ?? []).length === 0 ? <li className="px-4 py-6 text-center text-sm text-slate-500">Nothing yet.</li> : null}
            {(list.data?.items ?? []).map((n) => {
              const to = panelPath(orgId, n.link);
              return (
                <li key={n.id} className={n.read ? 'bg-white' : 'bg-indigo-50/50'}>
                  <button
                    type="button"
                    className="block w-full px-4 py-3 text-left hover:bg-slate-50"
                    onClick={() => {
                      if (!n.read) read.mutate(n.id);
                      setOpen(false);
                      if (to) void navigate({ href: to });
                    }}
                  >
                    <p className="text-sm font-medium text-slate-900">{n.title}</p>
                    <p className="mt-0.5 line-clamp-2 text-xs text-slate-600">{n.body}</p>
                    <p className="mt-1 text-xs text-slate-400">
                      {relative(n.createdAt)}
                      {n.read ? '' : ' · unread'}
                    </p>
                  </button>
                </li>
              );
            })}
          </ul>
        </Popover.Content>
      </Popover.Portal>
    </Popover.Root>
  );
}
