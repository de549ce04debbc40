import { useEffect, useState } from 'react';
import { createFileRoute } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import type { Schemas } from '../../../api/client';
import { compact, oneOf, str } from '../../../lib/list';
import { useList } from '../../../lib/use-list';
import { invitationsQuery, membersQuery, useChangeRole, useRemoveMember, useRevokeInvitation } from '../../../queries/members';
import { useRole } from '../../../lib/account';
import { meQuery } from '../../../queries/account';
import { formatDate } from '../../../lib/format';
import { PageHeader, Badge } from '../../../components/ui/page';
import { Table, Th, SortTh, Td } from '../../../components/ui/table';
import { Empty, FormError } from '../../../components/ui/states';
import { QueryState } from '../../../components/ui/query-state';
import { Button } from '../../../components/ui/button';
import { Modal } from '../../../components/ui/dialog';
import { InviteDialog } from '../../../components/members/invite-dialog';
import { aRole, assignableRoles, roleLabel, ROLES, type MemberRole } from '../../../components/members/roles';
import { sortRows } from '../../../components/settings/sort';

const SORTS = ['name', 'email', 'role', 'createdAt'] as const;
const DEFAULT_SORT = 'name';
const ROLE_VALUES = ROLES.map((r) => r.value);
const ROLE_RANK: Record<string, number> = Object.fromEntries(ROLES.map((r, i) => [r.value, i]));

export const Route = createFileRoute('/orgs/$orgId/members')({
  validateSearch: (raw: Record<string, unknown>): { q?: string; role?: MemberRole; sort?: string } => {
    const sort = str(raw.sort);
    return compact({
      q: str(raw.q),
      role: oneOf(raw.role, ROLE_VALUES),
      sort: sort && sort !== DEFAULT_SORT && (SORTS as readonly string[]).includes(sort.replace(/^-/, '')) ? sort : undefined,
    });
  },
  component: MembersPage,
});

type Member = Schemas['Member'];

function MembersPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const { role: myRole, canAdmin } = useRole(orgId);
  const me = useQuery(meQuery);
  const [inviting, setInviting] = useState(false);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  // Fresh on opening the page (elsewhere the members are names, kept a minute).
  const members = useQuery({ ...membersQuery(orgId), staleTime: 0 });
  const changeRole = useChangeRole<Member>(orgId, (updated) => setNotice(`${updated.name ?? updated.email} is now ${aRole(updated.role)}.`));
  const { setSearch } = useList(search);
  const [text, setText] = useState(search.q ?? '');
  // The search box writes to the URL a moment after typing stops.
  useEffect(() => {
    const timer = setTimeout(() => {
      if ((search.q ?? '') !== text.trim()) setSearch({ q: text.trim() || undefined });
    }, 250);
    return () => clearTimeout(timer);
  });

  const sort = search.sort ?? DEFAULT_SORT;
  const q = search.q?.toLowerCase();
  const filtered = (members.data ?? []).filter(
    (m) => (!search.role || m.role === search.role) && (!q || m.email.toLowerCase().includes(q) || (m.name ?? '').toLowerCase().includes(q)),
  );
  const rows = sortRows(filtered, sort, {
    name: (m) => m.name ?? m.email,
    email: (m) => m.email,
    role: (m) => ROLE_RANK[m.role] ?? 9,
    createdAt: (m) => m.createdAt,
  });
  const onSort = (next: string) => setSearch({ sort: next === DEFAULT_SORT ? undefined : next });
  // Only an owner changes an owner (the API refuses others with 403).
  const canManage = (m: Member) => canAdmin && (m.role !== 'owner' || myRole === 'owner');

  return (
    <div>
      <PageHeader
        title="Members"
        description="Who works in this organization and what they may do. Viewers read only; owners and admins manage members, API keys and webhooks."
        actions={
          canAdmin ? (
            <Button variant="primary" onClick={() => setInviting(true)}>
              Invite member
            </Button>
          ) : null
        }
      />
      <form role="search" className="mb-4 flex flex-wrap items-end gap-3" onSubmit={(e) => e.preventDefault()}>
        <label className="flex-1 text-sm">
          <span className="mb-1 block font-medium text-slate-700">Search</span>
          <input
            type="search"
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder="Name or e-mail"
            className="w-full rounded-md px-3 py-2 ring-1 ring-slate-300"
          />
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-700">Role</span>
          <select
            value={search.role ?? ''}
            onChange={(e) => setSearch({ role: oneOf(e.target.value, ROLE_VALUES) })}
            className="rounded-md px-3 py-2 ring-1 ring-slate-300"
          >
            <option value="">Any role</option>
            {ROLES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
      </form>
      {notice ? (
        <p role="status" className="mb-3 rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
          {notice}
        </p>
      ) : null}
      <FormError error={changeRole.error} />

      <QueryState
        query={members}
        loading="Loading members…"
        retry
        isEmpty={() => rows.length === 0}
        empty={<Empty title="No members match these filters">Try another search or role.</Empty>}
      >
        {() => (
          <Table label="Members">
            <thead className="bg-slate-50">
              <tr>
                <SortTh field="name" label="Name" sort={sort} onSort={onSort} />
                <SortTh field="email" label="Email" sort={sort} onSort={onSort} />
                <SortTh field="role" label="Role" sort={sort} onSort={onSort} />
                <SortTh field="createdAt" label="Joined" sort={sort} onSort={onSort} />
                {canAdmin ? (
                  <Th>
                    <span className="sr-only">Actions</span>
                  </Th>
                ) : null}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {rows.map((m) => (
                <tr key={m.id}>
                  <Td className="font-medium text-slate-900">
                    {m.name ?? '—'}
                    {m.userId === me.data?.user.id ? (
                      <span className="ml-2">
                        <Badge tone="blue">You</Badge>
                      </span>
                    ) : null}
                  </Td>
                  <Td>{m.email}</Td>
                  <Td>
                    {canManage(m) ? (
                      <select
                        aria-label={`Role of ${m.email}`}
                        value={m.role}
                        disabled={changeRole.isPending}
                        onChange={(e) => {
                          setNotice(null);
                          changeRole.mutate({ member: m, role: e.target.value as MemberRole });
                        }}
                        className="rounded-md px-2 py-1 text-sm ring-1 ring-slate-300"
                      >
                        {assignableRoles(myRole).map((r) => (
                          <option key={r.value} value={r.value}>
                            {r.label}
                          </option>
                        ))}
                      </select>
                    ) : (
                      <Badge tone={m.role === 'owner' ? 'violet' : 'slate'}>{roleLabel(m.role)}</Badge>
                    )}
                  </Td>
                  <Td className="whitespace-nowrap">{formatDate(m.createdAt)}</Td>
                  {canAdmin ? (
                    <Td>
                      {canManage(m) ? (
                        <Button size="sm" variant="danger" aria-label={`Remove ${m.email}`} onClick={() => setRemoving(m)}>
                          Remove
                        </Button>
                      ) : null}
                    </Td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </QueryState>

      {canAdmin ? <Invitations orgId={orgId} /> : null}
      {canAdmin ? <InviteDialog orgId={orgId} myRole={myRole} open={inviting} onOpenChange={setInviting} /> : null}
      {removing ? <RemoveDialog orgId={orgId} member={removing} self={removing.userId === me.data?.user.id} onClose={() => setRemoving(null)} /> : null}
    </div>
  );
}

/** Open invitations (owners and admins see them), each revocable: its link stops working. */
function Invitations({ orgId }: { orgId: string }) {
  const invitations = useQuery(invitationsQuery(orgId));
  const revoke = useRevokeInvitation(orgId);
  return (
    <section aria-labelledby="invitations-title" className="mt-8">
      <h2 id="invitations-title" className="mb-1 text-lg font-semibold text-slate-900">
        Pending invitations
      </h2>
      <p className="mb-3 text-sm text-slate-600">Links sent and not accepted yet. An accepted invitation becomes a member above.</p>
      <FormError error={revoke.error} />
      <QueryState
        query={invitations}
        loading="Loading invitations…"
        retry
        isEmpty={(items) => items.length === 0}
        empty={<Empty title="No pending invitations" />}
      >
        {(items) => (
          <Table label="Pending invitations">
            <thead className="bg-slate-50">
              <tr>
                <Th>Email</Th>
                <Th>Role</Th>
                <Th>Status</Th>
                <Th>Expires</Th>
                <Th>Invited</Th>
                <Th>
                  <span className="sr-only">Actions</span>
                </Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {items.map((i) => (
                <tr key={i.id}>
                  <Td className="font-medium text-slate-900">{i.email}</Td>
                  <Td>{roleLabel(i.role)}</Td>
                  <Td>
                    <Badge tone={i.status === 'pending' ? 'amber' : 'red'}>{i.status}</Badge>
                  </Td>
                  <Td className="whitespace-nowrap">{formatDate(i.expiresAt)}</Td>
                  <Td className="whitespace-nowrap">{formatDate(i.createdAt)}</Td>
                  <Td>
                    <Button size="sm" aria-label={`Revoke invitation of ${i.email}`} disabled={revoke.isPending} onClick={() => revoke.mutate(i.id)}>
                      Revoke
                    </Button>
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </QueryState>
    </section>
  );
}

function RemoveDialog({ orgId, member, self, onClose }: { orgId: string; member: Member; self: boolean; onClose: () => void }) {
  const remove = useRemoveMember(orgId, member.userId, self, onClose);
  return (
    <Modal
      open
      onOpenChange={(open) => !open && onClose()}
      title={self ? 'Leave this organization?' : `Remove ${member.name ?? member.email}?`}
      description={
        self
          ? 'You lose access to it at once; an owner or admin can invite you again.'
          : `${member.email} loses access at once. Their account stays, and they can be invited again.`
      }
    >
      <FormError error={remove.error} />
      <div className="mt-4 flex justify-end gap-2">
        <Button onClick={onClose}>Cancel</Button>
        <Button
          variant="danger"
          disabled={remove.isPending}
          onClick={() =>
            remove.mutate(undefined, {
              onSuccess: () => {
                if (self) window.location.assign('/');
              },
            })
          }
        >
          {self ? 'Leave organization' : 'Remove member'}
        </Button>
      </div>
    </Modal>
  );
}
