/**
 * The length of a post as X (Twitter) counts it: the published twitter-text v3 weighting, without the
 * twitter-text package (which pulls core-js@2 and its install script into production).
 *
 * Rules (twitter-text v3 configuration): the text is NFC-normalized; each code point weighs 2, except
 * U+0000–U+10FF, U+2000–U+200D, U+2010–U+201F and U+2032–U+2037, which weigh 1; an emoji sequence
 * (ZWJ sequences, skin tones, flags, keycaps) weighs 2 whatever its length; a URL weighs 23 whatever its
 * length. At most 280.
 *
 * URL detection follows twitter-text's extractor (a protocol, or a bare domain with a known top-level
 * domain, then port, path and query with its ending rules) but scans with anchored, unambiguous
 * patterns so that the time stays linear in the text, which twitter-text's single regex does not
 * guarantee. Emoji are the current Unicode RGI set, so emoji newer than twitter-text 3.1's table
 * count 2, as X counts them today.
 *
 * Pure and dependency-free on purpose: the web panel imports it to count as the server does.
 */
import { X_TLDS } from './x-tlds.ts';

export const X_MAX_WEIGHTED_LENGTH = 280;
export const X_URL_LENGTH = 23;

/** Weighed in hundredths, as twitter-text does, so that the sums stay integers. */
const SCALE = 100;
const DEFAULT_WEIGHT = 200;
const LIGHT_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0, 4351],
  [8192, 8205],
  [8208, 8223],
  [8242, 8247],
];

export interface XLength {
  /** Length as X counts it. */
  weightedLength: number;
  /** Within 280 and not empty. */
  valid: boolean;
  /** The URLs that counted as 23, as [start, end) UTF-16 offsets into the NFC-normalized text. */
  urls: Array<[number, number]>;
}

export function xLength(text: string): XLength {
  const normalized = text.normalize('NFC');
  const urls = findUrls(normalized);
  const urlAt = new Map(urls.map(([start, end]) => [start, end]));
  const emojiAt = new Map<number, number>();
  for (const m of normalized.matchAll(EMOJI)) emojiAt.set(m.index, m.index + m[0].length);

  let weighted = 0;
  for (let i = 0; i < normalized.length; i++) {
    const urlEnd = urlAt.get(i);
    const emojiEnd = emojiAt.get(i);
    if (urlEnd !== undefined) {
      weighted += X_URL_LENGTH * SCALE;
      i = urlEnd - 1;
    } else if (emojiEnd !== undefined) {
      weighted += DEFAULT_WEIGHT;
      i = emojiEnd - 1;
    } else {
      const unit = normalized.charCodeAt(i);
      const next = normalized.charCodeAt(i + 1);
      if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        // A code point outside the BMP is never in a light range.
        weighted += DEFAULT_WEIGHT;
        i++;
      } else {
        weighted += LIGHT_RANGES.some(([lo, hi]) => unit >= lo && unit <= hi) ? 100 : DEFAULT_WEIGHT;
      }
    }
  }
  const weightedLength = weighted / SCALE;
  return { weightedLength, valid: weightedLength > 0 && weightedLength <= X_MAX_WEIGHTED_LENGTH, urls };
}

