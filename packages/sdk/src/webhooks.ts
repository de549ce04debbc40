import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PlatformEvent } from './streams.ts';

/**
 * Verifying a webhook delivery (SPEC "Delivery headers", docs/webhooks.md):
 * `X-Service-Signature: sha256=<hex>` is HMAC-SHA256 of `<X-Service-Timestamp>.<raw body>` keyed
 * with the endpoint secret; a timestamp more than 300 s from now is refused.
 */

export type WebhookVerificationCode = 'MISSING_HEADER' | 'INVALID_TIMESTAMP' | 'TIMESTAMP_OUT_OF_TOLERANCE' | 'INVALID_SIGNATURE' | 'INVALID_BODY';

/** Why a delivery was refused; answer it with a 4xx (401 for a signature, 400 for a body). */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly code: WebhookVerificationCode;
  constructor(code: WebhookVerificationCode, message: string) {
    super(message);
    this.code = code;
  }
}

export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** The raw body exactly as received (a string, Buffer or Uint8Array): re-serialized JSON does not match. */
  body: string | Uint8Array;
  /** The request's headers (a fetch Headers, or Node's `req.headers`). */
  headers: HeaderSource;
  /** The endpoint secret, or several (while rotating: the new one and the old one). */
  secret: string | readonly string[];
  /** Seconds a timestamp may differ from now (default 300). */
  toleranceSeconds?: number;
  /** Now, in milliseconds (default Date.now()). */
  now?: number;
}

/** The delivery a verified request carries. */
export interface WebhookDelivery<P = Record<string, unknown>> {
  /** The envelope: de-duplicate by its `id` (the same on every retry). */
  event: PlatformEvent<P>;
  /** `X-Service-Delivery`: this attempt's id (new on every retry). */
  deliveryId: string | undefined;
  /** `X-Service-Timestamp`, Unix seconds. */
  timestamp: number;
}

export const SIGNATURE_HEADER = 'x-service-signature';
export const TIMESTAMP_HEADER = 'x-service-timestamp';
export const DELIVERY_HEADER = 'x-service-delivery';
export const EVENT_HEADER = 'x-service-event';

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** `sha256=<hex>` of `<timestamp>.<raw body>` under `secret` (what the service sends). */
export function signWebhook(secret: string, timestamp: number | string, body: string | Uint8Array): string {
  return 'sha256=' + createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/**
 * Checks a delivery's signature and timestamp and returns its parsed envelope; throws a
 * WebhookVerificationError otherwise. Every candidate signature in the header (comma or space
 * separated) is compared with every secret, in constant time.
 */
export function verifyWebhook<P = Record<string, unknown>>(options: VerifyOptions): WebhookDelivery<P> {
  const signatureHeader = header(options.headers, SIGNATURE_HEADER);
  const timestampHeader = header(options.headers, TIMESTAMP_HEADER);
  if (!signatureHeader) throw new WebhookVerificationError('MISSING_HEADER', 'The X-Service-Signature header is missing');
  if (!timestampHeader) throw new WebhookVerificationError('MISSING_HEADER', 'The X-Service-Timestamp header is missing');
  const timestamp = Number(timestampHeader.trim());
  if (!/^\d{1,12}$/.test(timestampHeader.trim()) || !Number.isSafeInteger(timestamp))
    throw new WebhookVerificationError('INVALID_TIMESTAMP', 'X-Service-Timestamp is not Unix seconds');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = (options.now ?? Date.now()) / 1000;
  if (Math.abs(now - timestamp) > tolerance)
    throw new WebhookVerificationError('TIMESTAMP_OUT_OF_TOLERANCE', `The timestamp is more than ${tolerance} seconds from now`);

  const secrets = typeof options.secret === 'string' ? [options.secret] : [...options.secret];
  if (!secrets.length || secrets.some((s) => !s)) throw new TypeError('verifyWebhook needs the endpoint secret');
  const candidates = signatureHeader
    .split(/[\s,]+/)
    .filter((s) => s.startsWith('sha256='))
    .map((s) => Buffer.from(s));
  let ok = false;
  for (const secret of secrets) {
    const expected = Buffer.from(signWebhook(secret, timestampHeader.trim(), options.body));
    for (const candidate of candidates) {
      // Compare every pair (no early exit): the time taken does not depend on which one matched.
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) ok = true;
    }
  }
  if (!ok) throw new WebhookVerificationError('INVALID_SIGNATURE', 'The signature does not match the body and the secret');

  let event: PlatformEvent<P>;
  try {
    event = JSON.parse(typeof options.body === 'string' ? options.body : Buffer.from(options.body).toString('utf8')) as PlatformEvent<P>;
  } catch {
    throw new WebhookVerificationError('INVALID_BODY', 'The body is not JSON');
  }
  if (!event || typeof event !== 'object' || typeof event.id !== 'string' || typeof event.type !== 'string')
    throw new WebhookVerificationError('INVALID_BODY', 'The body is not an event envelope (id, type, payload)');
  return { event, deliveryId: header(options.headers, DELIVERY_HEADER), timestamp };
}
