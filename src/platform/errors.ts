/** The one error class of the service. The error handler turns it into `{ statusCode, error, message, code }`. */
export class AppError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly details: unknown;
  readonly headers: Record<string, string> | undefined;

  constructor(statusCode: number, code: string, message: string, details?: unknown, headers?: Record<string, string>) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

export const badRequest = (message: string, details?: unknown) => new AppError(400, 'VALIDATION_ERROR', message, details);
export const unauthorized = (message = 'Missing or invalid credentials') => new AppError(401, 'UNAUTHORIZED', message);
export const forbidden = (message = 'You are not allowed to do this') => new AppError(403, 'FORBIDDEN', message);
export const insufficientScope = (scope: string) => new AppError(403, 'INSUFFICIENT_SCOPE', `This API key lacks the scope "${scope}"`);
export const notFound = (what = 'Resource') => new AppError(404, 'NOT_FOUND', `${what} not found`);
export const conflict = (message: string) => new AppError(409, 'CONFLICT', message);
export const unprocessable = (code: string, message: string, details?: unknown) => new AppError(422, code, message, details);
export const rateLimited = (retryAfterS: number, code = 'RATE_LIMIT', message = 'Too many requests') =>
  new AppError(429, code, message, undefined, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterS))) });

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export function reasonPhrase(status: number): string {
  return REASONS[status] ?? (status >= 500 ? 'Internal Server Error' : 'Error');
}
