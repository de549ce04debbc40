import { results, ok, num, str, leadsFrom, reportOf, closing, reportFailed, type PlanState, type Turn, type LeadLike } from './kit.ts';
import { plural } from './text.ts';

// LEAD_QUALIFIER: loads the leads the input names (or searches by status), scores each by the
// evidence it carries, qualifies those reaching the threshold, and reports the scores.

const FREE_MAIL = new Set([
  'gmail.com',
  'googlemail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'live.com',
  'icloud.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'gmx.com',
  'mail.ru',
  'yandex.ru',
]);
const STRONG_SOURCES = new Set(['referral', 'demo', 'demo-request', 'partner', 'event', 'inbound']);

/** The offline lead score: points for each piece of evidence present, capped at 100. */
export function scoreLead(lead: LeadLike): { score: number; reason: string } {
  let score = 0;
  const why: string[] = [];
  if (lead.email) {
    const domain = lead.email.split('@')[1]?.toLowerCase() ?? '';
    if (domain && !FREE_MAIL.has(domain)) {
      score += 35;
      why.push('business email');
    } else {
      score += 20;
      why.push('personal email');
    }
  }
  if (lead.phone) {
    score += 15;
    why.push('phone');
  }
  if (lead.company) {
    score += 15;
    why.push('company');
  }
  if (lead.website) {
    score += 10;
    why.push('website');
  }
  if (lead.name) {
    score += 5;
    why.push('name');
  }
  if (lead.source) {
    const strong = STRONG_SOURCES.has(lead.source.toLowerCase());
    score += strong ? 10 : 5;
    why.push(`source ${lead.source}`);
  }
  if (lead.tags && lead.tags.length) {
    score += 5;
    why.push('tagged');
  }
  const customCount = lead.custom ? Object.keys(lead.custom).length : 0;
  if (customCount) {
    score += Math.min(5, customCount * 2);
    why.push(`${customCount} custom field${customCount > 1 ? 's' : ''}`);
  }
  score = Math.min(100, score);
  const missing = [!lead.email && 'email', !lead.phone && 'phone', !lead.company && 'company'].filter(Boolean);
  const reason = `Score ${score}: ${why.length ? why.join(', ') : 'no contact data'}${missing.length ? `; missing ${missing.join(', ')}` : ''}.`;
  return { score, reason };
}

/** Lead ids named by the input: leadIds, leadId, or the lead of a workflow item (a lead, `{ lead }`, or an event `{ payload: { lead } }`). */
export function leadIdsOf(input: Record<string, unknown>): string[] {
  const ids: unknown[] = Array.isArray(input.leadIds) ? [...input.leadIds] : [];
  if (input.leadId) ids.push(input.leadId);
  const item = input.item as Record<string, any> | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const candidate of [item, item?.lead, item?.payload?.lead]) {
    if (candidate && typeof candidate.id === 'string' && candidate.id.startsWith('lead_')) ids.push(candidate.id);
  }
  return [...new Set(ids.filter((x): x is string => typeof x === 'string' && x.length > 0 && x.length <= 64))].slice(0, 50);
}

