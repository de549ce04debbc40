import { deriveKey } from '../../../platform/crypto.ts';
import { derivedId, newId } from '../../../platform/ids.ts';
import { sendSigned } from '../../webhooks/index.ts';
import type { NodeContext } from './types.ts';

/** The organization's default signing secret for workflow webhooks (when a node names none). */
const derived = new Map<string, string>();
export function orgSigningSecret(appSecret: string, orgId: string): string {
  const key = `${appSecret.length}:${appSecret}:${orgId}`;
  let secret = derived.get(key);
  if (!secret) {
    secret = 'whsec_' + deriveKey(appSecret, `workflow-signing:${orgId}`).toString('base64url');
    if (derived.size > 10_000) derived.clear();
    derived.set(key, secret);
  }
  return secret;
}

/**
 * A platform-event-shaped envelope, as webhook receivers already know it. Its id is derived from
 * (run, node, item): every attempt of the step — a retry, or a re-execution after a crash — sends
 * the same id, so receivers de-duplicate by it (delivery is at least once).
 */
export function envelope(ctx: NodeContext, type: string, payload: Record<string, unknown>, itemIndex = 0) {
  const at = ctx.clock.now();
  const out: Record<string, unknown> = { id: derivedId('event', ctx.runId, [ctx.nodeId, String(itemIndex)]), type, organizationId: ctx.orgId };
  if (ctx.projectId) out.projectId = ctx.projectId;
  out.at = at.toISOString();
  out.payload = payload;
  return out;
}

export interface SignedSendResult {
  url: string;
  event: string;
  statusCode?: number;
  durationMs: number;
}

/** Sends a signed envelope; a failure throws so the node fails (and may be retried). */
export async function postSigned(
  ctx: NodeContext,
  options: { url: string; secret?: string; event: string; body: Record<string, unknown> },
): Promise<SignedSendResult> {
  if (ctx.signal.aborted) throw new Error('canceled');
  const { outbound } = ctx;
  const result = await sendSigned({
    url: options.url,
    secret: options.secret || orgSigningSecret(outbound.appSecret, ctx.orgId),
    body: JSON.stringify(options.body),
    eventType: options.event,
    deliveryId: newId('delivery'),
    allowPrivate: outbound.allowPrivate,
    timeoutMs: outbound.timeoutMs,
  });
  if (!result.ok) throw new Error(`POST ${options.url} failed: ${result.error ?? 'error'}`);
  return { url: options.url, event: options.event, statusCode: result.statusCode, durationMs: result.durationMs };
}
