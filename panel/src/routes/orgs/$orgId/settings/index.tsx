import { createFileRoute, Link } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { organizationQuery } from '../../../../queries/settings';
import { useRole } from '../../../../lib/account';
import { formatDateTime } from '../../../../lib/format';
import { Badge } from '../../../../components/ui/page';
import { ErrorState, Loading } from '../../../../components/ui/states';
import { CopyText } from '../../../../components/settings/copy-text';
import { roleLabel } from '../../../../components/members/roles';

export const Route = createFileRoute('/orgs/$orgId/settings/')({ component: GeneralSettings });

const card = 'rounded-lg bg-white p-5 shadow-xs ring-1 ring-slate-200';

function GeneralSettings() {
  const { orgId } = Route.useParams();
  const { role } = useRole(orgId);
  const org = useQuery(organizationQuery(orgId));
  if (org.isPending) return <Loading label="Loading organization…" />;
  if (org.isError) return <ErrorState error={org.error} retry={() => void org.refetch()} />;
  const o = org.data;
  return (
    <div className="grid max-w-4xl grid-cols-1 gap-5 lg:grid-cols-2">
      <section aria-labelledby="org-title" className={card}>
        <h2 id="org-title" className="mb-4 font-semibold text-slate-900">
          Organization
        </h2>
        <dl className="space-y-4 text-sm">
          <div>
            <dt className="text-slate-500">Name</dt>
            <dd className="text-base font-medium text-slate-900">{o.name}</dd>
          </div>
          <div>
            <dt className="mb-1 text-slate-500">Organization ID</dt>
            <dd>
              <CopyText label="Organization ID" value={o.id} />
            </dd>
          </div>
          <div>
            <dt className="text-slate-500">Created</dt>
            <dd className="text-slate-900">{formatDateTime(o.createdAt)}</dd>
          </div>
          <div>
            <dt className="text-slate-500">Your role</dt>
            <dd>{role ? <Badge tone="violet">{roleLabel(role)}</Badge> : '—'}</dd>
          </div>
        </dl>
        <p className="mt-5 text-sm text-slate-600">
          Need a separate space, for a client or a brand?{' '}
          <Link to="/orgs/new" className="font-medium text-indigo-700 hover:underline">
            Create another organization
          </Link>
          .
        </p>
      </section>
      <section aria-labelledby="api-title" className={card}>
        <h2 id="api-title" className="mb-4 font-semibold text-slate-900">
          API access
        </h2>
        <dl className="space-y-4 text-sm">
          <div>
            <dt className="mb-1 text-slate-500">API base URL</dt>
            <dd>
              <CopyText label="API base URL" value={`${window.location.origin}/api/v1`} />
            </dd>
          </div>
          <div>
            <dt className="mb-1 text-slate-500">This organization's paths</dt>
            <dd>
              <CopyText label="Organization path" value={`${window.location.origin}/api/v1/orgs/${o.id}`} />
            </dd>
          </div>
        </dl>
        <ul className="mt-5 space-y-2 text-sm">
          <li>
            <a href="/docs" className="font-medium text-indigo-700 hover:underline">
              API reference
            </a>{' '}
            <span className="text-slate-500">— every route, try it in the browser</span>
          </li>
          <li>
            <Link to="/orgs/$orgId/api-keys" params={{ orgId }} className="font-medium text-indigo-700 hover:underline">
              API keys
            </Link>{' '}
            <span className="text-slate-500">— credentials for your servers</span>
          </li>
          <li>
            <Link to="/orgs/$orgId/webhooks" params={{ orgId }} className="font-medium text-indigo-700 hover:underline">
              Webhooks
            </Link>{' '}
            <span className="text-slate-500">— events sent to your systems</span>
          </li>
          <li>
            <Link to="/orgs/$orgId/members" params={{ orgId }} className="font-medium text-indigo-700 hover:underline">
              Members
            </Link>{' '}
            <span className="text-slate-500">— who has access</span>
          </li>
        </ul>
      </section>
    </div>
  );
}
