import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer } from './loopback-server.ts';

/**
 * Google's analytics APIs on loopback, in their wire formats, each under its own base (the three
 * URLs env() hands to the service):
 *
 *   {base}/data   GA4 Data API     POST /v1beta/properties/{id}:runReport — the `date` dimension
 *                                  with sessions, totalUsers, keyEvents: values as strings, dates as
 *                                  YYYYMMDD, rows only for days with data (in no particular order),
 *                                  `rowCount` and `rows` left out when there are none, as GA4 does.
 *   {base}/admin  GA4 Admin API    GET /v1beta/accountSummaries — paged (`pageSize`, `pageToken`).
 *   {base}/gsc    Search Console   GET /webmasters/v3/sites; POST /webmasters/v3/sites/{siteUrl,
 *                                  percent-encoded}/searchAnalytics/query — rows `{ keys: [day],
 *                                  clicks, impressions, ctr, position }` for days with data.
 *
 * Every call needs `Authorization: Bearer <token>` that `isValid` accepts (point it at the OAuth
 * stand-in's), else 401 UNAUTHENTICATED as Google answers. Properties and sites the stand-in does
 * not hold answer 403 PERMISSION_DENIED. `failNext` queues answers for the next matching calls
 * (429 RESOURCE_EXHAUSTED, 500 …).
 */

export interface Ga4Numbers {
  sessions: number;
  totalUsers: number;
  keyEvents: number;
}
export interface GscNumbers {
  clicks: number;
  impressions: number;
  ctr: number;
  position: number;
}

export type Api = 'data' | 'admin' | 'sites' | 'query';

export interface Call {
  api: Api;
  method: string;
  /** The path as received (still percent-encoded). */
  path: string;
  token: string;
  body: Record<string, unknown> | undefined;
}

interface Planned {
  api: Api;
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

export class GoogleStandIn extends LoopbackServer {
  /** Whether a bearer token is good (default: any non-empty one). */
  isValid: (token: string) => boolean = (token) => token !== '';
  /** GA4 accounts and their properties, as accountSummaries lists them. */
  accounts: { account: string; displayName: string; properties: { property: string; displayName: string }[] }[] = [];
  /** Search Console sites of the user. */
  sites: { siteUrl: string; permissionLevel: string }[] = [];
  /** GA4 numbers per property (`properties/123`) and day (YYYY-MM-DD); a day absent has no data. */
  readonly ga4 = new Map<string, Map<string, Ga4Numbers>>();
  /** Search Console numbers per site and day. */
  readonly gsc = new Map<string, Map<string, GscNumbers>>();
  /** accountSummaries page size when the request asks for more (small, so paging is exercised). */
  summaryPageSize = 2;
  /** Called with each call as it arrives, before it is answered (a test may expire its token here). */
  onCall: ((call: Call) => void) | null = null;
  readonly calls: Call[] = [];
  private readonly planned: Planned[] = [];

  /** GA4_API_URL, GA4_ADMIN_API_URL, GSC_API_URL pointing here. */
  env(): Record<string, string> {
    return { GA4_API_URL: `${this.url}/data`, GA4_ADMIN_API_URL: `${this.url}/admin`, GSC_API_URL: `${this.url}/gsc` };
  }

  /** Sets GA4 numbers of a property for some days (replacing what the days had: a revision). */
  setGa4(property: string, days: Record<string, Partial<Ga4Numbers> | null>): void {
    const map = this.ga4.get(property) ?? new Map<string, Ga4Numbers>();
    for (const [day, n] of Object.entries(days)) {
      if (n === null) map.delete(day);
      else map.set(day, { sessions: 0, totalUsers: 0, keyEvents: 0, ...n });
    }
    this.ga4.set(property, map);
  }

  setGsc(siteUrl: string, days: Record<string, Partial<GscNumbers> | null>): void {
    const map = this.gsc.get(siteUrl) ?? new Map<string, GscNumbers>();
    for (const [day, n] of Object.entries(days)) {
      if (n === null) map.delete(day);
      else map.set(day, { clicks: 0, impressions: 0, ctr: 0, position: 0, ...n });
    }
    this.gsc.set(siteUrl, map);
  }

  /** The next `times` calls to `api` answer this instead. */
  failNext(api: Api, status: number, times = 1, headers: Record<string, string> = {}): void {
    for (let i = 0; i < times; i++) this.planned.push({ api, status, body: errorBody(api, status), headers });
  }

