import type { paths } from '../../api/schema';

/** A scope an API key may carry, as the API's own OpenAPI document lists them. */
export type Scope = paths['/api/v1/orgs/{orgId}/api-keys']['post']['requestBody']['content']['application/json']['scopes'][number];

export interface ScopeGroup {
  label: string;
  description: string;
  read?: Scope;
  write?: Scope;
}

/** The scopes by resource, read and write side by side (CONTRACT §2). */
export const SCOPE_GROUPS = [
  { label: 'Leads', description: 'Contacts, imports, lead statistics', read: 'leads:read', write: 'leads:write' },
  { label: 'Workflows', description: 'Workflows, runs, approvals, run streams', read: 'workflows:read', write: 'workflows:write' },
  { label: 'Agents', description: 'Saved agents and agent runs', read: 'agents:read', write: 'agents:write' },
  { label: 'Reports', description: 'Reports and applying recommendations', read: 'reports:read', write: 'reports:write' },
  { label: 'Content', description: 'Posts, calendar, integrations', read: 'content:read', write: 'content:write' },
  { label: 'Media', description: 'Uploading images and videos', write: 'media:write' },
  { label: 'Usage', description: 'Usage, costs and statistics', read: 'usage:read' },
  { label: 'Conversations', description: 'Conversations and the organization stream', read: 'conversations:read', write: 'conversations:write' },
  { label: 'Campaigns', description: 'Campaigns, their recipients, suppressions', read: 'campaigns:read', write: 'campaigns:write' },
  { label: 'Analytics', description: 'Synced GA4 and Search Console numbers, threshold rules', read: 'analytics:read', write: 'analytics:write' },
  { label: 'Webhooks', description: 'Webhook endpoints and deliveries', read: 'webhooks:read', write: 'webhooks:write' },
] as const satisfies readonly ScopeGroup[];

type Group = (typeof SCOPE_GROUPS)[number];
type ReadsOf<G> = G extends { read: infer R } ? R : never;
type WritesOf<G> = G extends { write: infer W } ? W : never;

/**
 * Fails the panel's type check when the API gains a scope this page does not offer (or drops one it
 * does): the list above must match the OpenAPI document exactly, `*` apart.
 */
type Missing = Exclude<Exclude<Scope, '*'>, ReadsOf<Group> | WritesOf<Group>>;
const everyScopeListed: [Missing] extends [never] ? true : Missing = true;
void everyScopeListed;

export const FULL_ACCESS: Scope = '*';

/** Every scope the page offers, in its order. */
export const ALL_SCOPES: Scope[] = SCOPE_GROUPS.flatMap((g): Scope[] => [...('read' in g ? [g.read] : []), ...('write' in g ? [g.write] : [])]);

/** Adds or removes one scope; choosing one drops full access. */
export function toggleScope(selected: readonly Scope[], scope: Scope): Scope[] {
  const set = new Set(selected.filter((s) => s !== FULL_ACCESS));
  if (set.has(scope)) set.delete(scope);
  else set.add(scope);
  return ALL_SCOPES.filter((s) => set.has(s));
}

/** "Full access" for `*`, otherwise the scopes themselves. */
export function describeScopes(scopes: readonly string[]): string[] {
  return scopes.includes(FULL_ACCESS) ? ['Full access (*)'] : [...scopes];
}

const READ_PATHS: [string, string][] = [
  ['leads:read', '/leads'],
  ['workflows:read', '/runs'],
  ['agents:read', '/agent-runs'],
  ['reports:read', '/reports'],
  ['content:read', '/content'],
  ['usage:read', '/usage'],
  ['webhooks:read', '/webhook-endpoints'],
];

/** A path under the organization that a key with these scopes may read (the organization itself needs none). */
export function examplePath(scopes: readonly string[]): string {
  if (scopes.includes(FULL_ACCESS)) return '/leads';
  return READ_PATHS.find(([scope]) => scopes.includes(scope))?.[1] ?? '';
}
