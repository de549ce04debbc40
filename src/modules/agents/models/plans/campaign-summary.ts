import { results, ok, str, reportOf, closing, reportFailed, type PlanState, type Turn } from './kit.ts';
import { plural } from './text.ts';

// CAMPAIGN_SUMMARY (REPORT_WRITER): a campaign's results and what to do with who replied and who did not.

interface CampaignFigures {
  campaign?: { id: string; name: string; channel: string; status: string; steps?: unknown[]; stats?: Record<string, number> };
  skipped?: Record<string, number>;
  repliedLeadIds?: string[];
  unansweredLeadIds?: string[];
}

export function campaignSummary(s: PlanState): Turn {
  const campaignId = str(s.input.campaignId);
  if (!campaignId) return { text: 'A CAMPAIGN_SUMMARY needs input.campaignId: the campaign to summarise.' };
  const figures = results(s, 'campaign_stats');
  if (figures.length === 0) return { reasoning: "Reading the campaign's figures.", toolCalls: [{ toolName: 'campaign_stats', input: { campaignId } }] };
  if (!ok(figures[0]!))
    return { text: `The campaign's figures could not be read: ${String((figures[0]!.output as { error?: unknown })?.error ?? 'unknown error')}` };
  const f = figures[0]!.output as CampaignFigures;
  const c = f.campaign!;
  const st = { total: 0, sent: 0, delivered: 0, read: 0, replied: 0, failed: 0, skipped: 0, pending: 0, ...(c.stats ?? {}) };
  const pct = (n: number, of: number) => (of ? Math.round((n / of) * 100) : null);
  const replyRate = pct(st.replied, st.sent);
  const summary =
    `"${c.name}" (${c.channel}, ${c.status}): ${st.sent} of ${plural(st.total, 'recipient')} sent, ${st.delivered} delivered, ${st.read} read, ` +
    `${plural(st.replied, 'reply')}${replyRate !== null ? ` (${replyRate} % of the sent)` : ''}, ${st.failed} failed, ${st.skipped} skipped` +
    (st.pending ? `, ${st.pending} still pending` : '') +
    '.';
  const report = reportOf(s);
  if (report) return closing(s, `${summary} Report ${report.reportId}.`);
  const error = reportFailed(s);
  if (error) return { text: `${summary} The report could not be saved: ${error}` };
  const replied = f.repliedLeadIds ?? [];
  const unanswered = f.unansweredLeadIds ?? [];
  const recommendations = [];
  if (replied.length) {
    recommendations.push({
      title: `Qualify the ${plural(replied.length, 'lead')} who replied`,
      description: 'They answered the campaign: mark them ENGAGED so the sales team takes the conversation on.',
      action: { type: 'set_lead_status', params: { leadIds: replied.slice(0, 1000), status: 'ENGAGED' } },
    });
  }
  if (unanswered.length) {
    recommendations.push({
      title: `Tag the ${plural(unanswered.length, 'lead')} who did not answer`,
      description: 'They received every step without replying: a tag lets a later campaign (another channel or angle) reach exactly them.',
      action: { type: 'tag_leads', params: { leadIds: unanswered.slice(0, 1000), tags: [`no-reply-${c.id.slice(-6)}`] } },
    });
  }
  recommendations.push({
    title: 'Score the leads this campaign reached',
    description: 'Runs the lead qualifier, so the replies and engagement show in the scores.',
    action: {
      type: 'run_agent',
      params: { type: 'LEAD_QUALIFIER', task: `Qualify the leads of campaign ${c.name}`, input: { leadIds: [...replied, ...unanswered].slice(0, 1000) } },
    },
  });
  const skipped = Object.entries(f.skipped ?? {}).sort((a, b) => b[1] - a[1]);
  const body = [
    '## Results',
    `- Recipients: ${st.total}; sent: ${st.sent}; delivered: ${st.delivered}${pct(st.delivered, st.sent) !== null ? ` (${pct(st.delivered, st.sent)} %)` : ''}; read: ${st.read}`,
    `- Replies: ${st.replied}${replyRate !== null ? ` (${replyRate} % of the sent)` : ''}; failed: ${st.failed}; pending: ${st.pending}`,
    '',
    '## Skipped',
    ...(skipped.length ? skipped.map(([reason, n]) => `- ${reason}: ${n}`) : ['- none']),
  ].join('\n');
  return {
    reasoning: 'Writing the campaign summary.',
    toolCalls: [
      {
        toolName: 'create_report',
        input: {
          type: 'CAMPAIGN_SUMMARY',
          title: `Campaign summary: ${c.name}`,
          summary,
          metrics: { ...st, replyPct: replyRate, deliveredPct: pct(st.delivered, st.sent), campaignId: c.id },
          body,
          recommendations,
        },
      },
    ],
  };
}
