/**
 * A Google connection's sources (CONTRACT §10): `config.propertyId` makes it a GA4 source,
 * `config.siteUrl` a Search Console source, both may be set. Pure helpers for the account picker.
 */

export interface GoogleAccount {
  id: string;
  name: string;
  source?: string;
}

/**
 * The accounts a connection can read, split into GA4 properties and Search Console sites. The
 * service names the source; without it, the id tells: Search Console sites are URLs
 * (`https://…/`) or domain properties (`sc-domain:…`), GA4 properties are `properties/123` or a
 * number.
 */
export function splitAccounts(accounts: readonly GoogleAccount[]): { properties: GoogleAccount[]; sites: GoogleAccount[] } {
  const properties: GoogleAccount[] = [];
  const sites: GoogleAccount[] = [];
  for (const account of accounts) {
    const source = account.source ?? (/^(https?:\/\/|sc-domain:)/.test(account.id) ? 'gsc' : 'ga4');
    (source === 'gsc' ? sites : properties).push(account);
  }
  const byName = (a: GoogleAccount, b: GoogleAccount) => a.name.localeCompare(b.name);
  return { properties: properties.sort(byName), sites: sites.sort(byName) };
}

export interface GoogleConfig {
  propertyId?: string;
  siteUrl?: string;
}

/** What the connection reads now, in words ("GA4 Acme web · Search Console https://acme.example/"). */
export function describeSources(config: GoogleConfig | null | undefined, accounts: readonly GoogleAccount[] = []): string {
  const nameOf = (id: string) => accounts.find((a) => a.id === id)?.name ?? id;
  const parts: string[] = [];
  if (config?.propertyId) parts.push(`GA4 ${nameOf(config.propertyId)}`);
  if (config?.siteUrl) parts.push(`Search Console ${nameOf(config.siteUrl)}`);
  return parts.length ? parts.join(' · ') : 'No property or site chosen yet';
}

/**
 * The `config` of the PATCH for the picker's choice: only what changed (the service merges the
 * keys), an emptied choice as '' (the service removes that key, turning the source off). Null when
 * nothing changed.
 */
export function configPatch(before: GoogleConfig | null | undefined, choice: { propertyId: string; siteUrl: string }): Record<string, string> | null {
  const patch: Record<string, string> = {};
  for (const key of ['propertyId', 'siteUrl'] as const) {
    const now = choice[key].trim();
    if (now !== (before?.[key] ?? '')) patch[key] = now;
  }
  return Object.keys(patch).length ? patch : null;
}

/** A sync run's range as the user reads it: "May 1 – May 4, 2026" (one date when from = to). */
export function syncRange(from: string, to: string, locale?: string): string {
  const day = (value: string) => new Date(`${value}T00:00:00Z`);
  const format = new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' });
  return from === to ? format.format(day(from)) : format.formatRange(day(from), day(to));
}

/** How far back "Sync now" fetches: the recent days Google still revises (the service's default), or a history. */
export const SYNC_SPANS = ['recent', '28', '90', '365'] as const;
export type SyncSpan = (typeof SYNC_SPANS)[number];
export const SYNC_SPAN_LABELS: Record<SyncSpan, string> = {
  recent: 'The last few days',
  '28': 'The last 28 days',
  '90': 'The last 90 days',
  '365': 'The last 12 months',
};

/**
 * The body of `POST …/integrations/:id/sync` for a span: nothing for the recent days (the service
 * re-fetches its lookback window up to yesterday, UTC), else `from` that many days before yesterday.
 */
export function syncBody(span: SyncSpan, now: Date): { from?: string } {
  if (span === 'recent') return {};
  const yesterday = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 1));
  yesterday.setUTCDate(yesterday.getUTCDate() - (Number(span) - 1));
  return { from: yesterday.toISOString().slice(0, 10) };
}
