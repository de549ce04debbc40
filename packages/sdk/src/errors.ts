import type { components } from './generated/openapi.ts';

/** The API's error body (SPEC "Errors"): `{ statusCode, error, message, code?, details? }`. */
export type ErrorBody = components['schemas']['ErrorBody'];

/** A non-2xx answer of the API, carrying its error body. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly body: Partial<ErrorBody>;
  /** Seconds to wait before retrying, from `Retry-After` (429 and some 503s). */
  readonly retryAfter: number | undefined;
  readonly method: string;
  readonly url: string;

  constructor(init: { status: number; body: unknown; method: string; url: string; retryAfter?: string | null }) {
    const body = (
      init.body && typeof init.body === 'object' ? init.body : { message: typeof init.body === 'string' && init.body ? init.body : undefined }
    ) as Partial<ErrorBody>;
    const message = typeof body.message === 'string' ? body.message : body.message !== undefined ? JSON.stringify(body.message) : `HTTP ${init.status}`;
    super(`${init.method} ${pathOf(init.url)}: ${init.status}${body.code ? ` ${body.code}` : ''}: ${message}`);
    this.status = init.status;
    this.body = body;
    this.method = init.method;
    this.url = init.url;
    const retry = init.retryAfter ? Number(init.retryAfter) : NaN;
    this.retryAfter = Number.isFinite(retry) ? retry : undefined;
  }

  /** The error code (`VALIDATION_ERROR`, `NOT_FOUND`, `PLAN_LIMIT`, …), or `error` when the body has none (SPEC "Errors" rule 3). */
  get code(): string | undefined {
    return this.body.code ?? this.body.error;
  }

  /** The `details` of the body (a 400's fields, a 422's node, a 429 PLAN_LIMIT's `{ limit, value, used }`). */
  get details(): unknown {
    return (this.body as { details?: unknown }).details;
  }
}

function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname;
  } catch {
    return url;
  }
}

/** Reads an error response into an ApiError (its JSON body, or its text). */
export async function apiErrorOf(response: Response, method: string): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return new ApiError({ status: response.status, body, method, url: response.url, retryAfter: response.headers.get('retry-after') });
}
