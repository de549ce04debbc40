import type { Db } from '../../platform/db.ts';
import { postCount } from '../content/index.ts';
import { leadCounts } from '../leads/index.ts';
import { workflowTriggers } from '../workflows/index.ts';
import { findTemplate } from '../workflows/index.ts';
import type { ActionType, RecommendationInput as Recommendation } from './actions.ts';

const CAPTURE_TEMPLATE = 'capture-leads-from-webhook';
const QUALIFY_TEMPLATE = 'qualify-new-leads-with-ai';

/**
 * What a report recommends when its author recommended nothing (often: an organization with little
 * data). The first steps that give the next report something to say, each an action this service
 * executes: capture leads, qualify them, publish something. Never empty: an analysis run is the
 * last resort, and `run_agent` is always available.
 */
export async function starterRecommendations(db: Db, available: ActionType[], scope: { orgId: string; projectId: string | null }): Promise<Recommendation[]> {
  // A project's report counts the project's workflows and the organization-wide ones.
  const [leadTotals, posts, flows] = await Promise.all([leadCounts(db, scope), postCount(db, scope), workflowTriggers(db, scope)]);
  const projectParam = scope.projectId ? { projectId: scope.projectId } : {};
  const out: Recommendation[] = [];

  const capturesLeads = flows.some((f) => f.triggerType === 'trigger.webhook');
  if (!capturesLeads && available.includes('use_template')) {
    out.push({
      title: 'Capture leads from your website form',
      description: `Creates the "${findTemplate(CAPTURE_TEMPLATE)!.name}" workflow. Point your form at the webhook URL in the answer: each submission becomes a lead, de-duplicated and tagged, so the next report has a pipeline to measure.`,
      action: { type: 'use_template', params: { templateId: CAPTURE_TEMPLATE, ...projectParam } },
    });
  }

  const fresh = leadTotals.fresh;
  const qualifiesLeads = flows.some((f) => f.triggerType === 'trigger.event' && (f.triggerEvents ?? []).includes('lead.created'));
  if (fresh > 0) {
    out.push({
      title: `Qualify the ${fresh} new lead${fresh === 1 ? '' : 's'}`,
      description: 'Runs the lead qualifier on the NEW leads: scores, reasons and the qualified ones to follow up.',
      action: { type: 'run_agent', params: { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads', input: { status: 'NEW' } } },
    });
  } else if (!qualifiesLeads && available.includes('use_template')) {
    out.push({
      title: 'Qualify every new lead automatically',
      description: `Creates the "${findTemplate(QUALIFY_TEMPLATE)!.name}" workflow: each new lead is scored by the lead qualifier and marked QUALIFIED or UNQUALIFIED.`,
      action: { type: 'use_template', params: { templateId: QUALIFY_TEMPLATE, ...projectParam } },
    });
  }

  if (posts === 0 && available.includes('create_draft')) {
    out.push({
      title: 'Draft your first LinkedIn post',
      description: 'Runs the content writer for one LinkedIn draft to review under Content; published posts give the next report reach to measure.',
      action: {
        type: 'run_agent',
        params: {
          type: 'CONTENT_WRITER',
          task: 'Write a first LinkedIn post that introduces what we do and who we help',
          input: { topic: 'what we do and who we help', platforms: ['LINKEDIN'], count: 1 },
        },
      },
    });
  }

  if (out.length === 0) {
    out.push({
      title: 'Analyse the pipeline for next steps',
      description: 'Runs the market analyst over the leads, their sources and statuses for the strongest channels and gaps.',
      action: { type: 'run_agent', params: { type: 'MARKET_ANALYST', task: 'Analyse the lead pipeline and recommend next steps' } },
    });
  }
  return out;
}
