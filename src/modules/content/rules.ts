import { badRequest } from '../../platform/errors.ts';
import { composeText, MAX_LENGTH, platformLength, type Platform } from '../../shared/platforms.ts';

export function checkPost(platform: Platform, body: string, hashtags: string[], field = 'body'): void {
  if (body.trim() === '') throw badRequest('The post body is empty', [{ field, message: 'must not be blank' }]);
  const bad = hashtags.find((h) => !/^#[^\s#]+$/u.test(h));
  if (bad !== undefined) {
    throw badRequest(`Hashtag "${bad}" must start with # and contain no spaces`, [
      { field: 'body.hashtags', message: 'each hashtag needs a leading # and no spaces' },
    ]);
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
  const line =
    body
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean) ?? '';
  const chars = [...line];
  return chars.length > max ? chars.slice(0, max - 1).join('') + '…' : line;
}
