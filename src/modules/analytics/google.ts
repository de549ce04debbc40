import { OutboundError, outboundRequest, type OutboundResponse } from '../../platform/http-client.ts';
import { fromCompact } from './days.ts';

/**
 * The Google APIs analytics reads, over REST with the integration's OAuth access token:
 *   - GA4 Data API `runReport` (sessions, totalUsers, keyEvents by date; values arrive as strings,
 *     dates as `YYYYMMDD`, rows only for days with data);
 *   - GA4 Admin API `accountSummaries` (the properties the user can read);
 *   - Search Console `searchAnalytics/query` by date and the `sites` list.
 * The bases are the operator's configuration (GA4_API_URL, GA4_ADMIN_API_URL, GSC_API_URL: Google,
 * or loopback stand-ins in tests), never a user's, so they are reached whatever
 * WEBHOOK_ALLOW_PRIVATE says; redirects are still not followed and the time-out still holds.
 */

export interface GoogleApis {
  ga4ApiUrl: string;
  ga4AdminApiUrl: string;
  gscApiUrl: string;
  timeoutMs: number;
}

export type Source = 'ga4' | 'gsc';
export type Ga4Day = { sessions: number; users: number; conversions: number };
export type GscDay = { clicks: number; impressions: number; ctr: number; position: number };
export type DayMetrics = Record<string, number>;

export interface Account {
  id: string;
  name: string;
  source: Source;
}

/**
 * How a call failed, and so what the sync does next:
 *   auth     401: the token is dead (refresh it once; still 401: re-authorization needed);
 *   denied   403 PERMISSION_DENIED (no access to that property or site): the run fails with Google's message;
 *   retry    429, 5xx, a quota 403, a time-out or a refused connection: the run is tried again later;
 *   rejected any other answer (400 for a malformed property, 404 …): the run fails with Google's message.
 */
export type FailureKind = 'auth' | 'denied' | 'retry' | 'rejected';

export class GoogleApiError extends Error {
  readonly kind: FailureKind;
  readonly status: number | null;
  readonly retryAfterS: number | undefined;
  constructor(kind: FailureKind, message: string, status: number | null, retryAfterS?: number) {
    super(message);
    this.kind = kind;
    this.status = status;
    this.retryAfterS = retryAfterS;
  }
}

/** Accounts lists and reports are small; an answer larger than this is not one we asked for. */
const ANSWER_BYTES = 8 * 1024 * 1024;
/** GA4 accountSummaries pages: 200 is the API's maximum page size, 50 pages bound a runaway pageToken loop. */
const SUMMARY_PAGE = 200;
const MAX_PAGES = 50;
const GA4_ROWS = 100_000;
const GSC_ROWS = 25_000;

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), at most an hour. */
function retryAfterSeconds(value: unknown): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  const n = Number(raw.trim());
  const at = Date.parse(raw);
  const seconds = Number.isFinite(n) && n >= 0 ? n : Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
  return seconds === undefined ? undefined : Math.min(3600, Math.ceil(seconds));
}

/** Google's error body, in either of its two forms (`{ error: { code, message, status } }`, and v3's `errors: [{ reason }]`). */
function googleError(body: string): { message?: string; status?: string; reason?: string } {
  try {
    const parsed = JSON.parse(body) as {
      error?: { message?: unknown; status?: unknown; errors?: { reason?: unknown }[] } | string;
      error_description?: unknown;
    };
    const error = parsed.error;
    if (typeof error === 'string') return { message: typeof parsed.error_description === 'string' ? parsed.error_description : error, status: error };
    if (!error || typeof error !== 'object') return {};
    const reason = Array.isArray(error.errors) ? error.errors.find((e) => typeof e?.reason === 'string')?.reason : undefined;
    return {
      message: typeof error.message === 'string' ? error.message.slice(0, 500) : undefined,
      status: typeof error.status === 'string' ? error.status : undefined,
      reason: typeof reason === 'string' ? reason : undefined,
    };
  } catch {
    return {};
  }
}

const QUOTA_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'quotaExceeded', 'dailyLimitExceeded']);

