import type { AgentTypeName } from '../../shared/agents.ts';
import type { ReportType } from '../../shared/reports.ts';

/** The agent-type catalog: the built-in types a saved agent or a run names (`LEAD_QUALIFIER`, …), each with its instructions, tools and report type. */

export interface AgentTypeDef {
  type: string;
  description: string;
  /** The system instructions of the type; a saved agent's own instructions are added after them. */
  instructions: string;
  /** Tool names (tools/index.ts); `handoff` is added for every type. Tools whose module is missing are left out. */
  tools: string[];
  /** The report type it writes. */
  reportType: ReportType;
  /** Other report types it writes when the run's `input.reportType` names one. */
  alsoWrites?: ReportType[];
  /**
   * A conversation's bot (CHATBOT): its runs are turns started by the conversations module for one
   * conversation (`input.conversationId`), one at a time per conversation. It writes no report, no
   * agent hands over to it, and its own `handoff` tool hands the conversation to people.
   */
  conversational?: boolean;
}

const COMMON =
  "Work only with the tools and the organization's real data; never invent records or numbers. " +
  'Finish with one create_report call (unless there is nothing to report), then answer with a short plain-text summary of what you did and found.';
/** How the analytics reports are written (MARKET_ANALYST and REPORT_WRITER, by input.reportType). */
const ANALYTICS =
  'When input.reportType is ANALYTICS_REVIEW, SEO_AUDIT or TRAFFIC_STRATEGY, write that report instead from analytics_summary for input.days (default 28): ' +
  'ANALYTICS_REVIEW the traffic, users and conversions and their change against the previous period; SEO_AUDIT the Search Console clicks, impressions, click-through rate and average position; ' +
  'TRAFFIC_STRATEGY where the visits come from and convert, and where to invest next. Quote the real numbers; with no synced data, say how to connect Google and recommend first steps. ';

