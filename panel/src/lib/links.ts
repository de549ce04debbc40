/**
 * Where a notification's `link` leads in the panel. The service writes links either relative to the
 * organization (`/runs/r1`) or as API paths (`/api/v1/orgs/o/content/p1`); both land on the page
 * that shows the thing.
 */
export function panelPath(orgId: string, link: string | null | undefined): string | null {
  if (!link) return null;
  const relative = link.replace(/^\/api\/v1\/orgs\/[^/]+/, '');
  const [, kind, id] = relative.split('/');
  const base = `/orgs/${encodeURIComponent(orgId)}`;
  const enc = (value: string | undefined) => encodeURIComponent(value ?? '');
  switch (kind) {
    case 'approvals':
      return id ? `${base}/approvals?approval=${enc(id)}` : `${base}/approvals`;
    case 'usage':
      return `${base}/usage`;
    case 'workflows':
      return id ? `${base}/workflows/${enc(id)}` : `${base}/workflows`;
    case 'runs':
      return id ? `${base}/runs/${enc(id)}` : `${base}/runs`;
    case 'agent-runs':
      return id ? `${base}/agents/runs/${enc(id)}` : `${base}/agents`;
    case 'content':
      return id ? `${base}/content?post=${enc(id)}` : `${base}/content`;
    case 'webhook-endpoints':
      return id ? `${base}/webhooks/${enc(id)}` : `${base}/webhooks`;
    case 'reports':
      return id ? `${base}/reports/${enc(id)}` : `${base}/reports`;
    case 'leads':
      return id ? `${base}/leads?lead=${enc(id)}` : `${base}/leads`;
    case 'conversations':
      return id ? `${base}/conversations?conversation=${enc(id)}` : `${base}/conversations`;
    case 'campaigns':
      return id ? `${base}/campaigns/${enc(id)}` : `${base}/campaigns`;
    // A reconnect request (integration.error): the connected accounts, where Reconnect is.
    case 'integrations':
      return `${base}/settings/integrations`;
    // A threshold rule that fired: the analytics page with the rules and their state.
    case 'analytics':
      return `${base}/analytics`;
    default:
      return null;
  }
}