/** The failure an answer that is not a success stands for. */
export function failureOf(api: string, res: OutboundResponse): GoogleApiError {
  const { message, status, reason } = googleError(res.body);
  const said = [status, message].filter(Boolean).join(': ') || res.body.replace(/\s+/g, ' ').trim().slice(0, 200) || 'no details';
  const text = `${api} answered HTTP ${res.status}: ${said}`;
  if (res.status === 401) return new GoogleApiError('auth', text, 401);
  const retryAfter = retryAfterSeconds(res.headers['retry-after']);
  if (
    res.status === 429 ||
    res.status >= 500 ||
    (res.status === 403 && (status === 'RESOURCE_EXHAUSTED' || (reason !== undefined && QUOTA_REASONS.has(reason))))
  ) {
    return new GoogleApiError('retry', text, res.status, retryAfter);
  }
  if (res.status === 403) return new GoogleApiError('denied', text, 403);
  return new GoogleApiError('rejected', text, res.status);
}

async function call(apis: GoogleApis, api: string, token: string, method: 'GET' | 'POST', url: string, body?: unknown): Promise<unknown> {
  let res: OutboundResponse;
  try {
    res = await outboundRequest({
      method,
      url,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      // The operator's configured API base, not a user's URL (see the module comment).
      allowPrivate: true,
      timeoutMs: apis.timeoutMs,
      readBytes: ANSWER_BYTES,
    });
  } catch (error) {
    if (error instanceof OutboundError) {
      const retry = error.code === 'TIMEOUT' || error.code === 'CONNECT';
      return Promise.reject(new GoogleApiError(retry ? 'retry' : 'rejected', `${api} ${retry ? 'unreachable' : 'refused'}: ${error.message}`, null));
    }
    throw error;
  }
  if (res.status < 200 || res.status >= 300) throw failureOf(api, res);
  if (res.truncated) throw new GoogleApiError('rejected', `${api} answered more than ${ANSWER_BYTES} bytes`, res.status);
  try {
    return JSON.parse(res.body) as unknown;
  } catch {
    throw new GoogleApiError('retry', `${api} answered HTTP ${res.status} with a body that is not JSON`, res.status);
  }
}

const base = (url: string) => url.replace(/\/+$/, '');

/** `properties/123` (or `123`) as the Data API's resource name; null when it is not one. */
export function propertyName(value: string): string | null {
  const m = /^(?:properties\/)?(\d{1,20})$/.exec(value.trim());
  return m ? `properties/${m[1]}` : null;
}

/** The GA4 properties the token's user can read (GA4 Admin API accountSummaries, every page). */
export async function listGa4Properties(apis: GoogleApis, token: string): Promise<Account[]> {
  const out: Account[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = new URLSearchParams({ pageSize: String(SUMMARY_PAGE) });
    if (pageToken) query.set('pageToken', pageToken);
    const answer = (await call(apis, 'GA4 Admin API', token, 'GET', `${base(apis.ga4AdminApiUrl)}/v1beta/accountSummaries?${query}`)) as {
      accountSummaries?: { displayName?: unknown; propertySummaries?: { property?: unknown; displayName?: unknown }[] }[];
      nextPageToken?: unknown;
    };
    for (const account of answer.accountSummaries ?? []) {
      for (const summary of account.propertySummaries ?? []) {
        if (typeof summary.property !== 'string' || !propertyName(summary.property)) continue;
        const name = typeof summary.displayName === 'string' && summary.displayName ? summary.displayName : summary.property;
        const accountName = typeof account.displayName === 'string' && account.displayName ? `${account.displayName} — ` : '';
        out.push({ id: propertyName(summary.property)!, name: `${accountName}${name}`, source: 'ga4' });
      }
    }
    pageToken = typeof answer.nextPageToken === 'string' && answer.nextPageToken ? answer.nextPageToken : undefined;
    if (!pageToken) break;
  }
  return out;
}

/** The Search Console sites the token's user can read (a `siteUnverifiedUser` cannot query them). */
export async function listGscSites(apis: GoogleApis, token: string): Promise<Account[]> {
  const answer = (await call(apis, 'Search Console API', token, 'GET', `${base(apis.gscApiUrl)}/webmasters/v3/sites`)) as {
    siteEntry?: { siteUrl?: unknown; permissionLevel?: unknown }[];
  };
  return (answer.siteEntry ?? [])
    .filter(
      (s): s is { siteUrl: string; permissionLevel: unknown } =>
        typeof s.siteUrl === 'string' && s.siteUrl !== '' && s.permissionLevel !== 'siteUnverifiedUser',
    )
    .map((s) => ({ id: s.siteUrl, name: s.siteUrl, source: 'gsc' as const }));
}

