/**
 * What the offline model does, per agent type: a fixed, documented plan that calls the type's tools
 * on the organization's real data and turns their results into a templated report and summary.
 * Every decision is a pure function of the conversation so far (the tool results in the prompt).
 */
import { chatbotAnalyst } from './plans/chatbot-analyst.ts';
import { chatbot } from './plans/chatbot.ts';
import { contentWriter } from './plans/content-writer.ts';
import type { PlanState, Turn } from './plans/kit.ts';
import { leadQualifier } from './plans/lead-qualifier.ts';
import { marketAnalyst } from './plans/market-analyst.ts';
import { reportWriter } from './plans/report-writer.ts';

const PLANS: Record<string, (s: PlanState) => Turn> = {
  LEAD_QUALIFIER: leadQualifier,
  MARKET_ANALYST: marketAnalyst,
  REPORT_WRITER: reportWriter,
  CONTENT_WRITER: contentWriter,
  CHATBOT: chatbot,
  CHATBOT_ANALYST: chatbotAnalyst,
};

export function planTurn(s: PlanState): Turn {
  const plan = PLANS[s.agentType];
  if (!plan) return { text: `The offline model has no plan for agent type ${s.agentType}; nothing was done.` };
  // Offer only the tools the run actually has.
  const turn = plan(s);
  if (turn.toolCalls) turn.toolCalls = turn.toolCalls.filter((c) => s.tools.has(c.toolName));
  if (turn.toolCalls && turn.toolCalls.length === 0) delete turn.toolCalls;
  if (!turn.toolCalls && !turn.text) turn.text = 'Done.';
  return turn;
}
