import { results, ok, leadsFrom, reportOf, closing, reportFailed, urlsOf, type PlanState, type Turn, type LeadStats } from './kit.ts';
import { keywords, plural } from './text.ts';
import { analyticsReport, isAnalyticsReport } from './analytics-reports.ts';

// MARKET_ANALYST: the pipeline's statistics, recent leads and the pages the input names, made into
// a market research report (or, asked for one, an analytics report).

export function marketAnalyst(s: PlanState): Turn {
  if (isAnalyticsReport(s.input.reportType)) return analyticsReport(s, s.input.reportType);
  const stats = results(s, 'lead_stats');
  if (stats.length === 0) {
    const urls = s.tools.has('fetch_web_page') ? urlsOf(s.input) : [];
    return {
      reasoning: `Reading the pipeline statistics and recent leads${urls.length ? ` and ${plural(urls.length, 'web page')}` : ''}.`,
      toolCalls: [
        { toolName: 'lead_stats', input: {} },
        { toolName: 'search_leads', input: { limit: 50 } },
        ...urls.map((url) => ({ toolName: 'fetch_web_page', input: { url } })),
      ],
    };
  }
  const st = (ok(stats[0]!) ? stats[0]!.output : {}) as LeadStats;
  const leads = leadsFrom(results(s, 'search_leads'));
  const pages = results(s, 'fetch_web_page').map((r) => ({
    url: String(r.input.url),
    ...(r.output as { title?: string | null; text?: string; error?: string }),
  }));
  const total = st.total ?? 0;
  const sources = Object.entries(st.bySource ?? {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const top = sources[0];
  const newCount = st.byStatus?.NEW ?? 0;
  const qualifiedCount = st.byStatus?.QUALIFIED ?? 0;
  const pageKeywords = pages.filter((p) => p.text).map((p) => ({ ...p, keywords: keywords(`${p.title ?? ''} ${p.text ?? ''}`) }));
  const summary =
    `${plural(total, 'lead')} in the pipeline (${st.createdLast30Days ?? 0} in the last 30 days, ${newCount} new, ${qualifiedCount} qualified)` +
    (top ? `; strongest source: ${top[0]} with ${Math.round((top[1] / Math.max(1, total)) * 100)} %` : '') +
    (pageKeywords.length
      ? `; ${plural(pageKeywords.length, 'page')} analysed (themes: ${pageKeywords.flatMap((p) => p.keywords.slice(0, 3)).join(', ')})`
      : '') +
    '.';
  const report = reportOf(s);
  if (!report) {
    const error = reportFailed(s);
    if (error) return { text: `${summary} The report could not be saved: ${error}` };
    const recommendations = [];
    if (newCount > 0) {
      recommendations.push({
        title: `Qualify the ${plural(newCount, 'new lead')}`,
        description: 'Runs the lead qualifier on the NEW leads so sales can focus on the strongest.',
        action: { type: 'run_agent', params: { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads', input: { status: 'NEW' } } },
      });
    }
    const fromTop = top ? leads.filter((l) => l.source === top[0]).map((l) => l.id) : [];
    if (top && fromTop.length) {
      recommendations.push({
        title: `Start a dedicated campaign for the "${top[0]}" channel`,
        description: `Tags the ${plural(fromTop.length, 'recent lead')} from ${top[0]} so a campaign can target them.`,
        action: {
          type: 'tag_leads',
          params: {
            leadIds: fromTop,
            tags: [
              `campaign-${top[0]
                .toLowerCase()
                .replace(/[^a-z0-9]+/g, '-')
                .slice(0, 60)}`,
            ],
          },
        },
      });
    }
    const themes = pageKeywords.flatMap((p) => p.keywords.slice(0, 2));
    if (themes.length) {
      recommendations.push({
        title: `Publish content on ${themes.slice(0, 3).join(', ')}`,
        description: 'The analysed pages compete on these themes.',
        action: {
          type: 'run_agent',
          params: { type: 'CONTENT_WRITER', task: `Write a post on ${themes.slice(0, 3).join(', ')}`, input: { topic: themes.slice(0, 3).join(', ') } },
        },
      });
    }
    const body = [
      '## Pipeline',
      `- Leads: ${total} (last 7 days: ${st.createdLast7Days ?? 0}, last 30 days: ${st.createdLast30Days ?? 0})`,
      `- Average score: ${st.averageScore ?? 'n/a'}`,
      `- By status: ${
        Object.entries(st.byStatus ?? {})
          .filter(([, n]) => n > 0)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ') || 'none'
      }`,
      '',
      '## Sources',
      ...(sources.length ? sources.map(([k, n]) => `- ${k}: ${n} (${Math.round((n / Math.max(1, total)) * 100)} %)`) : ['- none']),
      ...(pages.length
        ? [
            '',
            '## Pages',
            ...pages.map((p) =>
              p.error ? `- ${p.url}: ${p.error}` : `- ${p.url} — ${p.title ?? 'untitled'}; themes: ${keywords(`${p.title ?? ''} ${p.text ?? ''}`).join(', ')}`,
            ),
          ]
        : []),
    ].join('\n');
    return {
      reasoning: 'Writing the market research report.',
      toolCalls: [
        {
          toolName: 'create_report',
          input: {
            type: 'MARKET_RESEARCH',
            title: `Market research: ${s.task.slice(0, 120)}`,
            summary,
            metrics: {
              totalLeads: total,
              newLeads: newCount,
              qualifiedLeads: qualifiedCount,
              averageScore: st.averageScore ?? null,
              leadsLast30Days: st.createdLast30Days ?? 0,
              topSource: top?.[0] ?? null,
              pagesAnalyzed: pageKeywords.length,
            },
            body,
            recommendations,
          },
        },
      ],
    };
  }
  return closing(s, `${summary} Report ${report.reportId} has the details and next steps.`);
}
