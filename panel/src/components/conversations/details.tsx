import { useId, useState, type ReactNode } from 'react';
import { Link } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { conversationQuery, useChangeConversation } from '../../queries/conversations';
import { membersQuery } from '../../queries/members';
import { formatDateTime } from '../../lib/format';
import { Button } from '../ui/button';
import { Modal } from '../ui/dialog';
import { SelectField, TextField } from '../ui/field';
import { Badge } from '../ui/page';
import { FormError } from '../ui/states';
import { QueryState } from '../ui/query-state';
import { channelLabel, contactName, type Conversation } from './model';

/** The right pane: who the contact is, the linked lead, the inbox, the assignee, hand-off, close and reopen. */
export function Details({
  orgId,
  conversationId,
  canWrite,
  inboxName,
}: {
  orgId: string;
  conversationId: string;
  canWrite: boolean;
  inboxName: (id: string) => string | undefined;
}) {
  const conversation = useQuery(conversationQuery(orgId, conversationId));
  const members = useQuery(membersQuery(orgId));
  const [handingOff, setHandingOff] = useState(false);
  const assigneeLabel = useId();
  const assign = useChangeConversation(orgId, conversationId);
  const status = useChangeConversation(orgId, conversationId);

  const memberName = (userId: string) => {
    const m = members.data?.find((x) => x.userId === userId);
    return m ? (m.name ?? m.email) : userId;
  };
  return (
    <aside aria-label="Details" className="w-72 shrink-0 overflow-y-auto p-4">
      <QueryState query={conversation}>
        {(c) => (
          <div className="space-y-5 text-sm">
            <dl className="space-y-3">
              <Item label="Contact">
                <p className="font-medium text-slate-900">{contactName(c.contact)}</p>
                {c.contact.name ? <p className="break-all text-slate-600">{c.contact.address}</p> : null}
              </Item>
              <Item label="Lead">
                {c.leadId ? (
                  <Link
                    to="/orgs/$orgId/leads"
                    params={{ orgId }}
                    search={{ lead: c.leadId, status: undefined, tags: undefined, minScore: undefined }}
                    className="font-medium text-indigo-700 underline"
                  >
                    Open lead
                  </Link>
                ) : (
                  <span className="text-slate-500">Not a lead (no e-mail or phone yet)</span>
                )}
              </Item>
              <Item label="Inbox">
                {inboxName(c.inboxId) ?? c.inboxId} <span className="text-slate-500">({channelLabel(c.channel)})</span>
              </Item>
              <Item label="Status">
                <span className="flex flex-wrap gap-1.5">
                  <Badge tone={c.status === 'OPEN' ? 'green' : 'slate'}>{c.status === 'OPEN' ? 'Open' : 'Closed'}</Badge>
                  <Badge tone={c.handledBy === 'bot' ? 'violet' : 'blue'}>{c.handledBy === 'bot' ? 'Handled by the bot' : 'Handled by a person'}</Badge>
                </span>
                {c.status === 'CLOSED' && c.closedAt ? (
                  <p className="mt-1 text-xs text-slate-500">
                    Closed {formatDateTime(c.closedAt)}
                    {c.resolvedBy ? ` by ${c.resolvedBy === 'bot' ? 'the bot' : 'a person'}` : ''}
                  </p>
                ) : null}
              </Item>
              {c.handoffReason ? <Item label="Handoff reason">{c.handoffReason}</Item> : null}
              <Item label="Opened">{formatDateTime(c.openedAt)}</Item>
            </dl>

            <div className="space-y-1">
              <label id={assigneeLabel} htmlFor={`${assigneeLabel}-select`} className="block text-xs font-medium tracking-wide text-slate-500 uppercase">
                Assignee
              </label>
              {canWrite ? (
                <select
                  id={`${assigneeLabel}-select`}
                  value={c.assigneeId ?? ''}
                  disabled={assign.isPending}
                  onChange={(e) => assign.mutate({ action: 'assign', assigneeId: e.target.value || null })}
                  className="block w-full rounded-md px-3 py-2 text-sm ring-1 ring-slate-300"
                >
                  <option value="">Unassigned</option>
                  {(members.data ?? []).map((m) => (
                    <option key={m.userId} value={m.userId}>
                      {m.name ?? m.email}
                    </option>
                  ))}
                  {c.assigneeId && members.data && !members.data.some((m) => m.userId === c.assigneeId) ? (
                    <option value={c.assigneeId}>{c.assigneeId}</option>
                  ) : null}
                </select>
              ) : (
                <p id={`${assigneeLabel}-select`}>{c.assigneeId ? memberName(c.assigneeId) : 'Unassigned'}</p>
              )}
              <FormError error={assign.error} />
            </div>

            {canWrite ? (
              <div className="space-y-2">
                <div className="flex flex-wrap gap-2">
                  {c.status === 'OPEN' ? <Button onClick={() => setHandingOff(true)}>Hand off</Button> : null}
                  {c.status === 'OPEN' ? (
                    <Button variant="primary" disabled={status.isPending} onClick={() => status.mutate({ action: 'close' })}>
                      Close
                    </Button>
                  ) : (
                    <Button variant="primary" disabled={status.isPending} onClick={() => status.mutate({ action: 'reopen' })}>
                      Reopen
                    </Button>
                  )}
                </div>
                <FormError error={status.error} />
              </div>
            ) : null}
            {canWrite ? (
              <HandoffDialog
                orgId={orgId}
                conversation={c}
                open={handingOff}
                onOpenChange={setHandingOff}
                memberOptions={(members.data ?? []).map((m) => ({ value: m.userId, label: m.name ?? m.email }))}
              />
            ) : null}
          </div>
        )}
      </QueryState>
    </aside>
  );
}

function Item({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <dt className="text-xs font-medium tracking-wide text-slate-500 uppercase">{label}</dt>
      <dd className="mt-0.5 text-slate-800">{children}</dd>
    </div>
  );
}

/** Hand the conversation to people: asks why (the reason is kept and counted in the statistics). */
function HandoffDialog({
  orgId,
  conversation: c,
  open,
  onOpenChange,
  memberOptions,
}: {
  orgId: string;
  conversation: Conversation;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  memberOptions: { value: string; label: string }[];
}) {
  const [reason, setReason] = useState('');
  const [assigneeId, setAssigneeId] = useState('');
  const handoff = useChangeConversation(orgId, c.id, () => {
    onOpenChange(false);
    setReason('');
    setAssigneeId('');
  });
  return (
    <Modal
      open={open}
      onOpenChange={(next) => {
        onOpenChange(next);
        if (!next) handoff.reset();
      }}
      title="Hand off to a person"
      description="The bot stops answering and the organization is notified."
    >
      <form
        className="space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          if (reason.trim()) handoff.mutate({ action: 'handoff', reason: reason.trim(), assigneeId: assigneeId || undefined });
        }}
      >
        <TextField label="Reason" value={reason} maxLength={200} required onChange={(e) => setReason(e.target.value)} placeholder="e.g. pricing question" />
        <SelectField
          label="Assign to"
          value={assigneeId}
          onChange={(e) => setAssigneeId(e.target.value)}
          options={[{ value: '', label: c.assigneeId ? 'Keep the current assignee' : 'Nobody yet' }, ...memberOptions]}
        />
        <FormError error={handoff.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => onOpenChange(false)}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={!reason.trim() || handoff.isPending}>
            Hand off
          </Button>
        </div>
      </form>
    </Modal>
  );
}
