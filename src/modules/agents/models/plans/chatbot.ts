import { faqAnswer, type FaqEntry } from '../../../../shared/faq.ts';
import { results, type PlanState, type Turn } from './kit.ts';
import { plural } from './text.ts';

// CHATBOT: one turn of the conversations bot, answering from the inbox's FAQ.

const ASKS_FOR_PERSON =
  /\b(human|humans|agent|agents|person|people|someone|somebody|representative|operator|real person|staff member|customer service|support team|talk to (a|an|someone|somebody|your)|speak (to|with) (a|an|someone|somebody|your))\b/i;
const CLOSING =
  /^\s*(thanks?( you)?( so much| a lot)?|thank you|thx|ty|bye|goodbye|that'?s all|all good|perfect|great)[\s!.,]*(that'?s all|bye|goodbye|thanks?( you)?)?[\s!.,]*$/i;

/** Whether the contact asks for a person ("talk to someone", "a human please", "an agent"). */
export function asksForPerson(text: string): boolean {
  return ASKS_FOR_PERSON.test(text);
}

function faqOf(input: Record<string, unknown>): FaqEntry[] {
  return (Array.isArray(input.faq) ? input.faq : []).filter(
    (e): e is FaqEntry => Boolean(e) && typeof (e as FaqEntry).question === 'string' && typeof (e as FaqEntry).answer === 'string',
  );
}

function newMessages(input: Record<string, unknown>): string[] {
  return (Array.isArray(input.messages) ? input.messages : [])
    .map((m) => (typeof m === 'string' ? m : typeof (m as { text?: unknown })?.text === 'string' ? (m as { text: string }).text : ''))
    .filter((t) => t.trim().length > 0);
}

/**
 * One turn of the conversations bot: a request for a person, or messages the FAQ cannot answer,
 * hand the conversation off; a thank-you closes it; anything else is answered from the FAQ.
 */
export function chatbot(s: PlanState): Turn {
  const texts = newMessages(s.input);
  const acted = results(s, 'reply', 'handoff', 'close');
  if (acted.length === 0) {
    if (texts.length === 0) return { text: 'Nothing new to answer.' };
    if (texts.some(asksForPerson)) {
      return {
        reasoning: 'The contact asks for a person: handing the conversation off.',
        toolCalls: [{ toolName: 'handoff', input: { reason: 'contact asked for a person' } }],
      };
    }
    if (texts.every((t) => CLOSING.test(t))) {
      return {
        reasoning: 'The contact is done: saying goodbye and closing the conversation.',
        toolCalls: [
          { toolName: 'reply', input: { text: 'You are welcome! Glad I could help. Goodbye.' } },
          { toolName: 'close', input: {} },
        ],
      };
    }
    const faq = faqOf(s.input);
    const answers = [
      ...new Set(
        texts
          .map((t) => faqAnswer(t, faq))
          .filter((e): e is FaqEntry => e !== null)
          .map((e) => e.answer),
      ),
    ];
    if (answers.length === 0) {
      return {
        reasoning: 'The FAQ has no answer to this: handing the conversation off.',
        toolCalls: [{ toolName: 'handoff', input: { reason: 'no answer in the FAQ' } }],
      };
    }
    return {
      reasoning: `Answering from the FAQ (${plural(answers.length, 'answer')}).`,
      toolCalls: [{ toolName: 'reply', input: { text: answers.join('\n\n') } }],
    };
  }
  const parts: string[] = [];
  for (const r of acted) {
    const out = (r.output ?? {}) as { error?: string; dropped?: boolean; reason?: string };
    if (out.error) parts.push(`${r.toolName} failed: ${out.error}`);
    else if (r.toolName === 'reply')
      parts.push(out.dropped ? `The reply was dropped: ${out.reason ?? 'a person handles the conversation'}` : 'Answered from the FAQ');
    else if (r.toolName === 'handoff') parts.push(`Handed off to a person (${String(r.input.reason ?? '')})`);
    else parts.push('Closed the conversation');
  }
  return { text: `${parts.join('; ')}.` };
}
