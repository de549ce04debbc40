import type { Schemas } from '../../api/client';

export type MemberRole = Schemas['Member']['role'];

/** The roles, most powerful first, with what each may do (CONTRACT §2). */
export const ROLES = [
  { value: 'owner', label: 'Owner', description: 'Everything, including managing owners' },
  { value: 'admin', label: 'Admin', description: 'Everything except managing owners: members, API keys, webhooks' },
  { value: 'member', label: 'Member', description: 'Works with leads, workflows, agents, content' },
  { value: 'viewer', label: 'Viewer', description: 'Reads only' },
] as const satisfies readonly { value: MemberRole; label: string; description: string }[];

type Missing = Exclude<MemberRole, (typeof ROLES)[number]['value']>;
const everyRoleListed: [Missing] extends [never] ? true : Missing = true;
void everyRoleListed;

/** The roles the signed-in user may hand out: only an owner makes owners. */
export function assignableRoles(myRole: string | null) {
  return ROLES.filter((r) => r.value !== 'owner' || myRole === 'owner');
}

export function roleLabel(role: string): string {
  return ROLES.find((r) => r.value === role)?.label ?? role;
}

/** "an admin", "a viewer". */
export function aRole(role: string): string {
  const label = roleLabel(role).toLowerCase();
  return /^[aeiou]/.test(label) ? `an ${label}` : `a ${label}`;
}
