import { createFileRoute, redirect } from '@tanstack/react-router';
import { requireSession } from '../lib/guard';
import { orgsQuery } from '../queries/account';

/** The start page: the last organization used, the first one otherwise, or creating one. */
export const Route = createFileRoute('/')({
  beforeLoad: async ({ location, context }) => {
    await requireSession(location);
    const orgs = await context.queryClient.fetchQuery(orgsQuery);
    const last = localStorage.getItem('lastOrgId');
    const org = orgs.find((o) => o.id === last) ?? orgs[0];
    if (!org) throw redirect({ to: '/orgs/new' });
    throw redirect({ to: '/orgs/$orgId', params: { orgId: org.id } });
  },
});
