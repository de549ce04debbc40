import createFetchClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations as Operations, paths } from './generated/openapi.ts';
import { operations, type OperationId } from './generated/operations.ts';
import { ApiError, apiErrorOf } from './errors.ts';

export type Schemas = components['schemas'];
export type Tokens = Schemas['Tokens'];

export interface ClientOptions {
  /** The server's origin, e.g. `https://automation.example.com` (the paths carry `/api/v1`). */
  baseUrl: string;
  /** An API key (`X-Api-Key`), for server-to-server use. */
  apiKey?: string;
  /** A user's access token (`Authorization: Bearer`). */
  accessToken?: string;
  /**
   * A user's refresh token: the client renews the access token with it shortly before it expires
   * (or when none is given). Refresh tokens rotate: `onTokens` receives every new pair, so the
   * caller can store the new refresh token (the old one is spent).
   */
  refreshToken?: string;
  onTokens?: (tokens: Tokens) => void | Promise<void>;
  /** The organization `{orgId}` stands for when a per-operation call leaves it out. */
  orgId?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** A fetch implementation (default: the global fetch). */
  fetch?: typeof globalThis.fetch;
}

type Responses<O extends OperationId> = Operations[O]['responses'];
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : R extends { content: { 'text/event-stream': infer B } } ? B : undefined;
/** The body of an operation's success answer (200, 201, 202; undefined for 204). */
export type OperationResult<O extends OperationId> = {
  [S in keyof Responses<O>]: S extends 200 | 201 | 202 ? JsonOf<Responses<O>[S]> : S extends 204 ? undefined : never;
}[keyof Responses<O>];

type Params<O extends OperationId> = Operations[O]['parameters'];
type PathParams<O extends OperationId> =
  Params<O> extends { path: infer P } ? (P extends Record<string, unknown> ? P : Record<never, never>) : Record<never, never>;
/** `{orgId}` may be left out when the client has an `orgId`. */
type OwnPath<O extends OperationId> = Omit<PathParams<O>, 'orgId'> & ('orgId' extends keyof PathParams<O> ? { orgId?: string } : Record<never, never>);
type QueryOf<O extends OperationId> = Params<O> extends { query?: infer Q } ? (Q extends Record<string, unknown> ? Q : never) : never;
type BodyOf<O extends OperationId> = Operations[O] extends { requestBody?: { content: infer C } }
  ? C extends { 'application/json': infer B }
    ? B
    : C extends { 'multipart/form-data': unknown }
      ? FormData
      : never
  : never;
type PathPart<O extends OperationId> = keyof Omit<PathParams<O>, 'orgId'> extends never ? { path?: OwnPath<O> } : { path: OwnPath<O> };
type BodyPart<O extends OperationId> = Operations[O] extends { requestBody: unknown } ? { body: BodyOf<O> } : { body?: BodyOf<O> };

/** What a per-operation call takes: its path parameters, query and body, typed from the document. */
export type OperationInit<O extends OperationId> = PathPart<O> &
  BodyPart<O> & {
    query?: QueryOf<O>;
    headers?: Record<string, string>;
    signal?: AbortSignal;
  };

type OptionalIfEmpty<O extends OperationId> = Record<never, never> extends OperationInit<O> ? [init?: OperationInit<O>] : [init: OperationInit<O>];

/** One method per operationId: `client.ops.listLeads({ query: { pageSize: 50 } })` → the data, or an ApiError. */
export type OperationMethods = {
  [O in OperationId]: (...init: OptionalIfEmpty<O>) => Promise<OperationResult<O>>;
};

export interface AutomationClient extends Client<paths> {
  readonly baseUrl: string;
  /** The default organization of per-operation calls and streams. */
  orgId: string | undefined;
  /** Every operation by its operationId; resolves to the data, rejects with an ApiError. */
  readonly ops: OperationMethods;
  /** The authentication headers a request carries now (renewing the access token when due). */
  authHeaders(): Promise<Record<string, string>>;
  /** The fetch the client uses (streams use it too). */
  readonly fetch: typeof globalThis.fetch;
}

/** Seconds before expiry at which an access token is renewed. */
const RENEW_MARGIN_S = 60;

