import { useQuery } from '@tanstack/react-query';
import { meQuery } from '../queries/account';

export type Role = 'owner' | 'admin' | 'member' | 'viewer';

/**
 * What the signed-in user may do in an organization (CONTRACT §2): viewers read only; owners and
 * admins manage members, API keys and webhook endpoints. The API enforces it; the panel only hides
 * what would be refused.
 */
export function useRole(orgId: string): { role: Role | null; canWrite: boolean; canAdmin: boolean } {
  const me = useQuery(meQuery);
  const role = (me.data?.memberships.find((m) => m.organizationId === orgId)?.role ?? null) as Role | null;
  return { role, canWrite: role !== null && role !== 'viewer', canAdmin: role === 'owner' || role === 'admin' };
}