export const AGENT_TYPES: Record<string, AgentTypeDef> = {
  LEAD_QUALIFIER: {
    type: 'LEAD_QUALIFIER',
    description:
      'Scores leads by the data they carry (contact details, company, website, source, tags), qualifies the strong ones (lead.qualified with score and reason) and writes a LEAD_QUALIFICATION report with follow-up actions.',
    instructions:
      'You qualify sales leads. Find the leads to evaluate (input.leadIds or input.leadId, the lead in input.item when a workflow runs you, else input.status — NEW by default). ' +
      'Score each 0-100 from the evidence present: reachable contact (email, phone), a business email domain, company, website, source and tags. ' +
      'Qualify (qualify_lead) those at or above input.threshold (default 60) with a one-sentence reason; record the score of the others with update_lead. ' +
      COMMON,
    tools: ['search_leads', 'get_lead', 'update_lead', 'qualify_lead', 'lead_stats'],
    reportType: 'LEAD_QUALIFICATION',
  },
  MARKET_ANALYST: {
    type: 'MARKET_ANALYST',
    description:
      'Analyses the lead base (sources, statuses, scores) and public web pages given in input.urls, and writes a MARKET_RESEARCH report with recommended next steps ' +
      '(input.reportType ANALYTICS_REVIEW, SEO_AUDIT or TRAFFIC_STRATEGY: that report from the synced Google Analytics and Search Console numbers instead).',
    instructions:
      'You are a market analyst for a marketing team. Use lead_stats and search_leads to understand the pipeline, ' +
      'and fetch_web_page for any page in input.url / input.urls (competitors, market pages). Identify the strongest channels, gaps and opportunities. ' +
      ANALYTICS +
      COMMON,
    tools: ['lead_stats', 'search_leads', 'fetch_web_page', 'usage_summary', 'analytics_summary'],
    reportType: 'MARKET_RESEARCH',
    alsoWrites: ['ANALYTICS_REVIEW', 'SEO_AUDIT', 'TRAFFIC_STRATEGY'],
  },
  REPORT_WRITER: {
    type: 'REPORT_WRITER',
    description:
      'Writes a WEEKLY_DIGEST report: pipeline figures, qualified leads to follow up, AI usage and budget (input.reportType CHATBOT_INSIGHTS, CAMPAIGN_SUMMARY with input.campaignId, ' +
      'or ANALYTICS_REVIEW, SEO_AUDIT, TRAFFIC_STRATEGY from the synced Google numbers: that report instead).',
    instructions:
      'You write the weekly digest for the team. Gather lead_stats, the qualified leads (search_leads status QUALIFIED) and usage_summary for input.days (default 7), ' +
      'then write a concise digest with the key numbers and concrete follow-ups. ' +
      'When input.reportType is CHATBOT_INSIGHTS, write that report instead, as the CHATBOT_ANALYST type does: from conversation_stats for input.days (default 30), ' +
      "the bot's resolution rate, the handoff reasons, the FAQ questions to add and concrete follow-ups. " +
      'When input.reportType is CAMPAIGN_SUMMARY, write that report instead from campaign_stats for input.campaignId: what was sent, delivered, read and answered, ' +
      'why recipients were skipped or failed, and follow-ups for the leads who replied and those who did not. ' +
      ANALYTICS +
      COMMON,
    tools: ['lead_stats', 'search_leads', 'usage_summary', 'conversation_stats', 'campaign_stats', 'analytics_summary'],
    reportType: 'WEEKLY_DIGEST',
    alsoWrites: ['CHATBOT_INSIGHTS', 'CAMPAIGN_SUMMARY', 'ANALYTICS_REVIEW', 'SEO_AUDIT', 'TRAFFIC_STRATEGY'],
  },
  CONTENT_WRITER: {
    type: 'CONTENT_WRITER',
    description: 'Writes social media post drafts on a topic (input.topic, input.platforms, input.count) and a CONTENT_PLAN report.',
    instructions:
      'You write social media posts for the brand. Topic: input.topic (or the task). Platforms: input.platforms (default LINKEDIN). ' +
      'Write input.count posts per platform (default 1): a hook line, two or three short lines of substance, a call to action, 2-4 hashtags. ' +
      'Keep X posts under 280 characters. Save each with create_draft when available; optionally read input.url with fetch_web_page first. ' +
      COMMON,
    tools: ['create_draft', 'fetch_web_page', 'lead_stats', 'request_approval'],
    reportType: 'CONTENT_PLAN',
  },
  CHATBOT: {
    type: 'CHATBOT',
    description:
      "The conversations bot: takes one turn in a bot-handled conversation when the contact writes — answers from the inbox's FAQ and the lead's data, records what the contact tells about themselves, closes a resolved thread, and hands off to people when it cannot help or the contact asks for a person.",
    instructions:
      "You are the first-line assistant answering a customer in a chat. The input holds the conversation: `messages` are the contact's new messages to answer, " +
      '`transcript` the recent thread (oldest first), `faq` the questions and answers you may use, `contact` who is writing. ' +
      "Answer only from the FAQ, the lead (lookupLead) and the transcript; never invent prices, dates, policies or promises. Keep answers short and friendly, in the contact's language. " +
      'Send your answer with reply (one reply per turn). When the contact gives an e-mail address, a phone number, a company or a name, record it with updateLead. ' +
      'Call handoff with a short reason (e.g. "contact asked for a person", "no answer in the FAQ") when the contact asks for a human, agent or person, when the FAQ has no answer, ' +
      'or when the contact is upset; do not reply after a handoff. Call close when the contact says the matter is settled. ' +
      'If a tool answers that a person handles the conversation, stop at once. Finish with a one-line plain-text summary of the turn.',
    tools: ['reply', 'handoff', 'close', 'lookupLead', 'updateLead'],
    reportType: 'CHATBOT_INSIGHTS',
    conversational: true,
  },
  CHATBOT_ANALYST: {
    type: 'CHATBOT_ANALYST',
    description:
      'Reviews the conversations of a period (input.days, default 30; input.inboxId): how many the bot resolved, handoffs and their reasons, reply and handoff times, and writes a CHATBOT_INSIGHTS report with follow-up actions.',
    instructions:
      'You review how the conversations bot performs. Read conversation_stats for input.days (default 30) and input.inboxId if given: conversations opened and closed, ' +
      'closed by the bot, handoffs and their reasons, median seconds to the first human reply and to the handoff, and the recently handed-off conversations with their leads. ' +
      "Explain the bot's resolution rate and the main handoff reasons, say which questions to add to the inbox FAQ, and recommend concrete follow-ups " +
      '(e.g. tag the handed-off leads for the sales team, qualify the leads the conversations brought). ' +
      COMMON,
    tools: ['conversation_stats', 'lead_stats'],
    reportType: 'CHATBOT_INSIGHTS',
  },
} satisfies Record<AgentTypeName, AgentTypeDef>;

/** Types whose runs are conversation turns, taken by the conversations bot's loop rather than the agent runner. */
export const CONVERSATIONAL_TYPES = Object.values(AGENT_TYPES)
  .filter((t) => t.conversational)
  .map((t) => t.type);
