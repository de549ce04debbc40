import { describe, expect, it } from 'vitest';
import { countPost, parseHashtags, pieces } from './length';
import { addMonths, daysOf, isDate, isFuture, shift, startOfWeek } from './dates';

describe('the length a platform counts', () => {
  it('counts a link as 23 on X whatever its length, and every character on LinkedIn', () => {
    const body = 'Read https://example.com/a/very/long/path/that/goes/on/and/on?with=query';
    expect(countPost('X', body, []).length).toBe(5 + 23);
    expect(countPost('LINKEDIN', body, []).length).toBe([...body].length);
  });

  it('weighs emoji and CJK characters 2 on X', () => {
    expect(countPost('X', '👍🏽 ok', []).length).toBe(2 + 3);
    expect(countPost('X', '日本', []).length).toBe(4);
    expect(countPost('LINKEDIN', '日本', []).length).toBe(2);
  });

  it('counts the hashtags the body lacks, as they are published after it', () => {
    const count = countPost('X', 'Spring is here #spring', ['#spring', '#launch']);
    expect(count.text).toBe('Spring is here #spring\n\n#launch');
    expect(count.length).toBe('Spring is here #spring\n\n#launch'.length);
  });

  it('says how far over the limit a post is', () => {
    expect(countPost('X', 'x'.repeat(280), []).over).toBe(0);
    const over = countPost('X', 'x'.repeat(279), ['#tag']);
    expect(over).toMatchObject({ length: 285, max: 280, over: 5 });
    expect(countPost('LINKEDIN', 'y'.repeat(3001), []).over).toBe(1);
  });
});

describe('hashtags as typed', () => {
  it('adds the missing # and drops duplicates and separators', () => {
    expect(parseHashtags(' launch, #spring  ##sale #spring ')).toEqual(['#launch', '#spring', '#sale']);
    expect(parseHashtags('')).toEqual([]);
  });
});

describe('preview pieces', () => {
  it('marks exactly the links X weighs and the hashtags', () => {
    expect(pieces('Go to example.com now #deal')).toEqual([
      { kind: 'text', text: 'Go to ' },
      { kind: 'link', text: 'example.com' },
      { kind: 'text', text: ' now ' },
      { kind: 'hashtag', text: '#deal' },
    ]);
    expect(pieces('no links, a#b')).toEqual([{ kind: 'text', text: 'no links, a#b' }]);
  });
});

describe('calendar dates', () => {
  it('starts weeks on Monday and covers a month with whole weeks', () => {
    expect(startOfWeek('2026-03-01')).toBe('2026-02-23'); // a Sunday
    expect(daysOf('week', '2026-03-04')).toEqual(['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06', '2026-03-07', '2026-03-08']);
    const march = daysOf('month', '2026-03-15');
    expect(march[0]).toBe('2026-02-23');
    expect(march.at(-1)).toBe('2026-04-05');
    expect(march.length % 7).toBe(0);
    expect(daysOf('month', '2021-02-10')).toHaveLength(28); // February 2021: Monday 1st to Sunday 28th
  });

  it('steps by a week or a month, keeping the day within short months', () => {
    expect(shift('week', '2026-12-28', 1)).toBe('2027-01-04');
    expect(addMonths('2026-01-31', 1)).toBe('2026-02-28');
    expect(shift('month', '2026-03-31', -1)).toBe('2026-02-28');
  });

  it('accepts only real dates from the URL', () => {
    expect(isDate('2026-02-28')).toBe(true);
    expect(isDate('2026-02-30')).toBe(false);
    expect(isDate('tomorrow')).toBe(false);
    expect(isFuture('2030-01-01T00:00:00Z', Date.parse('2029-12-31T23:59:59Z'))).toBe(true);
    expect(isFuture(null)).toBe(false);
  });
});