  callsTo(api: Api): Call[] {
    return this.calls.filter((c) => c.api === api);
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const send = (status: number, json: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
      res.end(JSON.stringify(json));
    };
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const path = (req.url ?? '/').split('?')[0]!;
    const api = apiOf(req.method ?? 'GET', path);
    if (!api) return send(404, { error: { code: 404, message: `Method not found: ${path}`, status: 'NOT_FOUND' } });
    let body: Record<string, unknown> | undefined;
    if (raw) {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return send(400, { error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' } });
      }
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const call: Call = { api, method: req.method ?? 'GET', path, token, body };
    this.calls.push(call);
    this.onCall?.(call);
    if (!token || !this.isValid(token)) return send(401, errorBody(api, 401));
    const planIndex = this.planned.findIndex((p) => p.api === api);
    if (planIndex >= 0) {
      const [plan] = this.planned.splice(planIndex, 1);
      return send(plan!.status, plan!.body, plan!.headers);
    }
    if (api === 'admin') return send(200, this.summaries(url.searchParams));
    if (api === 'sites') return send(200, this.sites.length ? { siteEntry: this.sites } : {});
    if (api === 'data') {
      const property = decodeURIComponent(/^\/data\/v1beta\/(properties\/[^/:]+):runReport$/.exec(path)![1]!);
      const days = this.ga4.get(property);
      if (!days) return send(403, errorBody('data', 403));
      return this.runReport(days, body ?? {}, send);
    }
    const encoded = /^\/gsc\/webmasters\/v3\/sites\/([^/]+)\/searchAnalytics\/query$/.exec(path)![1]!;
    const siteUrl = decodeURIComponent(encoded);
    const days = this.gsc.get(siteUrl);
    if (!days) return send(403, errorBody('query', 403, siteUrl));
    const { startDate, endDate, dimensions } = (body ?? {}) as { startDate?: string; endDate?: string; dimensions?: string[] };
    if (!startDate || !endDate || !Array.isArray(dimensions) || dimensions[0] !== 'date') {
      return send(400, {
        error: { code: 400, message: 'startDate, endDate and the date dimension are required', errors: [{ domain: 'global', reason: 'badRequest' }] },
      });
    }
    const rows = [...days]
      .filter(([day]) => day >= startDate && day <= endDate)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([day, n]) => ({ keys: [day], ...n }));
    send(200, rows.length ? { rows, responseAggregationType: 'byProperty' } : { responseAggregationType: 'byProperty' });
  }

  private summaries(query: URLSearchParams): Record<string, unknown> {
    const size = Math.min(Number(query.get('pageSize') ?? 50) || 50, this.summaryPageSize);
    const start = Number(query.get('pageToken') ?? 0) || 0;
    const page = this.accounts.slice(start, start + size).map((a) => ({
      name: `accountSummaries/${a.account.split('/')[1]}`,
      account: a.account,
      displayName: a.displayName,
      propertySummaries: a.properties.map((p) => ({
        property: p.property,
        displayName: p.displayName,
        propertyType: 'PROPERTY_TYPE_ORDINARY',
        parent: a.account,
      })),
    }));
    const out: Record<string, unknown> = { accountSummaries: page };
    if (start + size < this.accounts.length) out.nextPageToken = String(start + size);
    return out;
  }

  private runReport(days: Map<string, Ga4Numbers>, body: Record<string, unknown>, send: (status: number, json: unknown) => void): void {
    const ranges = body.dateRanges as { startDate?: string; endDate?: string }[] | undefined;
    const dimensions = body.dimensions as { name?: string }[] | undefined;
    const metrics = (body.metrics as { name?: string }[] | undefined) ?? [];
    const range = ranges?.[0];
    if (!range?.startDate || !range.endDate || dimensions?.[0]?.name !== 'date') {
      return send(400, { error: { code: 400, message: 'dateRanges and the date dimension are required', status: 'INVALID_ARGUMENT' } });
    }
    const known = new Set(['sessions', 'totalUsers', 'keyEvents']);
    const unknown = metrics.find((m) => !known.has(m.name ?? ''));
    if (unknown) return send(400, { error: { code: 400, message: `Field ${unknown.name} is not a valid metric.`, status: 'INVALID_ARGUMENT' } });
    // Rows only for days with data, newest first (GA4 promises no order without orderBys).
    const rows = [...days]
      .filter(([day]) => day >= range.startDate! && day <= range.endDate!)
      .sort(([a], [b]) => b.localeCompare(a))
      .map(([day, n]) => ({
        dimensionValues: [{ value: day.replaceAll('-', '') }],
        metricValues: metrics.map((m) => ({ value: String(n[m.name as keyof Ga4Numbers]) })),
      }));
    const answer: Record<string, unknown> = {
      dimensionHeaders: [{ name: 'date' }],
      metricHeaders: metrics.map((m) => ({ name: m.name, type: 'TYPE_INTEGER' })),
      metadata: { currencyCode: 'USD', timeZone: 'Europe/Berlin' },
      kind: 'analyticsData#runReport',
    };
    if (rows.length) Object.assign(answer, { rows, rowCount: rows.length });
    send(200, answer);
  }
}

function apiOf(method: string, path: string): Api | null {
  if (method === 'POST' && /^\/data\/v1beta\/properties\/[^/:]+:runReport$/.test(path)) return 'data';
  if (method === 'GET' && path === '/admin/v1beta/accountSummaries') return 'admin';
  if (method === 'GET' && path === '/gsc/webmasters/v3/sites') return 'sites';
  if (method === 'POST' && /^\/gsc\/webmasters\/v3\/sites\/[^/]+\/searchAnalytics\/query$/.test(path)) return 'query';
  return null;
}

/** Google's error bodies: `{ error: { code, message, status } }`; Search Console (v3) adds `errors: [{ reason }]`. */
function errorBody(api: Api, status: number, siteUrl?: string): unknown {
  const v3 = api === 'sites' || api === 'query';
  const [message, googleStatus, reason] =
    status === 401
      ? [
          'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
          'UNAUTHENTICATED',
          'unauthorized',
        ]
      : status === 403
        ? [
            v3
              ? `User does not have sufficient permission for site '${siteUrl ?? ''}'. See also: https://support.google.com/webmasters/answer/2451999.`
              : 'User does not have sufficient permissions for this property.',
            'PERMISSION_DENIED',
            'forbidden',
          ]
        : status === 429
          ? ['Exhausted property tokens per hour for this project.', 'RESOURCE_EXHAUSTED', 'rateLimitExceeded']
          : ['Internal error encountered.', status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT', 'backendError'];
  return { error: v3 ? { code: status, message, errors: [{ message, domain: 'global', reason }] } : { code: status, message, status: googleStatus } };
}
