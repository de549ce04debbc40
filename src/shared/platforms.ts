/**
 * The publishing platforms' rules: which platforms there are, how long a post may be and how each
 * platform counts it, and the text that is published. Pure and dependency-free: the server checks
 * posts with it and the web panel's editor counts with it, so both count the same way.
 */
import { xLength } from './x-length.ts';

export const PLATFORMS = ['LINKEDIN', 'X'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** Characters as each platform counts them. */
export const MAX_LENGTH: Record<Platform, number> = { LINKEDIN: 3000, X: 280 };
export const MAX_MEDIA: Record<Platform, number> = { LINKEDIN: 20, X: 4 };

/** The text that is published: the body, then the hashtags the body does not already contain. */
export function composeText(body: string, hashtags: string[]): string {
  const missing = hashtags.filter((h) => !new RegExp(`(^|\\s)${h.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=$|[\\s.,;:!?])`, 'iu').test(body));
  return missing.length ? `${body.trimEnd()}\n\n${missing.join(' ')}` : body;
}

/** Length as the platform counts it: X weighs URLs as 23 and emoji/CJK as 2 (twitter-text v3 rules); LinkedIn counts characters. */
export function platformLength(platform: Platform, text: string): number {
  if (platform === 'X') return xLength(text).weightedLength;
  return [...text].length;
}
