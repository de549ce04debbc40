import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, reasonPhrase } from '../errors.ts';
import { isUniqueViolation } from '../db.ts';
import { explainErrors, type SchemaError } from './validation.ts';

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
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'VALIDATION_ERROR', 'Body cannot be empty when content-type is application/json'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'VALIDATION_ERROR', 'Body is not valid JSON'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'VALIDATION_ERROR'],
};

/** The media types a route takes: its `consumes`, the types of its body `content`, or JSON. */
function acceptedTypes(request: FastifyRequest): string[] {
  const schema = request.routeOptions?.schema as { consumes?: string[]; body?: { content?: Record<string, unknown> } } | undefined;
  if (schema?.consumes?.length) return schema.consumes;
  const content = schema?.body?.content;
  if (content && typeof content === 'object' && Object.keys(content).length) return Object.keys(content);
  return ['application/json'];
}

/** A 415 that says what to send instead. */
function unsupportedMediaType(request: FastifyRequest): Body {
  const accepted = acceptedTypes(request);
  const sent = request.headers['content-type']?.split(';')[0]?.trim();
  const send = `send Content-Type: ${accepted.join(' or ')}`;
  const message = sent ? `Content-Type '${sent}' is not accepted here: ${send}` : `The body has no Content-Type: ${send}`;
  return body(415, 'UNSUPPORTED_MEDIA_TYPE', message, [
    { field: 'headers.content-type', message: `must be ${accepted.join(' or ')}`, code: 'contentType', allowed: accepted },
  ]);
}

/** The one error handler: every failure leaves as `{ statusCode, error, message, code? }`. */
export function toErrorBody(error: FastifyError | AppError | Error, request: FastifyRequest): { body: Body; headers?: Record<string, string> } {
  if (error instanceof AppError) {
    return { body: body(error.statusCode, error.code, error.message, error.details), headers: error.headers };
  }
  const fe = error as FastifyError & { validationContext?: string; validation?: SchemaError[] };
  if (fe.validation) {
    const { message, details } = explainErrors(fe.validation, fe.validationContext ?? 'body');
    return { body: body(400, 'VALIDATION_ERROR', message, details) };
  }
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return { body: unsupportedMediaType(request) };
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
}

/**
 * What no route took: `fallback` may answer it (the web panel takes its client-side paths);
 * everything else is a JSON 404 in the error body.
 */
export function registerNotFound(app: FastifyInstance, fallback?: (request: FastifyRequest, reply: FastifyReply) => boolean): void {
  app.setNotFoundHandler((request, reply) => {
    if (fallback?.(request, reply)) return;
    reply.code(404).send(body(404, 'NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`));
  });
}
