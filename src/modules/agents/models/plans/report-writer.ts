import { results, ok, num, leadsFrom, reportOf, closing, reportFailed, type PlanState, type Turn, type LeadStats } from './kit.ts';
import { plural } from './text.ts';
import { analyticsReport, isAnalyticsReport } from './analytics-reports.ts';
import { chatbotAnalyst } from './chatbot-analyst.ts';
import { campaignSummary } from './campaign-summary.ts';

// REPORT_WRITER: the digest of the last days (leads, qualified leads, AI spend), or the report the
// input's reportType asks for (analytics, chatbot insights, a campaign summary).

export function reportWriter(s: PlanState): Turn {
  if (isAnalyticsReport(s.input.reportType)) return analyticsReport(s, s.input.reportType);
  if (s.input.reportType === 'CHATBOT_INSIGHTS') return chatbotAnalyst(s);
  if (s.input.reportType === 'CAMPAIGN_SUMMARY') return campaignSummary(s);
  const days = Math.min(366, Math.max(1, num(s.input.days, 7)));
  if (results(s, 'lead_stats').length === 0) {
    return {
      reasoning: `Collecting the figures of the last ${plural(days, 'day')}.`,
      toolCalls: [
        { toolName: 'lead_stats', input: {} },
        { toolName: 'search_leads', input: { status: 'QUALIFIED', limit: 50 } },
        { toolName: 'usage_summary', input: { days } },
      ],
    };
  }
  const st = (results(s, 'lead_stats').find(ok)?.output ?? {}) as LeadStats;
  const qualified = leadsFrom(results(s, 'search_leads'));
  const usage = (results(s, 'usage_summary').find(ok)?.output ?? {}) as {
    totals?: { costUsd?: number; runs?: number };
    budget?: { limitUsd?: number | null; pct?: number | null };
  };
  const cost = usage.totals?.costUsd ?? 0;
  const summary =
    `Last ${plural(days, 'day')}: ${plural(st.createdLast7Days ?? 0, 'new lead')} this week, ${st.total ?? 0} in total, ${plural(qualified.length, 'qualified lead')} to follow up; AI spend ${cost} USD over ${plural(usage.totals?.runs ?? 0, 'agent run')}` +
    (usage.budget?.pct != null ? ` (${usage.budget.pct} % of the monthly budget)` : '') +
    '.';
  const report = reportOf(s);
  if (!report) {
    const error = reportFailed(s);
    if (error) return { text: `${summary} The report could not be saved: ${error}` };
    const followUp = qualified.filter((l) => !(l.tags ?? []).includes('followed-up')).map((l) => l.id);
    const recommendations = [];
    if (followUp.length) {
      recommendations.push({
        title: `Start outreach to ${plural(followUp.length, 'qualified lead')}`,
        description: 'Moves them to CONTACTED.',
        action: { type: 'set_lead_status', params: { leadIds: followUp, status: 'CONTACTED' } },
      });
    }
    if ((st.byStatus?.NEW ?? 0) > 0) {
      recommendations.push({
        title: `Qualify the ${plural(st.byStatus!.NEW!, 'new lead')}`,
        description: 'Runs the lead qualifier on the NEW leads.',
        action: { type: 'run_agent', params: { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads', input: { status: 'NEW' } } },
      });
    }
    return {
      reasoning: 'Writing the digest.',
      toolCalls: [
        {
          toolName: 'create_report',
          input: {
            type: 'WEEKLY_DIGEST',
            title: `Digest: last ${plural(days, 'day')}`,
            summary,
            metrics: {
              totalLeads: st.total ?? 0,
              leadsLast7Days: st.createdLast7Days ?? 0,
              qualifiedLeads: qualified.length,
              averageScore: st.averageScore ?? null,
              aiCostUsd: cost,
              agentRuns: usage.totals?.runs ?? 0,
              budgetPct: usage.budget?.pct ?? null,
            },
            body: [
              '## Qualified leads to follow up',
              ...(qualified.length
                ? qualified.map((l) => `- ${l.name ?? l.email ?? l.id}${l.company ? ` (${l.company})` : ''}: score ${l.score ?? 'n/a'}`)
                : ['- none']),
            ].join('\n'),
            recommendations,
          },
        },
      ],
    };
  }
  return closing(s, `${summary} Report ${report.reportId}.`);
}
