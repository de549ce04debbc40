import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { xLength } from './x-length.ts';

/**
 * twitter-text's conformance cases for the v3 weighting (conformance/validate.yml,
 * WeightedTweetsWithDiscountedEmojiCounterTest and UnicodeDirectionalMarkerCounterTest; Apache-2.0,
 * Copyright Twitter, Inc.), with their expected weighted lengths. Long texts are written as the
 * repetitions they are; invisible characters (ZWJ, tags, marks) as escapes.
 */
const FAMILY = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}';
const POEM =
  '故人西辞黄鹤楼，烟花三月下扬州。孤帆远影碧空尽，唯见长江天际流。朱雀桥边野草花，乌衣巷口夕阳斜。旧时王谢堂前燕，飞入寻常百姓家。朝辞白帝彩云间，千里江陵一日还。两岸猿声啼不住，轻舟已过万重山。泪湿罗巾梦不成，夜深前殿按歌声。红颜未老恩先断，斜倚薰笼坐到明。独在异乡为异客，每逢佳节倍思亲。遥知兄弟登高处，遍插茱萸少一人。';
const KANA = 'あいうえおかきくけこ';
const LONG_HOST = 'https://' + 'somesuperlongurl'.repeat(249) + '.com/foo';
const CONFORMANCE: Array<{ description: string; text: string; weightedLength: number; valid: boolean }> = [
  { description: 'Regular Tweet with url', text: 'Hi http://test.co', weightedLength: 26, valid: true },
  { description: 'Just url', text: 'http://test.co', weightedLength: 23, valid: true },
  { description: 'Long tweet, overflow at char index 280', text: '285 chars-' + 'xxxxxxxxxx-'.repeat(25), weightedLength: 285, valid: false },
  {
    description: 'Long tweet with url in the middle, overflow at char index 284',
    text: '285 chars- http://www.twitter.com/jack ' + 'xxxxxxxxxx-'.repeat(24),
    weightedLength: 299,
    valid: false,
  },
  {
    description: 'Long tweet with url at the end, overflow at char index 265',
    text: 'xxxxxxxxxx-'.repeat(24) + ' http://www.twitter.com/jack ',
    weightedLength: 289,
    valid: false,
  },
  { description: '10 url string, no overflow', text: 'https://www.twitter.com/aloha '.repeat(10), weightedLength: 240, valid: true },
  { description: '160 CJK char, overflow at char index 140', text: POEM, weightedLength: 320, valid: false },
  { description: '160 emoji char, overflow at char index 140', text: '\u{1F637}'.repeat(160), weightedLength: 320, valid: false },
  { description: '3 latin char + 160 CJK char, overflow at char index 141', text: 'the' + POEM, weightedLength: 323, valid: false },
  {
    description: '282 chars with a normalized character within valid range but outside 280',
    text: '282 chars-' + 'xxxxxxxxxx-'.repeat(24) + 'xxxxxA\u0301x',
    weightedLength: 281,
    valid: false,
  },
  {
    description: 'Count a mix of single byte single word, and double word unicode characters',
    text: 'H\u{1F431}\u263A' + FAMILY,
    weightedLength: 7,
    valid: true,
  },
  {
    description: 'Count unicode emoji chars inside the basic multilingual plane',
    text: '\u{1F637}\u{1F47E}\u{1F621}\u{1F525}\u{1F4A9}',
    weightedLength: 10,
    valid: true,
  },
  {
    description: 'Count unicode emoji chars outside the basic multilingual plane with skin tone modifiers',
    text: '\u{1F64B}\u{1F3FD}\u{1F468}\u200D\u{1F3A4}',
    weightedLength: 4,
    valid: true,
  },
  {
    description: 'Handle General Punctuation Characters with visible spaces(u2000-200A), no ZWJ/ZWNJ',
    text:
      'This is a tweet with general punctuation characters: \u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u200B' +
      ' \u2010 \u2011 \u2012 \u2013 \u2014 \u2015 \u2016  \u2017 \u2018 \u2019 \u201A \u201B \u201C \u201D \u201E \u201F \u2032 \u2033 \u2034 \u2035 \u2036 \u2037',
    weightedLength: 110,
    valid: true,
  },
  {
    description: 'Handle long url with invalid domain labels and short url',
    text: `Long url with invalid domain labels and a short url: ${LONG_HOST} ${LONG_HOST} ${LONG_HOST} https://validurl.com`,
    weightedLength: 12079,
    valid: false,
  },
  { description: 'Handle a 64 character domain without protocol', text: 'randomurl'.repeat(7) + 's.com', weightedLength: 68, valid: true },
  {
    description: 'Do not allow > 140 CJK characters by virtue of CJK chars greater than 63 punycode encoded chars in the host',
    text: KANA.repeat(12) + ' http://' + KANA.repeat(5) + 'あいう.com',
    weightedLength: 358,
    valid: false,
  },
  {
    description: 'Allow > 140 CJK characters by virtue of CJK chars less than 63 punycode encoded chars in the host',
    text: KANA.repeat(12) + ' http://' + KANA.repeat(5) + 'あい.com',
    weightedLength: 264,
    valid: true,
  },
  { description: '140 family emoji', text: FAMILY.repeat(140), weightedLength: 280, valid: true },
  {
    description: 'Unicode 10.0 emoji',
    text: 'Unicode 10.0 emoji: \u{1F92A}; \u{1F9D5}; \u{1F9D5}\u{1F3FE}; \u{1F3F4}\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}',
    weightedLength: 34,
    valid: true,
  },
  { description: 'Unicode 9.0 emoji', text: 'Unicode 9.0 emoji: \u{1F920}; \u{1F483}; \u{1F483}\u{1F3FE}', weightedLength: 29, valid: true },
  // UnicodeDirectionalMarkerCounterTest (twitter-text also rejects U+FFFF; only the length is ours to match).
  { description: 'Handle invalid characters', text: 'ABC\u202A\uFFFFABC\uFFFE', weightedLength: 12, valid: true },
  {
    description: 'Tweet text containing directional characters should be considered valid',
    text: '\u2066\u202Ahttp://foobar.\u067E\u0627\u06A9\u0633\u062A\u0627\u0646/\u202C\u2069',
    weightedLength: 31,
    valid: true,
  },
  // conformance/validate.yml `lengths` cases that the v3 weighting leaves unchanged.
  { description: 'Count the number of characters', text: 'This is a test.', weightedLength: 15, valid: true },
  { description: 'Count a URL without protocol as 23 characters', text: 'test.com', weightedLength: 23, valid: true },
  { description: 'Count multiple URLs correctly', text: 'Test https://test.com test https://test.com test.com test', weightedLength: 86, valid: true },
];

