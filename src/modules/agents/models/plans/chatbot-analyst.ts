import { results, ok, num, str, reportOf, closing, reportFailed, type PlanState, type Turn } from './kit.ts';
import { plural } from './text.ts';

// CHATBOT_ANALYST (and REPORT_WRITER's CHATBOT_INSIGHTS): the conversation figures of the last days.

interface ConversationFigures {
  opened?: number;
  closed?: number;
  closedByBot?: number;
  handoffs?: number;
  handoffReasons?: Record<string, number>;
  medianFirstReplySec?: number | null;
  medianHandoffSec?: number | null;
  handedOff?: { conversationId: string; leadId: string | null; reason?: string; channel?: string }[];
}

export function chatbotAnalyst(s: PlanState): Turn {
  const days = Math.min(366, Math.max(1, num(s.input.days, 30)));
  const stats = results(s, 'conversation_stats');
  if (stats.length === 0) {
    const input: Record<string, unknown> = { days };
    if (str(s.input.inboxId)) input.inboxId = str(s.input.inboxId);
    return { reasoning: `Reading the conversation figures of the last ${plural(days, 'day')}.`, toolCalls: [{ toolName: 'conversation_stats', input }] };
  }
  const st = (ok(stats[0]!) ? stats[0]!.output : {}) as ConversationFigures;
  if (!ok(stats[0]!))
    return { text: `The conversation figures could not be read: ${String((stats[0]!.output as { error?: unknown })?.error ?? 'unknown error')}` };
  const opened = st.opened ?? 0;
  const closed = st.closed ?? 0;
  const byBot = st.closedByBot ?? 0;
  const handoffs = st.handoffs ?? 0;
  const reasons = Object.entries(st.handoffReasons ?? {}).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const botRate = closed ? Math.round((byBot / closed) * 100) : null;
  const handoffRate = opened ? Math.round((handoffs / opened) * 100) : null;
  const summary =
    `Last ${plural(days, 'day')}: ${plural(opened, 'conversation')} opened, ${closed} closed (${byBot} by the bot${botRate !== null ? `, ${botRate} %` : ''}), ` +
    `${plural(handoffs, 'handoff')}${handoffRate !== null ? ` (${handoffRate} % of the opened)` : ''}` +
    (reasons.length ? `; main reason: ${reasons[0]![0]} (${reasons[0]![1]})` : '') +
    '.';
  const report = reportOf(s);
  if (!report) {
    const error = reportFailed(s);
    if (error) return { text: `${summary} The report could not be saved: ${error}` };
    const leadIds = [...new Set((st.handedOff ?? []).map((c) => c.leadId).filter((id): id is string => typeof id === 'string'))];
    const recommendations = [];
    if (leadIds.length) {
      recommendations.push({
        title: `Tag the ${plural(leadIds.length, 'lead')} the bot handed to people for follow-up`,
        description: 'Marks the contacts who needed a person, so the sales team follows them up.',
        action: { type: 'tag_leads', params: { leadIds: leadIds.slice(0, 1000), tags: ['chatbot-handoff'] } },
      });
    }
    if (opened > 0) {
      recommendations.push({
        title: 'Qualify the new leads the conversations brought',
        description: 'Runs the lead qualifier on the NEW leads.',
        action: { type: 'run_agent', params: { type: 'LEAD_QUALIFIER', task: 'Qualify the new leads', input: { status: 'NEW' } } },
      });
    }
    const unanswered = (st.handoffReasons ?? {})['no answer in the FAQ'] ?? 0;
    const body = [
      '## Conversations',
      `- Opened: ${opened}; closed: ${closed}; closed by the bot: ${byBot}${botRate !== null ? ` (${botRate} %)` : ''}`,
      `- Handoffs: ${handoffs}${handoffRate !== null ? ` (${handoffRate} % of the opened)` : ''}`,
      `- Median time to the first human reply: ${st.medianFirstReplySec ?? 'n/a'} s; to the handoff: ${st.medianHandoffSec ?? 'n/a'} s`,
      '',
      '## Handoff reasons',
      ...(reasons.length ? reasons.map(([k, n]) => `- ${k}: ${n}`) : ['- none']),
      ...(unanswered
        ? ['', `## FAQ`, `- ${plural(unanswered, 'conversation')} had no answer in the FAQ: read them and add their questions to the inbox's FAQ.`]
        : []),
    ].join('\n');
    return {
      reasoning: 'Writing the chatbot insights.',
      toolCalls: [
        {
          toolName: 'create_report',
          input: {
            type: 'CHATBOT_INSIGHTS',
            title: `Chatbot insights: last ${plural(days, 'day')}`,
            summary,
            metrics: {
              opened,
              closed,
              closedByBot: byBot,
              botResolutionPct: botRate,
              handoffs,
              handoffPct: handoffRate,
              medianFirstReplySec: st.medianFirstReplySec ?? null,
              medianHandoffSec: st.medianHandoffSec ?? null,
            },
            body,
            recommendations,
          },
        },
      ],
    };
  }
  return closing(s, `${summary} Report ${report.reportId}.`);
}
