import { hmacSha256Hex } from '../../platform/crypto.ts';
import { OutboundError, outboundRequest } from '../../platform/http-client.ts';

export const WEBHOOK_USER_AGENT = 'Service-Webhooks/1.0';
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** `X-Service-Signature`: HMAC-SHA256 of `<timestamp>.<raw body>` keyed with the endpoint secret. */
export function sign(secret: string, timestamp: number, body: string): string {
  return 'sha256=' + hmacSha256Hex(secret, `${timestamp}.${body}`);
}

export interface SignedPost {
  url: string;
  secret: string;
  /** The exact bytes sent; the signature covers them. */
  body: string;
  eventType: string;
  deliveryId: string;
  allowPrivate: boolean;
  /** Bytes of the response kept for the history (0: the body is not read). */
  previewBytes?: number;
  timestampS?: number;
  timeoutMs?: number;
}

export interface SendResult {
  ok: boolean;
  statusCode?: number;
  durationMs: number;
  responseBodyPreview?: string;
  error?: string;
  /** TIMEOUT, CONNECT, BLOCKED, INVALID_URL or HTTP_<status>. */
  errorCode?: string;
  /** The receiver's `Retry-After` header, as sent. */
  retryAfter?: string;
}

/**
 * The one signed sender: webhook deliveries, the test ping, `utility.webhookOut` and the CRM sync
 * step all go through here. Any 2xx succeeds; redirects are not followed and count as failures.
 */
export async function sendSigned(post: SignedPost): Promise<SendResult> {
  const timestamp = post.timestampS ?? Math.floor(Date.now() / 1000);
  const started = performance.now();
  try {
    const res = await outboundRequest({
      method: 'POST',
      url: post.url,
      allowPrivate: post.allowPrivate,
      timeoutMs: post.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
      readBytes: post.previewBytes ?? 0,
      headers: {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        'x-service-event': post.eventType,
        'x-service-timestamp': String(timestamp),
        'x-service-signature': sign(post.secret, timestamp, post.body),
        'x-service-delivery': post.deliveryId,
      },
      body: post.body,
    });
    const ok = res.status >= 200 && res.status < 300;
    const result: SendResult = { ok, statusCode: res.status, durationMs: res.durationMs };
    if (res.body) result.responseBodyPreview = res.body;
    const retryAfter = res.headers['retry-after'];
    if (typeof retryAfter === 'string') result.retryAfter = retryAfter;
    if (!ok) {
      result.errorCode = `HTTP_${res.status}`;
      result.error = res.status >= 300 && res.status < 400 ? `redirect (${res.status}) not followed` : `receiver answered ${res.status}`;
    }
    return result;
  } catch (error) {
    const durationMs = Math.round(performance.now() - started);
    if (error instanceof OutboundError) return { ok: false, durationMs, error: error.message, errorCode: error.code };
    return { ok: false, durationMs, error: (error as Error).message, errorCode: 'CONNECT' };
  }
}
