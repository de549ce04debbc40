/**
 * Words for what a report's recommendation does and for what applying it did (CONTRACT §5: apply
 * returns `{ report, recommendation, result }`, the result being what the action made: a bulk
 * count, a draft, a run, a workflow). Pure, so the component tests pin them.
 */
import { panelPath } from '../../lib/links';

export { REPORT_TYPES } from '../../../../src/shared/reports.ts';

/** "MARKET_RESEARCH" → "Market research", "SEO_AUDIT" → "SEO audit". */
export function reportTypeLabel(type: string): string {
  const words = type.split('_').map((w) => (w === 'SEO' ? w : w.toLowerCase()));
  return words.map((w, i) => (i === 0 ? w.charAt(0).toUpperCase() + w.slice(1) : w)).join(' ');
}

/** "totalLeads" → "Total leads", "aiCostUsd" → "AI cost (USD)". */
export function metricLabel(key: string): string {
  const spaced = key
    .replace(/_/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([a-zA-Z])([0-9])/g, '$1 $2')
    .replace(/\bUsd\b/i, '(USD)')
    .toLowerCase();
  const fixed = spaced
    .replace(/\bai\b/g, 'AI')
    .replace(/\bseo\b/g, 'SEO')
    .replace(/\bctr\b/g, 'CTR')
    .replace(/\(usd\)/, '(USD)');
  return fixed.charAt(0).toUpperCase() + fixed.slice(1);
}

/** A metric's value as text: numbers grouped (USD ones as money), nothing as a dash, the rest as JSON. */
export function metricValue(key: string, value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'number') {
    if (/usd|cost/i.test(key)) return new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', maximumFractionDigits: 4 }).format(value);
    if (/pct|percent|rate|ctr/i.test(key)) return `${Math.round(value * 100) / 100} %`;
    return value.toLocaleString(undefined, { maximumFractionDigits: 2 });
  }
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) return value.join(', ');
  return JSON.stringify(value);
}

type Params = Record<string, unknown>;

function list(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [];
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function quote(text: unknown, max = 80): string {
  const s = String(text ?? '');
  return `“${s.length > max ? `${s.slice(0, max - 1)}…` : s}”`;
}

/** What applying the action will do, in a sentence. */
export function describeAction(action: { type: string; params?: Params }): string {
  const p = action.params ?? {};
  const leads = list(p.leadIds).length;
  const tags = list(p.tags).join(', ');
  switch (action.type) {
    case 'tag_leads':
      return `Adds the tag${list(p.tags).length === 1 ? '' : 's'} ${tags} to ${plural(leads, 'lead')}.`;
    case 'untag_leads':
      return `Removes the tag${list(p.tags).length === 1 ? '' : 's'} ${tags} from ${plural(leads, 'lead')}.`;
    case 'set_lead_status':
      return `Sets ${plural(leads, 'lead')} to ${String(p.status)}.`;
    case 'create_draft':
      return `Creates a ${String(p.platform ?? '')} draft: ${quote(p.body)}.`;
    case 'start_workflow':
      return `Starts a run of workflow ${String(p.workflowId)}.`;
    case 'run_agent':
      return `Runs the ${String(p.type ?? 'agent')
        .toLowerCase()
        .replace(/_/g, ' ')} agent: ${quote(p.task)}.`;
    case 'use_template':
      return `Creates a workflow from the template ${quote(p.templateId)}.`;
    default:
      return `Action ${action.type}.`;
  }
}

export interface Outcome {
  text: string;
  /** Where the result can be seen in the panel. */
  href?: string;
  linkLabel?: string;
}

/** What applying did, from the action and the API's `result`. */
export function describeResult(orgId: string, action: { type: string; params?: Params }, result: unknown): Outcome {
  const r = (result && typeof result === 'object' ? result : {}) as Record<string, unknown>;
  const id = typeof r.id === 'string' ? r.id : undefined;
  const base = `/orgs/${encodeURIComponent(orgId)}`;
  switch (action.type) {
    case 'tag_leads':
    case 'untag_leads':
    case 'set_lead_status': {
      const matched = Number(r.matched ?? 0);
      const updated = Number(r.updated ?? 0);
      const tags = list(action.params?.tags);
      const href =
        action.type === 'tag_leads' && tags.length
          ? `${base}/leads?tags=${encodeURIComponent(tags.join(','))}`
          : action.type === 'set_lead_status' && action.params?.status
            ? `${base}/leads?status=${encodeURIComponent(String(action.params.status))}`
            : `${base}/leads`;
      return { text: `${updated} of ${plural(matched, 'lead')} updated.`, href, linkLabel: 'See the leads' };
    }
    case 'create_draft':
      return { text: 'Draft created.', href: panelPath(orgId, id ? `/content/${id}` : '/content') ?? undefined, linkLabel: 'Open the draft' };
    case 'start_workflow':
      return {
        text: `Workflow run started${r.status ? ` (${String(r.status)})` : ''}.`,
        href: panelPath(orgId, id ? `/runs/${id}` : '/runs') ?? undefined,
        linkLabel: 'Watch the run',
      };
    case 'run_agent':
      return {
        text: `Agent run started${r.status ? ` (${String(r.status)})` : ''}.`,
        href: panelPath(orgId, id ? `/agent-runs/${id}` : '/agent-runs') ?? undefined,
        linkLabel: 'Watch the agent run',
      };
    case 'use_template':
      return {
        text: `Workflow${r.name ? ` ${quote(r.name)}` : ''} created.`,
        href: panelPath(orgId, id ? `/workflows/${id}` : '/workflows') ?? undefined,
        linkLabel: 'Open the workflow',
      };
    default:
      return { text: 'Applied.' };
  }
}