/** Cases of ours, checked against twitter-text 3.1.0 before it was removed. */
const MORE: Array<{ description: string; text: string; weightedLength: number }> = [
  { description: 'combining marks compose under NFC', text: 'e\u0301te\u0301', weightedLength: 3 },
  { description: 'a combining mark with no precomposed form counts on its own', text: 'q\u0307', weightedLength: 2 },
  { description: 'Hangul syllables weigh 2', text: '저찀쯿쿿', weightedLength: 8 },
  { description: 'Cyrillic and Latin weigh 1', text: 'Привет ñandú', weightedLength: 12 },
  { description: 'a flag and a keycap are one emoji each', text: '\u{1F1EB}\u{1F1F7}1\uFE0F\u20E3', weightedLength: 4 },
  { description: 'a rainbow flag ZWJ sequence is one emoji', text: '\u{1F3F3}\uFE0F\u200D\u{1F308}', weightedLength: 2 },
  { description: 'heart with presentation selector is one emoji', text: 'I \u2764\uFE0F it', weightedLength: 7 },
  { description: 'an e-mail address is not a URL', text: 'mail me@example.com', weightedLength: 19 },
  { description: 'an unknown TLD is not a URL', text: 'see notes.txt', weightedLength: 13 },
  { description: 'a path with balanced parentheses belongs to the URL', text: 'https://en.wikipedia.org/wiki/Foo_(bar) ok', weightedLength: 26 },
  { description: 'trailing punctuation is not part of the URL', text: 'Read example.com/a.', weightedLength: 29 },
  { description: 'a t.co link ends after its slug', text: 'https://t.co/abc/def', weightedLength: 27 },
  { description: 'a domain after a non-ASCII character still links', text: '日本example.com', weightedLength: 27 },
];

describe('X weighted length (twitter-text v3 rules)', () => {
  it.each(CONFORMANCE)('conformance: $description', ({ text, weightedLength, valid }) => {
    expect(xLength(text)).toMatchObject({ weightedLength, valid });
  });

  it.each(MORE)('$description', ({ text, weightedLength }) => {
    expect(xLength(text).weightedLength).toBe(weightedLength);
  });

  it('counts emoji newer than twitter-text 3.1 as one emoji, as X does', () => {
    // Person with red hair (Unicode 12) and melting face (Unicode 14).
    expect(xLength('\u{1F9D1}\u200D\u{1F9B0}').weightedLength).toBe(2);
    expect(xLength('\u{1FAE0}').weightedLength).toBe(2);
  });

  it('stays linear on inputs that make a backtracking URL regex quadratic', () => {
    // twitter-text 3.1 takes over 10 s on each of these; the bodies we accept are far shorter, but
    // the counter runs on every create and update.
    const texts = [
      'a.'.repeat(25_000),
      'a-'.repeat(25_000) + '.com',
      'a_'.repeat(25_000) + 'b.com',
      'http://example.com/' + '(a'.repeat(25_000),
      'a.com '.repeat(10_000),
      'http://a.com/'.repeat(5_000),
      '日'.repeat(50_000),
    ];
    for (const text of texts) {
      const started = performance.now();
      xLength(text);
      expect(performance.now() - started).toBeLessThan(1000);
    }
  });

  it('is a pure module the web panel can import: no imports but its TLD data', () => {
    const source = readFileSync(new URL('./x-length.ts', import.meta.url), 'utf8');
    expect([...source.matchAll(/^import .* from '(.*)';$/gm)].map((m) => m[1])).toEqual(['./x-tlds.ts']);
    expect(readFileSync(new URL('./x-tlds.ts', import.meta.url), 'utf8')).not.toMatch(/^import /m);
  });

  it('production dependencies no longer include twitter-text or core-js', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })).not.toContain('twitter-text');
    const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8'));
    const shipped = Object.entries(lock.packages as Record<string, { dev?: boolean }>)
      .filter(([, p]) => !p.dev)
      .map(([path]) => path);
    expect(shipped.filter((path) => /node_modules\/(core-js|twitter-text)$/.test(path))).toEqual([]);
  });
});
