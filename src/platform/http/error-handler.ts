import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, reasonPhrase } from '../errors.ts';
import { isUniqueViolation } from '../db.ts';

interface Body {
  statusCode: number;
  error: string;
  message: string;
  code?: string;
  details?: unknown;
}

function body(statusCode: number, code: string | undefined, message: string, details?: unknown): Body {
  const out: Body = { statusCode, error: reasonPhrase(statusCode), message };
  if (code) out.code = code;
  if (details !== undefined) out.details = details;
  return out;
}

const FASTIFY_CODES: Record<string, [number, string, string?]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'PAYLOAD_TOO_LARGE', 'Request body is larger than the limit'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'UNSUPPORTED_MEDIA_TYPE'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'VALIDATION_ERROR', 'Body cannot be empty when content-type is application/json'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'VALIDATION_ERROR', 'Body is not valid JSON'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'VALIDATION_ERROR'],
};

interface ValidationItem {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

function fieldOf(context: string | undefined, item: ValidationItem): string {
  const path = (item.instancePath ?? '').split('/').filter(Boolean).join('.');
  const missing = item.keyword === 'required' ? String(item.params?.missingProperty ?? '') : '';
  const extra = item.keyword === 'additionalProperties' ? String(item.params?.additionalProperty ?? '') : '';
  return [context ?? 'body', path, missing || extra].filter(Boolean).join('.');
}

/** The one error handler: every failure leaves as `{ statusCode, error, message, code? }`. */
export function toErrorBody(error: FastifyError | AppError | Error, request: FastifyRequest): { body: Body; headers?: Record<string, string> } {
  if (error instanceof AppError) {
    return { body: body(error.statusCode, error.code, error.message, error.details), headers: error.headers };
  }
  const fe = error as FastifyError & { validationContext?: string; validation?: ValidationItem[] };
  if (fe.validation) {
    const details = fe.validation.map((v) => ({ field: fieldOf(fe.validationContext, v), message: v.message ?? 'is invalid' }));
    const message = details.map((d) => `${d.field} ${d.message}`).join('; ');
    return { body: body(400, 'VALIDATION_ERROR', message, details) };
  }
  const known = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (known) return { body: body(known[0], known[1], known[2] ?? fe.message) };
  if (isUniqueViolation(error)) return { body: body(409, 'CONFLICT', 'A resource with these values already exists') };
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { body: body(fe.statusCode, fe.statusCode === 429 ? 'RATE_LIMIT' : undefined, fe.message) };
  }
  request.log.error({ err: error }, 'unhandled error');
  return { body: body(500, 'INTERNAL', 'Internal server error') };
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const { body: out, headers } = toErrorBody(error, request);
    if (out.statusCode < 500) request.log.warn({ statusCode: out.statusCode, code: out.code }, out.message);
    if (headers) reply.headers(headers);
    // An error raised after an SSE stream took over the socket cannot be answered any more.
    if (reply.sent || reply.raw.headersSent) return;
    reply.code(out.statusCode).type('application/json').send(out);
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(body(404, 'NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`));
  });
}
