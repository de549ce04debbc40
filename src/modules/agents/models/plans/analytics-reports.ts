import { results, ok, num, reportOf, closing, reportFailed, type PlanState, type Turn } from './kit.ts';
import { plural } from './text.ts';

// ANALYTICS_REVIEW · SEO_AUDIT · TRAFFIC_STRATEGY (MARKET_ANALYST, REPORT_WRITER): the synced analytics.

const ANALYTICS_REPORTS = ['ANALYTICS_REVIEW', 'SEO_AUDIT', 'TRAFFIC_STRATEGY'] as const;
type AnalyticsReport = (typeof ANALYTICS_REPORTS)[number];
export const isAnalyticsReport = (v: unknown): v is AnalyticsReport => ANALYTICS_REPORTS.includes(v as AnalyticsReport);

interface AnalyticsFigures {
  days: number;
  current: { from: string; to: string; totals: Record<string, number> };
  previous: { from: string; to: string; totals: Record<string, number> };
  changePct: Record<string, number | null>;
  daily: ({ date: string } & Record<string, number>)[];
  hasData: boolean;
}

/** The three analytics reports, from analytics_summary: the numbers, what moved, and actions this service can execute. */
export function analyticsReport(s: PlanState, type: AnalyticsReport): Turn {
  const days = Math.min(183, Math.max(1, num(s.input.days, 28)));
  const figures = results(s, 'analytics_summary');
  if (figures.length === 0)
    return { reasoning: `Reading the synced analytics of the last ${plural(days, 'day')}.`, toolCalls: [{ toolName: 'analytics_summary', input: { days } }] };
  if (!ok(figures[0]!)) return { text: `The analytics could not be read: ${String((figures[0]!.output as { error?: unknown })?.error ?? 'unknown error')}` };
  const f = figures[0]!.output as AnalyticsFigures;
  const cur = f.current.totals;
  const change = (metric: string) => {
    const pct = f.changePct[metric];
    return pct === null || pct === undefined ? 'no earlier figures' : `${pct > 0 ? '+' : ''}${pct} %`;
  };
  const line = (label: string, metric: string, digits = 0) =>
    `- ${label}: ${Number(cur[metric] ?? 0).toFixed(digits)} (${change(metric)} against ${f.previous.from} – ${f.previous.to})`;
  const sessions = cur['ga4.sessions'] ?? 0;
  const conversions = cur['ga4.conversions'] ?? 0;
  const conversionPct = sessions ? Math.round((conversions / sessions) * 1000) / 10 : null;
  const ctrPct = Math.round((cur['gsc.ctr'] ?? 0) * 1000) / 10;
  const position = Math.round((cur['gsc.position'] ?? 0) * 10) / 10;
  const best = [...f.daily].sort((a, b) => (b['ga4.sessions'] ?? 0) - (a['ga4.sessions'] ?? 0))[0];
  const period = `${f.current.from} – ${f.current.to}`;
  const summary = !f.hasData
    ? `No Google Analytics or Search Console numbers have been synced for ${period}: connect Google under Settings → Integrations, choose a property and a site, and the next report will have figures.`
    : type === 'SEO_AUDIT'
      ? `Search over ${period}: ${cur['gsc.clicks'] ?? 0} clicks (${change('gsc.clicks')}) from ${cur['gsc.impressions'] ?? 0} impressions, click-through rate ${ctrPct} %, average position ${position}.`
      : `Website over ${period}: ${sessions} sessions (${change('ga4.sessions')}), ${cur['ga4.users'] ?? 0} users, ${conversions} conversions` +
        (conversionPct !== null ? ` (${conversionPct} % of sessions)` : '') +
        `; search brought ${cur['gsc.clicks'] ?? 0} clicks.`;
  const report = reportOf(s);
  if (report) return closing(s, `${summary} Report ${report.reportId}.`);
  const error = reportFailed(s);
  if (error) return { text: `${summary} The report could not be saved: ${error}` };

  const recommendations = [];
  const fell = (metric: string, by: number) => (f.changePct[metric] ?? 0) <= -by;
  if (f.hasData && (fell('ga4.sessions', 10) || fell('gsc.clicks', 10))) {
    recommendations.push({
      title: 'Win the lost traffic back with new content',
      description: `Sessions ${change('ga4.sessions')}, search clicks ${change('gsc.clicks')}: the content writer drafts posts that send readers to the site.`,
      action: {
        type: 'run_agent',
        params: {
          type: 'CONTENT_WRITER',
          task: 'Write posts that bring visitors back to our website',
          input: { topic: 'our most useful guides and offers', platforms: ['LINKEDIN', 'X'] },
        },
      },
    });
  }
  if (f.hasData && (cur['gsc.impressions'] ?? 0) > 0 && ctrPct < 3) {
    recommendations.push({
      title: 'Raise the click-through rate from search',
      description: `Only ${ctrPct} % of ${cur['gsc.impressions']} impressions became clicks (average position ${position}): rewrite titles and descriptions of the pages that show most.`,
      action: {
        type: 'run_agent',
        params: {
          type: 'CONTENT_WRITER',
          task: 'Propose clearer page titles and meta descriptions for our most shown search results',
          input: { topic: 'search titles and descriptions' },
        },
      },
    });
  }
  if (f.hasData && sessions > 0 && conversionPct !== null && conversionPct < 2) {
    recommendations.push({
      title: 'Turn more visitors into leads',
      description: `${conversionPct} % of sessions converted: qualify the leads the site brought so sales follows up the best quickly.`,
      action: { type: 'run_agent', params: { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads from the website', input: { status: 'NEW' } } },
    });
  }
  if (type === 'TRAFFIC_STRATEGY' || recommendations.length === 0) {
    recommendations.push({
      title: 'Keep a steady publishing rhythm',
      description: 'A plan of posts for the coming weeks keeps visitors coming; the content writer drafts them for approval.',
      action: {
        type: 'run_agent',
        params: { type: 'CONTENT_WRITER', task: "Plan and draft next week's posts", input: { topic: 'what our customers ask most', count: 3 } },
      },
    });
  }
  const body = [
    `## ${period}`,
    ...(f.hasData
      ? []
      : ['No synced numbers yet: connect Google (Settings → Integrations), choose the GA4 property and the Search Console site, then sync.', '']),
    '### Website (GA4)',
    line('Sessions', 'ga4.sessions'),
    line('Users', 'ga4.users'),
    line('Conversions', 'ga4.conversions'),
    ...(conversionPct !== null ? [`- Conversion rate: ${conversionPct} %`] : []),
    ...(best && (best['ga4.sessions'] ?? 0) > 0 ? [`- Busiest day: ${best.date} (${best['ga4.sessions']} sessions)`] : []),
    '',
    '### Search (Search Console)',
    line('Clicks', 'gsc.clicks'),
    line('Impressions', 'gsc.impressions'),
    `- Click-through rate: ${ctrPct} % (${change('gsc.ctr')})`,
    `- Average position: ${position} (${change('gsc.position')}; lower is better)`,
  ].join('\n');
  const titles: Record<AnalyticsReport, string> = { ANALYTICS_REVIEW: 'Analytics review', SEO_AUDIT: 'SEO audit', TRAFFIC_STRATEGY: 'Traffic strategy' };
  return {
    reasoning: `Writing the ${titles[type].toLowerCase()}.`,
    toolCalls: [
      {
        toolName: 'create_report',
        input: {
          type,
          title: `${titles[type]}: ${period}`,
          summary,
          metrics: {
            ...cur,
            sessionsChangePct: f.changePct['ga4.sessions'] ?? null,
            clicksChangePct: f.changePct['gsc.clicks'] ?? null,
            conversionPct,
            days: f.days,
          },
          body,
          recommendations,
        },
      },
    ],
  };
}
