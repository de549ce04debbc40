import { useEffect } from 'react';
import { createFileRoute, Link, Outlet, useNavigate } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { DropdownMenu } from 'radix-ui';
import { requireSession } from '../../../lib/guard';
import { useRole } from '../../../lib/account';
import { meQuery, orgsQuery } from '../../../queries/account';
import { signOut } from '../../../lib/session';
import { OrgStreamProvider } from '../../../lib/stream';
import { ErrorState, Loading } from '../../../components/ui/states';
import { NotificationBell } from '../../../components/notification-bell';

export const Route = createFileRoute('/orgs/$orgId')({
  beforeLoad: ({ location }) => requireSession(location),
  loader: ({ context }) => Promise.all([context.queryClient.ensureQueryData(meQuery), context.queryClient.ensureQueryData(orgsQuery)]),
  pendingComponent: () => <Loading />,
  component: OrgLayout,
});

/** The main navigation: the accessible names CONTRACT §11 fixes. */
const NAV = [
  { to: '/orgs/$orgId', label: 'Dashboard', exact: true },
  { to: '/orgs/$orgId/leads', label: 'Leads' },
  { to: '/orgs/$orgId/conversations', label: 'Conversations' },
  { to: '/orgs/$orgId/campaigns', label: 'Campaigns' },
  { to: '/orgs/$orgId/workflows', label: 'Workflows' },
  { to: '/orgs/$orgId/runs', label: 'Runs' },
  { to: '/orgs/$orgId/approvals', label: 'Approvals' },
  { to: '/orgs/$orgId/agents', label: 'Agents' },
  { to: '/orgs/$orgId/reports', label: 'Reports' },
  { to: '/orgs/$orgId/content', label: 'Content' },
  { to: '/orgs/$orgId/analytics', label: 'Analytics' },
  { to: '/orgs/$orgId/webhooks', label: 'Webhooks' },
  { to: '/orgs/$orgId/api-keys', label: 'API keys' },
  { to: '/orgs/$orgId/members', label: 'Members' },
  { to: '/orgs/$orgId/usage', label: 'Usage' },
  { to: '/orgs/$orgId/settings', label: 'Settings' },
] as const;

function OrgLayout() {
  const { orgId } = Route.useParams();
  const me = useQuery(meQuery);
  const orgs = useQuery(orgsQuery);
  const { role } = useRole(orgId);
  const org = orgs.data?.find((o) => o.id === orgId);

  useEffect(() => {
    if (org) localStorage.setItem('lastOrgId', org.id);
  }, [org]);

  if (orgs.data && !org) {
    return (
      <main className="mx-auto max-w-2xl p-8">
        <ErrorState error={new Error('You are not a member of this organization, or it does not exist.')} />
        <p className="mt-4 text-sm">
          <Link to="/" className="text-indigo-600 underline">
            Go to your organizations
          </Link>
        </p>
      </main>
    );
  }
  return (
    <OrgStreamProvider orgId={orgId}>
      <div className="flex min-h-screen">
        <aside className="flex w-56 shrink-0 flex-col border-r border-slate-200 bg-white">
          <div className="border-b border-slate-200 p-3">
            <OrgSwitcher current={org?.name ?? '…'} orgs={orgs.data ?? []} />
          </div>
          <nav aria-label="Main" className="flex-1 space-y-0.5 overflow-y-auto p-2">
            {NAV.map((item) => (
              <Link
                key={item.to}
                to={item.to}
                params={{ orgId }}
                activeOptions={{ exact: 'exact' in item && item.exact, includeSearch: false }}
                className="block rounded-md px-3 py-1.5 text-sm text-slate-700 hover:bg-slate-100"
                activeProps={{ className: 'bg-indigo-50 font-medium text-indigo-700', 'aria-current': 'page' }}
              >
                {item.label}
              </Link>
            ))}
          </nav>
        </aside>
        <div className="flex min-w-0 flex-1 flex-col">
          <header className="flex h-14 items-center justify-end gap-3 border-b border-slate-200 bg-white px-6">
            <NotificationBell orgId={orgId} />
            <UserMenu name={me.data?.user.name ?? me.data?.user.email ?? ''} email={me.data?.user.email ?? ''} role={role} orgId={orgId} />
          </header>
          <main className="min-w-0 flex-1 p-6">
            <Outlet />
          </main>
        </div>
      </div>
    </OrgStreamProvider>
  );
}

const menuItem = 'block cursor-pointer rounded px-3 py-1.5 text-sm text-slate-700 outline-none data-[highlighted]:bg-slate-100';

function OrgSwitcher({ current, orgs }: { current: string; orgs: { id: string; name: string }[] }) {
  const navigate = useNavigate();
  return (
    <DropdownMenu.Root>
      <DropdownMenu.Trigger
        className="flex w-full items-center justify-between rounded-md px-2 py-1.5 text-left text-sm font-semibold text-slate-900 hover:bg-slate-100"
        aria-label={`Organization: ${current}`}
      >
        <span className="truncate">{current}</span>
        <span aria-hidden="true" className="text-slate-400">
          ▾
        </span>
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content align="start" sideOffset={4} className="z-50 min-w-52 rounded-md bg-white p-1 shadow-lg ring-1 ring-slate-200">
          <DropdownMenu.Label className="px-3 py-1 text-xs text-slate-500">Organizations</DropdownMenu.Label>
          {orgs.map((o) => (
            <DropdownMenu.Item key={o.id} className={menuItem} onSelect={() => void navigate({ to: '/orgs/$orgId', params: { orgId: o.id } })}>
              {o.name}
            </DropdownMenu.Item>
          ))}
          <DropdownMenu.Separator className="my-1 h-px bg-slate-200" />
          <DropdownMenu.Item className={menuItem} onSelect={() => void navigate({ to: '/orgs/new' })}>
            Create organization
          </DropdownMenu.Item>
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}

function UserMenu({ name, email, role, orgId }: { name: string; email: string; role: string | null; orgId: string }) {
  const navigate = useNavigate();
  return (
    <DropdownMenu.Root>
      <DropdownMenu.Trigger className="rounded-full bg-slate-100 px-3 py-1.5 text-sm font-medium text-slate-700 hover:bg-slate-200" aria-label="Account">
        {name}
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content align="end" sideOffset={4} className="z-50 min-w-56 rounded-md bg-white p-1 shadow-lg ring-1 ring-slate-200">
          <div className="px-3 py-2 text-xs text-slate-500">
            {email}
            {role ? ` · ${role}` : ''}
          </div>
          <DropdownMenu.Item className={menuItem} onSelect={() => void navigate({ to: '/orgs/$orgId/settings/account', params: { orgId } })}>
            Account and password
          </DropdownMenu.Item>
          <DropdownMenu.Separator className="my-1 h-px bg-slate-200" />
          <DropdownMenu.Item className={menuItem} onSelect={() => void signOut()}>
            Sign out
          </DropdownMenu.Item>
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}
