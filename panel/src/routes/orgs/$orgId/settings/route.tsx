import { createFileRoute, Link, Outlet } from '@tanstack/react-router';
import { PageHeader } from '../../../../components/ui/page';

export const Route = createFileRoute('/orgs/$orgId/settings')({ component: SettingsLayout });

/** The settings pages, with their own navigation (General, Projects, Account, Integrations). */
const TABS = [
  { to: '/orgs/$orgId/settings', label: 'General', exact: true },
  { to: '/orgs/$orgId/settings/plan', label: 'Plan' },
  { to: '/orgs/$orgId/settings/projects', label: 'Projects' },
  { to: '/orgs/$orgId/settings/account', label: 'Account' },
  { to: '/orgs/$orgId/settings/integrations', label: 'Integrations' },
  { to: '/orgs/$orgId/settings/inboxes', label: 'Inboxes' },
  { to: '/orgs/$orgId/settings/suppressions', label: 'Suppressions' },
] as const;

function SettingsLayout() {
  const { orgId } = Route.useParams();
  return (
    <div>
      <PageHeader title="Settings" description="The organization, its projects, your account and connected services." />
      <nav aria-label="Settings" className="mb-6 flex gap-1 border-b border-slate-200">
        {TABS.map((tab) => (
          <Link
            key={tab.to}
            to={tab.to}
            params={{ orgId }}
            activeOptions={{ exact: 'exact' in tab && tab.exact, includeSearch: false }}
            className="-mb-px border-b-2 border-transparent px-3 py-2 text-sm text-slate-600 hover:border-slate-300 hover:text-slate-900"
            activeProps={{ className: 'border-indigo-600! font-medium text-indigo-700!', 'aria-current': 'page' }}
          >
            {tab.label}
          </Link>
        ))}
      </nav>
      <Outlet />
    </div>
  );
}
