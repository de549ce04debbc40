import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';
import { currentToken, sessionExpired } from '../lib/session';

export type Schemas = components['schemas'];
export type ErrorBody = Schemas['ErrorBody'];

/** An error answer of the API, with its error body (SPEC "Errors"). */
export class ApiError extends Error {
  readonly status: number;
  readonly body: Partial<ErrorBody>;
  constructor(status: number, body: Partial<ErrorBody> | undefined) {
    super(body?.message ?? `Request failed (${status})`);
    this.status = status;
    this.body = body ?? {};
  }
  get code(): string | undefined {
    return this.body.code;
  }
  /** The fields the API named, as `{ field: message }` (a 400's `details`). */
  get fieldErrors(): Record<string, string> {
    const details = (this.body as { details?: { field?: string; message?: string }[] }).details ?? [];
    return Object.fromEntries(details.filter((d) => d.field).map((d) => [d.field!.replace(/^(body|querystring|params)\./, ''), d.message ?? 'invalid']));
  }
}

const auth: Middleware = {
  async onRequest({ request, schemaPath }) {
    if (schemaPath.startsWith('/api/v1/auth/') && !schemaPath.endsWith('/me') && !schemaPath.endsWith('/password')) return request;
    const token = await currentToken();
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  onResponse({ response, schemaPath }) {
    // A 401 outside sign-in means the session is over (signed out elsewhere, or revoked).
    if (response.status === 401 && !schemaPath.startsWith('/api/v1/auth/')) sessionExpired();
    return response;
  },
};

/** The typed client of the service's API, generated from its own OpenAPI document. */
export const api = createClient<paths>({ baseUrl: '' });
api.use(auth);

/** The data of a call, or its error as an ApiError (what TanStack Query shows as the error state). */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new ApiError(response.status, error as Partial<ErrorBody> | undefined);
  return data as T;
}

/** The query parameters a GET of `P` takes (what a list's key holds). */
export type QueryOf<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;

/** The JSON body a POST, PUT or PATCH of `P` takes. */
export type BodyOf<P extends keyof paths, M extends 'post' | 'put' | 'patch'> = paths[P] extends {
  [K in M]: { requestBody?: { content: { 'application/json': infer B } } };
}
  ? B
  : never;
