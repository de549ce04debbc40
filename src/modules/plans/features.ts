import type { Feature } from '../../shared/plans.ts';

/**
 * Which feature an organization route belongs to, decided once for all of them by the area of its
 * path (the segment after `/orgs/:orgId/`). A route of a feature the organization's plan lacks is
 * 403 PLAN_FEATURE (app.ts's organization hook). Integrations serve content (social accounts) and
 * analytics (Google): either feature lets them through.
 */
export const FEATURE_AREAS: Record<string, readonly Feature[]> = {
  workflows: ['workflows'],
  runs: ['workflows'],
  approvals: ['workflows'],
  templates: ['workflows'],
  'node-types': ['workflows'],
  secrets: ['workflows'],
  agents: ['agents'],
  'agent-runs': ['agents'],
  'agent-types': ['agents'],
  reports: ['agents'],
  content: ['content'],
  media: ['content'],
  integrations: ['content', 'analytics'],
  inboxes: ['conversations'],
  conversations: ['conversations'],
  campaigns: ['campaigns'],
  suppressions: ['campaigns'],
  analytics: ['analytics'],
  'webhook-endpoints': ['webhooks'],
  'webhook-deliveries': ['webhooks'],
};

/** Areas every plan has: the organization itself, its people and keys, leads, usage, budget, notifications, the stream, the plan. */
export const ALWAYS_AREAS = ['', 'projects', 'members', 'invitations', 'api-keys', 'leads', 'usage', 'budget', 'stats', 'notifications', 'events', 'plan'];

const NONE: readonly Feature[] = [];
const known = new Map<string, readonly Feature[]>();

/** The features a route (its pattern, `/api/v1/orgs/:orgId/…`) serves, any one of which lets it through; empty: every plan. */
export function featuresOfRoute(url: string): readonly Feature[] {
  let features = known.get(url);
  if (features) return features;
  const path = url.replace(/^\/api\/v1\/orgs\/:orgId\/?/, '');
  // A lead's consents are the campaigns' (CONTRACT §9).
  features = /\/consents(\/|$)/.test(path) ? ['campaigns'] : (FEATURE_AREAS[path.split('/')[0] ?? ''] ?? NONE);
  known.set(url, features);
  return features;
}