function number(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isFinite(n) ? n : 0;
}

/**
 * GA4 sessions, users (`totalUsers`) and conversions (`keyEvents`) per day of [from, to], for the
 * days GA4 has rows for. Metric values are read by their headers' names, not by position.
 */
export async function fetchGa4(apis: GoogleApis, token: string, property: string, from: string, to: string): Promise<Map<string, Ga4Day>> {
  const name = propertyName(property);
  if (!name) throw new GoogleApiError('rejected', `"${property}" is not a GA4 property (properties/123456789)`, null);
  const out = new Map<string, Ga4Day>();
  const fields: Record<string, keyof Ga4Day> = { sessions: 'sessions', totalUsers: 'users', keyEvents: 'conversions' };
  for (let offset = 0, page = 0; page < MAX_PAGES; page++) {
    const answer = (await call(apis, 'GA4 Data API', token, 'POST', `${base(apis.ga4ApiUrl)}/v1beta/${name}:runReport`, {
      dateRanges: [{ startDate: from, endDate: to }],
      dimensions: [{ name: 'date' }],
      metrics: [{ name: 'sessions' }, { name: 'totalUsers' }, { name: 'keyEvents' }],
      limit: String(GA4_ROWS),
      offset: String(offset),
    })) as {
      metricHeaders?: { name?: unknown }[];
      rows?: { dimensionValues?: { value?: unknown }[]; metricValues?: { value?: unknown }[] }[];
      rowCount?: unknown;
    };
    const headers = (answer.metricHeaders ?? []).map((h) => (typeof h.name === 'string' ? fields[h.name] : undefined));
    const rows = answer.rows ?? [];
    for (const row of rows) {
      const raw = row.dimensionValues?.[0]?.value;
      const day = typeof raw === 'string' ? fromCompact(raw) : null;
      if (!day) continue;
      const metrics: Ga4Day = { sessions: 0, users: 0, conversions: 0 };
      headers.forEach((field, i) => {
        if (field) metrics[field] = number(row.metricValues?.[i]?.value);
      });
      out.set(day, metrics);
    }
    offset += rows.length;
    if (rows.length === 0 || offset >= number(answer.rowCount)) break;
  }
  return out;
}

/** Search Console clicks, impressions, ctr and position per day of [from, to] (fresh data included), for the days it has rows for. */
export async function fetchGsc(apis: GoogleApis, token: string, siteUrl: string, from: string, to: string): Promise<Map<string, GscDay>> {
  const out = new Map<string, GscDay>();
  for (let startRow = 0, page = 0; page < MAX_PAGES; page++) {
    const answer = (await call(
      apis,
      'Search Console API',
      token,
      'POST',
      `${base(apis.gscApiUrl)}/webmasters/v3/sites/${encodeURIComponent(siteUrl)}/searchAnalytics/query`,
      {
        startDate: from,
        endDate: to,
        dimensions: ['date'],
        rowLimit: GSC_ROWS,
        startRow,
        // Fresh (not yet final) numbers too: they are re-fetched, and replaced, while the lookback window covers them.
        dataState: 'all',
      },
    )) as { rows?: { keys?: unknown[]; clicks?: unknown; impressions?: unknown; ctr?: unknown; position?: unknown }[] };
    const rows = answer.rows ?? [];
    for (const row of rows) {
      const day = row.keys?.[0];
      if (typeof day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(day)) continue;
      out.set(day, { clicks: number(row.clicks), impressions: number(row.impressions), ctr: number(row.ctr), position: number(row.position) });
    }
    startRow += rows.length;
    if (rows.length < GSC_ROWS) break;
  }
  return out;
}

export const ZERO: Record<Source, DayMetrics> = {
  ga4: { sessions: 0, users: 0, conversions: 0 },
  gsc: { clicks: 0, impressions: 0, ctr: 0, position: 0 },
};