function expiryOf(token: string): number | null {
  try {
    const part = (token.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/');
    const payload = JSON.parse(atob(part.padEnd(Math.ceil(part.length / 4) * 4, '='))) as { exp?: number };
    return typeof payload.exp === 'number' ? payload.exp : null;
  } catch {
    return null;
  }
}

/** Paths that take no credentials (and must not trigger a renewal). */
function isPublicAuthPath(path: string): boolean {
  return path.startsWith('/api/v1/auth/') && !/\/auth\/(me|password|logout)$/.test(path);
}

/**
 * A typed client of the API over the service's OpenAPI document: `client.GET('/api/v1/orgs/{orgId}/leads', { params: … })`
 * (openapi-fetch: `{ data, error, response }`), or `client.ops.listLeads(…)` (the data, or an ApiError thrown).
 */
export function createClient(options: ClientOptions): AutomationClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;
  let accessToken = options.accessToken;
  let refreshToken = options.refreshToken;
  let renewing: Promise<string> | null = null;

  const renew = (): Promise<string> => {
    renewing ??= (async () => {
      try {
        const res = await doFetch(`${baseUrl}/api/v1/auth/refresh`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...options.headers },
          body: JSON.stringify({ refreshToken }),
        });
        if (!res.ok) throw await apiErrorOf(res, 'POST');
        const { tokens } = (await res.json()) as { tokens: Tokens };
        accessToken = tokens.accessToken;
        if (tokens.refreshToken) refreshToken = tokens.refreshToken;
        await options.onTokens?.(tokens);
        return tokens.accessToken;
      } finally {
        renewing = null;
      }
    })();
    return renewing;
  };

  const authHeaders = async (): Promise<Record<string, string>> => {
    if (options.apiKey) return { 'x-api-key': options.apiKey };
    if (refreshToken) {
      const exp = accessToken ? expiryOf(accessToken) : null;
      if (!accessToken || (exp !== null && exp - RENEW_MARGIN_S < Date.now() / 1000)) await renew();
    }
    return accessToken ? { authorization: `Bearer ${accessToken}` } : {};
  };

  const fetchClient = createFetchClient<paths>({ baseUrl, fetch: (request: Request) => doFetch(request), headers: options.headers });
  const auth: Middleware = {
    async onRequest({ request, schemaPath }) {
      if (isPublicAuthPath(schemaPath)) return request;
      for (const [name, value] of Object.entries(await authHeaders())) request.headers.set(name, value);
      return request;
    },
  };
  fetchClient.use(auth);

  const client = fetchClient as AutomationClient;
  Object.defineProperties(client, {
    baseUrl: { value: baseUrl, enumerable: true },
    orgId: { value: options.orgId, writable: true, enumerable: true },
    authHeaders: { value: authHeaders },
    fetch: { value: doFetch },
  });

  const call = async (
    id: OperationId,
    init: { path?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<unknown> => {
    const { method, path } = operations[id];
    const pathParams: Record<string, unknown> = { ...init.path };
    if (path.includes('{orgId}') && pathParams.orgId === undefined) {
      if (!client.orgId) throw new Error(`${id} needs an organization: pass path.orgId or create the client with orgId`);
      pathParams.orgId = client.orgId;
    }
    for (const name of path.match(/\{(\w+)\}/g) ?? []) {
      if (pathParams[name.slice(1, -1)] === undefined) throw new Error(`${id} needs the path parameter ${name.slice(1, -1)}`);
    }
    const isForm = typeof FormData !== 'undefined' && init.body instanceof FormData;
    const request = fetchClient.request as unknown as (
      m: string,
      p: string,
      i: Record<string, unknown>,
    ) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    const { data, error, response } = await request(method, path, {
      params: { path: pathParams, query: init.query },
      body: init.body,
      headers: init.headers,
      signal: init.signal,
      ...(isForm ? { bodySerializer: (b: unknown) => b } : {}),
    });
    if (!response.ok)
      throw new ApiError({
        status: response.status,
        body: error,
        method: method.toUpperCase(),
        url: response.url,
        retryAfter: response.headers.get('retry-after'),
      });
    return response.status === 204 ? undefined : data;
  };
  const ops = Object.fromEntries(
    (Object.keys(operations) as OperationId[]).map((id) => [id, (init?: Parameters<typeof call>[1]) => call(id, init)]),
  ) as unknown as OperationMethods;
  Object.defineProperty(client, 'ops', { value: ops, enumerable: true });
  return client;
}
