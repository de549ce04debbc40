import { badRequest } from '../../platform/errors.ts';
import { xLength } from '../../shared/x-length.ts';

export const PLATFORMS = ['LINKEDIN', 'X'] as const;
export type Platform = (typeof PLATFORMS)[number];

export const POST_STATUSES = ['DRAFT', 'APPROVED', 'SCHEDULED', 'PUBLISHING', 'PUBLISHED', 'FAILED'] as const;
export type PostStatus = (typeof POST_STATUSES)[number];

/**
 * Which status allows what (CONTRACT §6). A post is approved from DRAFT (or again after a FAILED
 * publish); approval makes it SCHEDULED (future scheduledAt), PUBLISHING (an integration and no
 * future time) or APPROVED (no integration yet). Only the publisher moves PUBLISHING to PUBLISHED
 * or FAILED. Editing the text of an approved, scheduled or failed post sends it back to DRAFT.
 */
export const CAN = {
  edit: ['DRAFT', 'APPROVED', 'SCHEDULED', 'FAILED'],
  approve: ['DRAFT', 'FAILED'],
  publish: ['APPROVED', 'SCHEDULED', 'FAILED'],
  delete: ['DRAFT', 'APPROVED', 'SCHEDULED', 'PUBLISHED', 'FAILED'],
} as const satisfies Record<string, readonly PostStatus[]>;

export function allowed(action: keyof typeof CAN, status: string): boolean {
  return (CAN[action] as readonly string[]).includes(status);
}

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

export function checkPost(platform: Platform, body: string, hashtags: string[], field = 'body'): void {
  if (body.trim() === '') throw badRequest('The post body is empty', [{ field, message: 'must not be blank' }]);
  const bad = hashtags.find((h) => !/^#[^\s#]+$/u.test(h));
  if (bad !== undefined) {
    throw badRequest(`Hashtag "${bad}" must start with # and contain no spaces`, [{ field: 'body.hashtags', message: 'each hashtag needs a leading # and no spaces' }]);
  }
  const text = composeText(body, hashtags);
  const length = platformLength(platform, text);
  if (length > MAX_LENGTH[platform]) {
    const how = platform === 'X' ? ' as X counts them (links count 23, emoji and CJK characters 2)' : '';
    throw badRequest(`${platform} posts are at most ${MAX_LENGTH[platform]} characters${how}; this one is ${length} with its hashtags`, [
      { field, message: `is ${length} characters; ${platform} allows ${MAX_LENGTH[platform]}` },
    ]);
  }
}

/** A one-line title for calendars and lists. */
export function excerpt(body: string, max = 80): string {
  const line = body.split('\n').map((l) => l.trim()).find(Boolean) ?? '';
  const chars = [...line];
  return chars.length > max ? chars.slice(0, max - 1).join('') + '…' : line;
}
