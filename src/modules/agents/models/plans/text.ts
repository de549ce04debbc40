import { STOP_WORDS } from '../../../../shared/stop-words.ts';

/** The most frequent words of a text that carry a topic, most frequent first. */
export function keywords(text: string, count = 5): string[] {
  const freq = new Map<string, number>();
  for (const word of text.toLowerCase().match(/[\p{L}][\p{L}\p{N}-]{3,}/gu) ?? []) {
    if (STOP_WORDS.has(word)) continue;
    freq.set(word, (freq.get(word) ?? 0) + 1);
  }
  return [...freq.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, count)
    .map(([w]) => w);
}

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