// ---- emoji ------------------------------------------------------------------------------------
// RGI sequences (longest first, as a `v`-flag class of strings matches), plus keycaps and
// presentation sequences that are not fully qualified, which X also counts as one emoji.
const EMOJI = /\p{RGI_Emoji}|[#*0-9]\u{FE0F}?\u{20E3}|\p{Extended_Pictographic}\u{FE0F}/gv;

// ---- URLs -------------------------------------------------------------------------------------
// Character classes of twitter-text's extractor (regexp/*.js in twitter-text 3.1.0).
const SPACES = '\\x09-\\x0D\\x20\\x85\\xA0\\u1680\\u180E\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';
const INVALID = '\\uFFFE\\uFEFF\\uFFFF';
const DIRECTIONAL = '\\u202A-\\u202E\\u061C\\u200E\\u200F\\u2066-\\u2069';
const PUNCT = "!'#%&()*+,\\\\\\-./:;<=>?@\\[\\]^_{|}~$";
/** A character a domain label may contain (anything that is not punctuation, space or a control mark). */
const DOMAIN_CHAR = `[^${PUNCT}${SPACES}${INVALID}${DIRECTIONAL}]`;
/** A label: domain characters, with inner runs of - and _ (checked per position afterwards). */
const LABEL = `${DOMAIN_CHAR}+(?:[_-]+${DOMAIN_CHAR}+)*`;
const LATIN =
  '\\xC0-\\xD6\\xD8-\\xF6\\xF8-\\xFF\\u0100-\\u024F\\u0253\\u0254\\u0256\\u0257\\u0259\\u025B\\u0263\\u0268\\u026F\\u0272\\u0289\\u028B\\u02BB\\u0300-\\u036F\\u1E00-\\u1EFF';
const PATH_END_CHAR = new RegExp(`[+\\-a-z\\u0400-\\u04FF0-9=_#/${LATIN}]`, 'i');
const PATH_RUN = new RegExp(`[a-z\\u0400-\\u04FF0-9!*';:=+,.$/%#[\\]\\-\\u2013_~@|&${LATIN}]+`, 'iy');
const PATH_PARENS = new RegExp(`\\((?:${PATH_RUN.source}|${PATH_RUN.source.slice(0, -1)}*\\(${PATH_RUN.source}\\)${PATH_RUN.source.slice(0, -1)}*)\\)`, 'iy');
const QUERY_RUN = /[a-z0-9!?*'@();:&=+$/%#[\]\-_.,~|]+/iy;
const QUERY_END_CHAR = /[a-z0-9\-_&=#/]/i;
const PORT = /:[0-9]+/y;
const ASCII_LABEL_CHAR = new RegExp(`[\\-a-z0-9${LATIN}]`, 'i');
const PROTOCOL = /https?:\/\//gi;
/**
 * A bare domain starts where no label character precedes it (nor a run of - and _ that follows one),
 * so each position is tried once; the lookahead first keeps the lookbehind off most positions.
 */
const BARE_DOMAIN = new RegExp(
  `(?=${DOMAIN_CHAR})(?:(?<![_\\-]|${DOMAIN_CHAR})|(?<=(?:^|(?![_\\-])[${PUNCT}${SPACES}${INVALID}${DIRECTIONAL}])[_\\-]+))${LABEL}(?:\\.${LABEL})+`,
  'gu',
);
const DOMAIN_AFTER_PROTOCOL = new RegExp(`${LABEL}(?:\\.${LABEL})+`, 'uy');
/** Characters that keep a URL from starting right after them. */
const BAD_BEFORE = new RegExp(`[A-Za-z0-9@\\uFF20$#\\uFF03${INVALID}]`);
const BAD_BEFORE_BARE = /[-_./]/;
const MAY_PRECEDE = new RegExp(`[^A-Za-z0-9@\\uFF20$#\\uFF03${INVALID}]`);
/** After a top-level domain, these would make it part of a longer word. */
const BAD_AFTER_TLD = /[0-9a-zA-Z@+-]/;
const PUNYCODE_TLD = /^xn--[-0-9a-z]+$/i;
const MAX_URL_LENGTH = 4096;
const MAX_LABEL_LENGTH = 63;
const MAX_TCO_SLUG = 40;
const TCO = /^https?:\/\/t\.co\/([a-z0-9]+)(?:\?[a-z0-9!?*'@();:&=+$/%#[\]\-_.,~|]*[a-z0-9\-_&=#/])?/i;
const LONGEST_TLD = Math.max(...[...X_TLDS].map((t) => t.length));

interface Candidate {
  start: number;
  end: number;
  /** A rejected match still consumes its text, as twitter-text's scanner does. */
  urls: Array<[number, number]>;
}

function findUrls(text: string): Array<[number, number]> {
  if (!text.includes('.')) return [];
  const candidates: Candidate[] = [];

  let protocolEnd = 0;
  for (const m of text.matchAll(PROTOCOL)) {
    // A protocol inside the previous URL's path belongs to that URL; parsing it again would be quadratic.
    if (m.index < protocolEnd) continue;
    if (m.index > 0 && BAD_BEFORE.test(text[m.index - 1]!)) continue;
    DOMAIN_AFTER_PROTOCOL.lastIndex = m.index + m[0].length;
    const domain = DOMAIN_AFTER_PROTOCOL.exec(text);
    if (!domain) continue;
    const c = withProtocol(text, m.index, m[0], domain.index, domain[0]);
    if (c) {
      candidates.push(c);
      protocolEnd = c.end;
    }
  }

  // After a match that ends inside a run of label characters, the next domain may start right there.
  let from = 0;
  let resume = false;
  for (;;) {
    let m: RegExpExecArray | null;
    if (resume) {
      resume = false;
      DOMAIN_AFTER_PROTOCOL.lastIndex = from;
      m = DOMAIN_AFTER_PROTOCOL.exec(text);
      if (!m) continue;
    } else {
      BARE_DOMAIN.lastIndex = from;
      m = BARE_DOMAIN.exec(text);
      if (!m) break;
    }
    const c = bareAt(text, m.index, m.index + m[0].length, m.index === from && from > 0);
    if (c) {
      candidates.push(c);
      from = c.end;
      resume = true;
    } else {
      from = m.index + m[0].length;
    }
  }

  candidates.sort((a, b) => a.start - b.start);
  const urls: Array<[number, number]> = [];
  let consumed = 0;
  for (const c of candidates) {
    if (c.start < consumed) continue;
    consumed = c.end;
    urls.push(...c.urls);
  }
  return urls;
}

/** Where the registrable part of a token ends: the right-most label that is a known TLD, as the greedy regex finds it. */
function domainEnd(text: string, start: number, token: string): number | undefined {
  const labels: Array<{ at: number; label: string }> = [];
  let at = start;
  for (const label of token.split('.')) {
    labels.push({ at, label });
    at += label.length + 1;
  }
  for (let i = labels.length - 1; i >= 1; i--) {
    const name = labels[i - 1]!.label;
    if (name.includes('_')) continue;
    const { at: tldAt, label } = labels[i]!;
    const tldLength = tldPrefix(text, tldAt, label);
    if (tldLength !== undefined) return tldAt + tldLength;
  }
  return undefined;
}

/** The length of the longest top-level domain the label starts with that is not followed by a word character. */
function tldPrefix(text: string, at: number, label: string): number | undefined {
  const followedWell = (end: number) => end >= text.length || !BAD_AFTER_TLD.test(text[end]!);
  if (PUNYCODE_TLD.test(label) && followedWell(at + label.length)) return label.length;
  for (let n = Math.min(label.length, LONGEST_TLD); n >= 1; n--) {
    if (X_TLDS.has(label.slice(0, n).toLowerCase()) && followedWell(at + n)) return n;
  }
  return undefined;
}

/** Port, path and query after the domain, with twitter-text's ending rules. */
function rest(text: string, from: number): { end: number; hasPath: boolean } {
  let end = from;
  PORT.lastIndex = end;
  if (PORT.exec(text)) end = PORT.lastIndex;
  let hasPath = false;
  if (text[end] === '/') {
    hasPath = true;
    end = pathEnd(text, end + 1);
  }
  if (text[end] === '?') {
    QUERY_RUN.lastIndex = end + 1;
    const q = QUERY_RUN.exec(text);
    if (q) {
      for (let i = q.index + q[0].length - 1; i >= q.index; i--) {
        if (QUERY_END_CHAR.test(text[i]!)) {
          end = i + 1;
          break;
        }
      }
    }
  }
  return { end, hasPath };
}

/** A path runs over path characters and balanced parentheses and ends on an ending character or a ')'. */
function pathEnd(text: string, from: number): number {
  let end = from;
  let i = from;
  for (;;) {
    PATH_RUN.lastIndex = i;
    const run = PATH_RUN.exec(text);
    if (run) {
      for (let j = i + run[0].length - 1; j >= i; j--) {
        if (PATH_END_CHAR.test(text[j]!)) {
          end = j + 1;
          break;
        }
      }
      i += run[0].length;
      continue;
    }
    PATH_PARENS.lastIndex = i;
    const parens = PATH_PARENS.exec(text);
    if (!parens) return end;
    i += parens[0].length;
    end = i;
  }
}

function withProtocol(text: string, start: number, protocol: string, domainStart: number, token: string): Candidate | undefined {
  const tldEnd = domainEnd(text, domainStart, token);
  if (tldEnd === undefined) return undefined;
  const domain = text.slice(domainStart, tldEnd);
  const { end } = rest(text, tldEnd);
  let urlEnd = end;
  const url = text.slice(start, end);
  let ok = validHost(domain, url.length, protocol.length);
  const tco = TCO.exec(url);
  if (ok && tco) {
    // A t.co link ends after its slug and query; the rest is plain text.
    if (tco[1]!.length > MAX_TCO_SLUG) ok = false;
    else urlEnd = start + tco[0].length;
  }
  return { start, end, urls: ok ? [[start, urlEnd]] : [] };
}

/**
 * twitter-text's scanner consumes the character before a URL as part of its match, and tries each
 * position whose previous character may precede a URL (anything but ASCII letters, digits, @ $ #):
 * so "日本example.com" and "b©️.co.jp" find a domain inside a run of label characters, and at the
 * very start of the text the first character is tried as the preceding one ("ßt.co" links "t.co").
 * Only the first label can differ between those starts, so a few tries cover them and the scan stays linear.
 */
function bareAt(text: string, runStart: number, runEnd: number, resumed: boolean): Candidate | undefined {
  const firstDot = text.indexOf('.', runStart);
  const starts: number[] = [];
  if (runStart === 0 && MAY_PRECEDE.test(text[0]!)) starts.push(1);
  // Right after a match the scanner must consume a preceding character first.
  if (runStart === 0 || (!resumed && MAY_PRECEDE.test(text[runStart - 1]!))) starts.push(runStart);
  for (let i = runStart + 1; i < firstDot; i++) {
    if (MAY_PRECEDE.test(text[i - 1]!)) {
      starts.push(i);
      break;
    }
  }
  const firstLabel = text.slice(runStart, firstDot);
  const afterSeparator = runStart + Math.max(firstLabel.lastIndexOf('_'), firstLabel.lastIndexOf('-')) + 1;
  if (afterSeparator > runStart) starts.push(afterSeparator);
  for (const start of starts) {
    if (start >= firstDot || text[start] === '_' || text[start] === '-') continue;
    const c = bare(text, start, text.slice(start, runEnd), start > 0 ? text[start - 1]! : '');
    if (c) return c;
  }
  // Then after the first dot: the greedy match from there ends on the same top-level domain, if any
  // label after the first can be one, so later dots need no try.
  return bare(text, firstDot + 1, text.slice(firstDot + 1, runEnd), '.');
}

function bare(text: string, start: number, token: string, before: string): Candidate | undefined {
  const tldEnd = domainEnd(text, start, token);
  if (tldEnd === undefined) return undefined;
  const domain = text.slice(start, tldEnd);
  const { end, hasPath } = rest(text, tldEnd);
  const candidate: Candidate = { start, end, urls: [] };
  if (!validHost(domain, end - start, 'https://'.length) || BAD_BEFORE_BARE.test(before)) return candidate;
  // Without a protocol only ASCII (and Latin) domains link; the path, port and query go with the last one, and only with a path.
  const ascii = asciiDomains(domain).map(([a, b]): [number, number] => [start + a, start + b]);
  const last = ascii.at(-1);
  if (last && hasPath) last[1] = end;
  return { ...candidate, urls: ascii };
}

/** The ASCII domains inside a domain, as twitter-text's validAsciiDomain finds them (left to right, greedy). */
function asciiDomains(domain: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  let i = 0;
  while (i < domain.length) {
    if (!ASCII_LABEL_CHAR.test(domain[i]!)) {
      i++;
      continue;
    }
    const from = i;
    const dots: number[] = [];
    for (;;) {
      const labelStart = i;
      while (i < domain.length && ASCII_LABEL_CHAR.test(domain[i]!)) i++;
      if (domain[i] !== '.' || i === labelStart) break;
      dots.push(i++);
    }
    let matched = false;
    for (let k = dots.length - 1; k >= 0 && !matched; k--) {
      const at = dots[k]! + 1;
      const dot = domain.indexOf('.', at);
      const tld = tldPrefix(domain, at, domain.slice(at, dot < 0 ? undefined : dot));
      if (tld !== undefined) {
        found.push([from, at + tld]);
        i = at + tld;
        matched = true;
      }
    }
    if (!matched) i = Math.max(i, from + 1);
  }
  return found;
}

/** twitter-text's check: each label 1–63 characters once punycode-encoded, the whole URL at most 4096. */
function validHost(domain: string, urlLength: number, protocolLength: number): boolean {
  if (domain.startsWith('xn--') && asciiDomains(domain).length === 0) return false;
  let encodedLength = 0;
  const labels = domain.split('.');
  for (const label of labels) {
    const n = punycodeLength(label);
    if (n < 1 || n > MAX_LABEL_LENGTH) return false;
    encodedLength += n;
  }
  encodedLength += labels.length - 1;
  return protocolLength + urlLength + encodedLength - domain.length <= MAX_URL_LENGTH;
}

/** Length of a label's ASCII (punycode, RFC 3492) form. */
function punycodeLength(label: string): number {
  if (/^[\x00-\x7F]*$/.test(label)) return label.length;
  // Encoded, a label is never shorter than its code points; skip the work for labels already too long.
  const codePoints = Array.from(label, (c) => c.codePointAt(0)!);
  if (codePoints.length > MAX_LABEL_LENGTH) return codePoints.length;
  return 4 + punycodeEncode(codePoints).length;
}

function punycodeEncode(input: number[]): string {
  const base = 36;
  const tMin = 1;
  const tMax = 26;
  const adapt = (delta: number, points: number, first: boolean): number => {
    delta = first ? Math.floor(delta / 700) : delta >> 1;
    delta += Math.floor(delta / points);
    let k = 0;
    for (; delta > ((base - tMin) * tMax) >> 1; k += base) delta = Math.floor(delta / (base - tMin));
    return Math.floor(k + ((base - tMin + 1) * delta) / (delta + 38));
  };
  const digit = (d: number) => String.fromCharCode(d < 26 ? 97 + d : 22 + d);
  const output: string[] = input.filter((c) => c < 0x80).map((c) => String.fromCharCode(c));
  const basic = output.length;
  if (basic) output.push('-');
  let n = 128;
  let delta = 0;
  let bias = 72;
  let handled = basic;
  while (handled < input.length) {
    const m = Math.min(...input.filter((c) => c >= n));
    delta += (m - n) * (handled + 1);
    n = m;
    for (const c of input) {
      if (c < n) delta++;
      if (c !== n) continue;
      let q = delta;
      for (let k = base; ; k += base) {
        const t = k <= bias ? tMin : k >= bias + tMax ? tMax : k - bias;
        if (q < t) break;
        output.push(digit(t + ((q - t) % (base - t))));
        q = Math.floor((q - t) / (base - t));
      }
      output.push(digit(q));
      bias = adapt(delta, handled + 1, handled === basic);
      delta = 0;
      handled++;
    }
    delta++;
    n++;
  }
  return output.join('');
}
