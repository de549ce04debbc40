import { createFileRoute } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { meQuery } from '../../../../queries/account';
import { QueryState } from '../../../../components/ui/query-state';
import { PasswordForm } from '../../../../components/settings/password-form';

export const Route = createFileRoute('/orgs/$orgId/settings/account')({ component: AccountPage });

function AccountPage() {
  const me = useQuery(meQuery);
  return (
    <div className="grid max-w-4xl grid-cols-1 gap-5 lg:grid-cols-2">
      <section aria-labelledby="profile-title" className="rounded-lg bg-white p-5 shadow-xs ring-1 ring-slate-200">
        <h2 id="profile-title" className="mb-4 font-semibold text-slate-900">
          Your account
        </h2>
        <QueryState query={me}>
          {(data) => (
            <dl className="space-y-3 text-sm">
              <div>
                <dt className="text-slate-500">Name</dt>
                <dd className="font-medium text-slate-900">{data.user.name ?? '—'}</dd>
              </div>
              <div>
                <dt className="text-slate-500">Email</dt>
                <dd className="text-slate-900">{data.user.email}</dd>
              </div>
              <div>
                <dt className="text-slate-500">Organizations</dt>
                <dd className="text-slate-900">{data.memberships.length}</dd>
              </div>
            </dl>
          )}
        </QueryState>
      </section>
      <section aria-labelledby="password-title" className="rounded-lg bg-white p-5 shadow-xs ring-1 ring-slate-200">
        <h2 id="password-title" className="mb-1 font-semibold text-slate-900">
          Change password
        </h2>
        <p className="mb-4 text-sm text-slate-600">Signs out your other sessions; this one stays signed in.</p>
        {me.data ? <PasswordForm email={me.data.user.email} /> : null}
      </section>
    </div>
  );
}
