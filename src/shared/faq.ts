import { STOP_WORDS } from './stop-words.ts';

/**
 * FAQ matching by the words a message shares with a question: the offline chatbot's answers and the
 * conversations bot's choice of the entries it hands a model.
 */

const FAQ_STOP = new Set([
  ...STOP_WORDS,
  ...'what when where which who whom whose how why are is was were does did do can could would should will your you yours i me my mine we us our ours it its is a an the of to in on at for with from by about please hi hello hey thanks thank there their them they this that these those have has had any some'.split(
    ' ',
  ),
]);

/** A light stem: "opening", "opens" and "opened" all count as "open". */
function stem(word: string): string {
  for (const suffix of ['ing', 'ed', 'es', 's']) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) return word.slice(0, -suffix.length);
  }
  return word;
}

/** The words of a text that carry meaning (lower-case, stemmed, without stop words). */
export function contentWords(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (w.length < 3 || FAQ_STOP.has(w)) continue;
    out.add(stem(w));
  }
  return out;
}

export interface FaqEntry {
  question: string;
  answer: string;
}

/**
 * How well a message matches an FAQ question, by word overlap: the share of the question's words
 * the message contains (0 when none). A match needs two shared words, or half of a short question.
 */
export function faqScore(message: string, question: string): number {
  const q = contentWords(question);
  if (q.size === 0) return 0;
  const m = contentWords(message);
  let shared = 0;
  for (const w of q) if (m.has(w)) shared++;
  if (shared === 0 || (shared < 2 && shared / q.size < 0.5)) return 0;
  return shared / q.size + shared / 100;
}

/** The FAQ entry that answers a message best, if any matches. */
export function faqAnswer(message: string, faq: FaqEntry[]): FaqEntry | null {
  let best: FaqEntry | null = null;
  let bestScore = 0;
  for (const entry of faq) {
    const score = faqScore(message, entry.question);
    if (score > bestScore) {
      best = entry;
      bestScore = score;
    }
  }
  return best;
}
