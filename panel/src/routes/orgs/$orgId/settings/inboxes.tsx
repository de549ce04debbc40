import { useState } from 'react';
import { createFileRoute, Link } from '@tanstack/react-router';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { inboxListQuery } from '../../../../queries/conversations';
import { compact, int, oneOf, PAGE, PAGE_SIZE } from '../../../../lib/list';
import { useRole } from '../../../../lib/account';
import { formatDate } from '../../../../lib/format';
import { useList } from '../../../../lib/use-list';
import { Badge } from '../../../../components/ui/page';
import { Table, Th, Td } from '../../../../components/ui/table';
import { Empty } from '../../../../components/ui/states';
import { noItems, QueryState } from '../../../../components/ui/query-state';
import { Pagination } from '../../../../components/ui/pagination';
import { Button } from '../../../../components/ui/button';
import { CopyText } from '../../../../components/settings/copy-text';
import { CreateInboxDialog, DeleteInboxDialog, EditInboxDialog } from '../../../../components/conversations/inbox-dialogs';
import { CHANNELS, channelLabel, type Inbox } from '../../../../components/conversations/model';

export const Route = createFileRoute('/orgs/$orgId/settings/inboxes')({
  validateSearch: (raw: Record<string, unknown>): { channel?: (typeof CHANNELS)[number]; page?: number } => {
    const page = int(raw.page, PAGE);
    return compact({ channel: oneOf(raw.channel, CHANNELS), page: page === PAGE ? undefined : page });
  },
  component: InboxesPage,
});

function InboxesPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { canWrite } = useRole(orgId);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Inbox | null>(null);
  const [removing, setRemoving] = useState<Inbox | null>(null);
  const { page, setSearch, setPage } = useList(search);

  const query = { page, pageSize: PAGE_SIZE, channel: search.channel };
  const inboxes = useQuery({
    ...inboxListQuery(orgId, query),
    placeholderData: keepPreviousData,
  });

  return (
    <div className="space-y-5">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h2 className="text-lg font-semibold text-slate-900">Inboxes</h2>
          <p className="mt-1 max-w-3xl text-sm text-slate-600">
            One inbox per channel account (your own system over the API, the web chat widget, WhatsApp, Telegram, e-mail). Its messages arrive in{' '}
            <Link to="/orgs/$orgId/conversations" params={{ orgId }} className="text-indigo-700 underline">
              Conversations
            </Link>
            ; credentials are encrypted and never shown again.
          </p>
        </div>
        {canWrite ? (
          <Button variant="primary" onClick={() => setCreating(true)}>
            New inbox
          </Button>
        ) : null}
      </div>
      <label className="inline-block text-sm">
        <span className="mb-1 block font-medium text-slate-700">Channel</span>
        <select
          value={search.channel ?? ''}
          onChange={(e) => setSearch({ channel: oneOf(e.target.value, CHANNELS) })}
          className="rounded-md px-3 py-1.5 ring-1 ring-slate-300"
        >
          <option value="">Any channel</option>
          {CHANNELS.map((c) => (
            <option key={c} value={c}>
              {channelLabel(c)}
            </option>
          ))}
        </select>
      </label>

      <QueryState
        query={inboxes}
        loading="Loading inboxes…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title={search.channel ? `No ${channelLabel(search.channel)} inboxes` : 'No inboxes yet'}>
            {canWrite ? 'Add one to receive and answer messages in Conversations.' : 'A member can add inboxes.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Inboxes">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Name</Th>
                  <Th>Channel</Th>
                  <Th>Bot</Th>
                  <Th>Inbound URL</Th>
                  <Th>Created</Th>
                  {canWrite ? (
                    <Th>
                      <span className="sr-only">Actions</span>
                    </Th>
                  ) : null}
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((inbox) => (
                  <tr key={inbox.id} className="hover:bg-slate-50">
                    <Td>
                      <Link
                        to="/orgs/$orgId/conversations"
                        params={{ orgId }}
                        search={{ inboxId: inbox.id }}
                        className="font-medium text-indigo-700 hover:underline"
                      >
                        {inbox.name}
                      </Link>
                      {inbox.channel === 'api' && typeof inbox.config.url === 'string' ? (
                        <p className="mt-0.5 max-w-xs truncate font-mono text-xs text-slate-500" title={inbox.config.url}>
                          → {inbox.config.url}
                        </p>
                      ) : null}
                    </Td>
                    <Td>{channelLabel(inbox.channel)}</Td>
                    <Td>
                      <Badge tone={inbox.bot.enabled ? 'violet' : 'slate'}>{inbox.bot.enabled ? 'On' : 'Off'}</Badge>
                    </Td>
                    <Td className="max-w-sm">
                      <CopyText label={`Inbound URL of ${inbox.name}`} value={inbox.inboundUrl} />
                    </Td>
                    <Td className="whitespace-nowrap">{formatDate(inbox.createdAt)}</Td>
                    {canWrite ? (
                      <Td className="text-right whitespace-nowrap">
                        <div className="flex justify-end gap-2">
                          <Button size="sm" onClick={() => setEditing(inbox)} aria-label={`Edit ${inbox.name}`}>
                            Edit
                          </Button>
                          <Button size="sm" variant="ghost" onClick={() => setRemoving(inbox)} aria-label={`Delete ${inbox.name}`}>
                            Delete
                          </Button>
                        </div>
                      </Td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </Table>
            <Pagination page={page} pageSize={PAGE_SIZE} total={data.total} onPage={setPage} />
          </>
        )}
      </QueryState>
      <CreateInboxDialog orgId={orgId} open={creating} onOpenChange={setCreating} />
      <EditInboxDialog
        orgId={orgId}
        inbox={editing}
        onOpenChange={(open) => {
          if (!open) setEditing(null);
        }}
      />
      <DeleteInboxDialog
        orgId={orgId}
        inbox={removing}
        onOpenChange={(open) => {
          if (!open) setRemoving(null);
        }}
      />
    </div>
  );
}
