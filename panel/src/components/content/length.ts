/**
 * How long a post is as its platform counts it, with the same rules the server checks
 * (src/shared/platforms.ts): the published text is the body plus the hashtags it does not already
 * contain; X weighs a link as 23 and emoji and CJK characters as 2; LinkedIn counts characters.
 */
import { composeText, MAX_LENGTH, platformLength, type Platform } from '../../../../src/shared/platforms.ts';
import { xLength } from '../../../../src/shared/x-length.ts';

export interface Count {
  platform: Platform;
  /** The text that would be published. */
  text: string;
  length: number;
  max: number;
  /** Characters over the limit (0 within it). */
  over: number;
}

export function countPost(platform: Platform, body: string, hashtags: string[]): Count {
  const text = composeText(body, hashtags);
  const length = platformLength(platform, text);
  const max = MAX_LENGTH[platform];
  return { platform, text, length, max, over: Math.max(0, length - max) };
}

/**
 * Hashtags as typed ("launch, #spring sale" → ["#launch", "#spring", "#sale"]): separated by spaces
 * or commas, a missing leading # added, duplicates dropped.
 */
export function parseHashtags(input: string): string[] {
  const tags = input
    .split(/[\s,]+/u)
    .map((t) => t.replace(/^#+/u, ''))
    .filter(Boolean)
    .map((t) => `#${t}`);
  return [...new Set(tags)];
}

export type Piece = { kind: 'text' | 'link' | 'hashtag'; text: string };

/**
 * The text cut into plain text, links and hashtags, for the previews. Links are the ones X counts
 * as 23 (its own URL detection, so the preview marks exactly what the counter weighs); hashtags are
 * `#` words at the start or after a space.
 */
export function pieces(text: string): Piece[] {
  const normalized = text.normalize('NFC');
  const out: Piece[] = [];
  const push = (kind: Piece['kind'], value: string) => {
    if (!value) return;
    const last = out.at(-1);
    if (last && last.kind === kind && kind === 'text') last.text += value;
    else out.push({ kind, text: value });
  };
  let at = 0;
  for (const [start, end] of xLength(normalized).urls) {
    hashtagsIn(normalized.slice(at, start), push);
    push('link', normalized.slice(start, end));
    at = end;
  }
  hashtagsIn(normalized.slice(at), push);
  return out;
}

function hashtagsIn(text: string, push: (kind: Piece['kind'], value: string) => void): void {
  let at = 0;
  for (const m of text.matchAll(/(^|\s)(#[\p{L}\p{N}_]+)/gu)) {
    const start = m.index + m[1]!.length;
    push('text', text.slice(at, start));
    push('hashtag', m[2]!);
    at = start + m[2]!.length;
  }
  push('text', text.slice(at));
}
