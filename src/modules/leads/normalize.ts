import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { badRequest } from '../../platform/errors.ts';

export type MatchKind = 'email' | 'phone' | 'website';

// The same shape check as the WHATWG e-mail input: something@host.tld, no spaces.
const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$/;

/** The address as stored (trimmed) and its matching key (lower-cased), or a 400. */
export function normalizeEmail(email: string): { email: string; key: string } {
  const trimmed = email.trim();
  if (!EMAIL.test(trimmed)) throw badRequest('email must be an e-mail address', [{ field: 'body.email', message: 'must be an e-mail address' }]);
  return { email: trimmed, key: trimmed.toLowerCase() };
}

/** E.164, or a 400 naming the field. */
export function phoneE164(phone: string): string {
  const parsed = parsePhoneNumberFromString(phone.trim());
  if (!parsed || !parsed.isPossible()) {
    throw badRequest('phone must be a phone number in international format, e.g. +14155550123', [
      { field: 'body.phone', message: 'must be a phone number in international format (+ and country code)' },
    ]);
  }
  return parsed.number;
}

/** The URL as stored (a scheme added when missing) and its host without `www.` for matching. */
export function normalizeWebsite(website: string): { url: string; host: string } {
  const raw = website.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw badRequest('website must be a URL or a host name', [{ field: 'body.website', message: 'must be a URL or a host name' }]);
  }
  if (!['http:', 'https:'].includes(url.protocol) || !url.hostname || (!url.hostname.includes('.') && url.hostname !== 'localhost')) {
    throw badRequest('website must be an http(s) URL or a host name', [{ field: 'body.website', message: 'must be an http(s) URL or a host name' }]);
  }
  return { url: withScheme, host: url.hostname.toLowerCase().replace(/^www\./, '') };
}

/** The values trimmed, without blanks and repeats, in their first order (tags). */
export function uniq(values: string[]): string[] {
  return [...new Set(values.map((t) => t.trim()).filter(Boolean))];
}