export function leadQualifier(s: PlanState): Turn {
  const threshold = num(s.input.threshold, 60);
  const found = results(s, 'search_leads', 'get_lead');
  if (found.length === 0) {
    const ids = leadIdsOf(s.input);
    if (ids.length) {
      return {
        reasoning: `Loading the ${plural(ids.length, 'lead')} named in the input.`,
        toolCalls: ids.map((id) => ({ toolName: 'get_lead', input: { id } })),
      };
    }
    const status = str(s.input.status) ?? 'NEW';
    const search: Record<string, unknown> = { status, limit: Math.min(50, Math.max(1, num(s.input.limit, 50))) };
    if (Array.isArray(s.input.tags) && s.input.tags.length) search.tags = s.input.tags;
    return { reasoning: `Looking for ${status} leads to qualify (threshold ${threshold}).`, toolCalls: [{ toolName: 'search_leads', input: search }] };
  }
  const leads = leadsFrom(found);
  if (leads.length === 0) return { text: 'No leads matched, so there was nothing to qualify.' };
  const scored = leads.map((lead) => ({ lead, ...scoreLead(lead) }));
  const written = results(s, 'qualify_lead', 'update_lead');
  if (written.length === 0) {
    return {
      reasoning: `Scoring ${plural(leads.length, 'lead')} by the evidence they carry; ${scored.filter((x) => x.score >= threshold).length} reach ${threshold}.`,
      toolCalls: scored.map((x) =>
        x.score >= threshold
          ? { toolName: 'qualify_lead', input: { id: x.lead.id, score: x.score, reason: x.reason } }
          : { toolName: 'update_lead', input: { id: x.lead.id, score: x.score, scoreReason: x.reason } },
      ),
    };
  }
  const failedIds = new Set(written.filter((r) => !ok(r)).map((r) => String(r.input.id)));
  const done = scored.filter((x) => !failedIds.has(x.lead.id));
  const qualified = done.filter((x) => x.score >= threshold);
  const low = done.filter((x) => x.score < 40);
  const average = done.length ? Math.round(done.reduce((a, x) => a + x.score, 0) / done.length) : 0;
  const report = reportOf(s);
  const summary =
    `Evaluated ${plural(done.length, 'lead')}: ${qualified.length} qualified (score ≥ ${threshold}), ${done.length - qualified.length} below the threshold; average score ${average}.` +
    (failedIds.size ? ` ${plural(failedIds.size, 'update')} failed.` : '');
  if (!report) {
    const error = reportFailed(s);
    if (error) return { text: `${summary} The report could not be saved: ${error}` };
    const recommendations = [];
    if (qualified.length) {
      recommendations.push({
        title: `Tag the ${plural(qualified.length, 'qualified lead')} as "hot"`,
        description: 'Marks them for the sales team and for hot-lead workflows.',
        action: { type: 'tag_leads', params: { leadIds: qualified.map((x) => x.lead.id), tags: ['hot'] } },
      });
      recommendations.push({
        title: `Move the ${plural(qualified.length, 'qualified lead')} to CONTACTED once outreach starts`,
        description: 'Keeps the pipeline status in step with the outreach.',
        action: { type: 'set_lead_status', params: { leadIds: qualified.map((x) => x.lead.id), status: 'CONTACTED' } },
      });
    }
    if (low.length) {
      recommendations.push({
        title: `Tag ${plural(low.length, 'incomplete lead')} for enrichment`,
        description: 'They lack the contact or company data needed to judge them.',
        action: { type: 'tag_leads', params: { leadIds: low.map((x) => x.lead.id), tags: ['needs-enrichment'] } },
      });
    }
    const rows = [...done]
      .sort((a, b) => b.score - a.score)
      .map(
        (x) =>
          `| ${x.lead.name ?? x.lead.email ?? x.lead.id} | ${x.lead.company ?? ''} | ${x.score} | ${x.score >= threshold ? 'QUALIFIED' : (x.lead.status ?? '')} | ${x.reason} |`,
      );
    return {
      reasoning: 'Writing the qualification report with follow-up actions.',
      toolCalls: [
        {
          toolName: 'create_report',
          input: {
            type: 'LEAD_QUALIFICATION',
            title: `Lead qualification: ${qualified.length} of ${plural(done.length, 'lead')} qualified`,
            summary,
            metrics: {
              evaluated: done.length,
              qualified: qualified.length,
              belowThreshold: done.length - qualified.length,
              averageScore: average,
              threshold,
              topScore: done.reduce((m, x) => Math.max(m, x.score), 0),
            },
            body: `## Scores\n\n| Lead | Company | Score | Status | Reason |\n|---|---|---|---|---|\n${rows.join('\n')}\n`,
            recommendations,
          },
        },
      ],
    };
  }
  return closing(s, `${summary} Report ${report.reportId} lists the scores and follow-up actions.`);
}
