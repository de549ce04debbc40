import { and, eq, lt, sql } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import { newId } from '../../platform/ids.ts';
import { toEnvelope } from '../events/service.ts';
import type { NotificationsService } from '../notifications/service.ts';
import type { OrgsService } from '../orgs/service.ts';
import { envelopeBody } from './shorten.ts';
import { sendSigned, type SendResult } from './signer.ts';
import { webhookDeliveries, webhookEndpoints } from './tables.ts';
import type { WebhooksService } from './service.ts';

type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export const MAX_ATTEMPTS = 5;
export const DISABLE_AFTER_FAILURES = 100;
export const HISTORY_DAYS = 7;
const BATCH = 50;
const LEASE_MS = 60_000;
const PREVIEW_BYTES = 512;

/**
 * Sends due deliveries. A claimed delivery is leased, so an instance that dies mid-send leaves it
 * to be picked up again after the lease; the envelope id stays the same on every attempt, the
 * delivery id (one per attempt) does not.
 */
export class WebhookDeliverer {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly webhooks: WebhooksService;
  private readonly notifications: NotificationsService;
  private readonly orgs: OrgsService;

  constructor(deps: Deps, webhooks: WebhooksService, notifications: NotificationsService, orgs: OrgsService) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.config = deps.config;
    this.webhooks = webhooks;
    this.notifications = notifications;
    this.orgs = orgs;
  }

  async round(): Promise<boolean> {
    const now = this.clock.now();
    const claimed = (await this.db.execute(sql`
      update webhook_deliveries set locked_until = ${new Date(now.getTime() + LEASE_MS).toISOString()}::timestamptz
      where id in (
        select id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= ${now.toISOString()}::timestamptz
          and (locked_until is null or locked_until < ${now.toISOString()}::timestamptz)
        order by next_attempt_at limit ${BATCH}
        for update skip locked)
      returning id`)) as unknown as { rows: { id: string }[] };
    const ids = claimed.rows.map((r) => r.id);
    await Promise.all(ids.map((id) => this.deliver(id)));
    // Work was done: look again at once, a retry may already be due.
    return ids.length > 0;
  }

  private async deliver(id: string): Promise<void> {
    const [delivery] = await this.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
    if (!delivery || delivery.status !== 'pending') return;
    const [endpoint] = await this.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, delivery.endpointId));
    const event = await this.webhooks.eventOf(delivery.eventId);
    if (!endpoint || !endpoint.active || !event) {
      await this.finish(delivery, { ok: false, durationMs: 0, error: !event ? 'event no longer exists' : 'endpoint inactive' }, false);
      return;
    }
    const result = await sendSigned({
      url: endpoint.url,
      secret: this.webhooks.secretOf(endpoint),
      body: envelopeBody(toEnvelope(event)),
      eventType: event.type,
      deliveryId: delivery.id,
      allowPrivate: this.config.webhookAllowPrivate,
      previewBytes: PREVIEW_BYTES,
      timeoutMs: this.config.webhookTimeoutMs,
    });
    await this.finish(delivery, result, true);
  }

  private async finish(delivery: DeliveryRow, result: SendResult, counts: boolean): Promise<void> {
    const now = this.clock.now();
    let disabled: { orgId: string; endpointId: string; url: string; reason: string } | null = null;
    await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      await tx.update(webhookDeliveries).set({
        status: result.ok ? 'succeeded' : 'failed',
        statusCode: result.statusCode ?? null,
        durationMs: result.durationMs,
        responseBodyPreview: result.responseBodyPreview ?? null,
        error: result.error ?? null,
        finishedAt: now,
        lockedUntil: null,
      }).where(eq(webhookDeliveries.id, delivery.id));
      if (!counts) return;
      if (result.ok) {
        await tx.update(webhookEndpoints).set({ consecutiveFailures: 0 }).where(and(eq(webhookEndpoints.id, delivery.endpointId), sql`consecutive_failures <> 0`));
        return;
      }
      const [ep] = await tx.update(webhookEndpoints)
        .set({ consecutiveFailures: sql`${webhookEndpoints.consecutiveFailures} + 1` })
        .where(eq(webhookEndpoints.id, delivery.endpointId))
        .returning();
      if (!ep) return;
      const gone = result.statusCode === 410;
      if (ep.active && (gone || ep.consecutiveFailures >= DISABLE_AFTER_FAILURES)) {
        const reason = gone ? 'receiver answered 410 Gone' : `${ep.consecutiveFailures} consecutive failed deliveries`;
        await tx.update(webhookEndpoints).set({ active: false, disabledReason: reason, updatedAt: now }).where(eq(webhookEndpoints.id, ep.id));
        await this.webhooks.cancelPending(tx, ep.id, 'endpoint deactivated');
        disabled = { orgId: ep.orgId, endpointId: ep.id, url: ep.url, reason };
        return;
      }
      if (ep.active && delivery.attempt < MAX_ATTEMPTS) {
        const delays = this.config.webhookRetryDelaysS;
        const delayS = delays[Math.min(delivery.attempt - 1, delays.length - 1)] ?? 60;
        await tx.insert(webhookDeliveries).values({
          id: newId('delivery', now.getTime()), orgId: delivery.orgId, endpointId: delivery.endpointId, eventId: delivery.eventId,
          eventType: delivery.eventType, attempt: delivery.attempt + 1, status: 'pending', nextAttemptAt: new Date(now.getTime() + delayS * 1000),
        });
      }
    });
    if (disabled) await this.notifyDisabled(disabled);
  }

  private async notifyDisabled(d: { orgId: string; endpointId: string; url: string; reason: string }): Promise<void> {
    for (const userId of await this.orgs.ownerIds(d.orgId)) {
      await this.notifications.notify({
        orgId: d.orgId,
        userId,
        kind: 'webhook.disabled',
        title: 'Webhook endpoint deactivated',
        body: `Deliveries to ${d.url} stopped: ${d.reason}. Fix the receiver, then re-enable the endpoint.`,
        link: `/api/v1/orgs/${d.orgId}/webhook-endpoints/${d.endpointId}`,
      });
    }
  }

  /** History is kept for HISTORY_DAYS days. */
  async purge(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - HISTORY_DAYS * 86_400_000);
    const deleted = await this.db.delete(webhookDeliveries)
      .where(and(lt(webhookDeliveries.createdAt, cutoff), sql`status <> 'pending'`))
      .returning({ id: webhookDeliveries.id });
    return deleted.length;
  }
}
