import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import { SecretBox, randomToken } from '../../platform/crypto.ts';
import { notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { assertOutboundUrl } from '../../platform/http-client.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import type { EventRow } from '../events/service.ts';
import type { OrgsService } from '../orgs/service.ts';
import { sendSigned, type SendResult } from './signer.ts';
import { webhookDeliveries, webhookEndpoints } from './tables.ts';

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export const DELIVERIES_WAKE = 'wake:webhook-deliveries';

export function publicEndpoint(row: EndpointRow) {
  return {
    id: row.id, url: row.url, events: row.events, projectId: row.projectId, active: row.active, description: row.description,
    consecutiveFailures: row.consecutiveFailures, disabledReason: row.disabledReason, createdAt: row.createdAt, updatedAt: row.updatedAt,
  };
}

export function publicDelivery(row: DeliveryRow) {
  return {
    id: row.id, endpointId: row.endpointId, eventId: row.eventId, eventType: row.eventType, attempt: row.attempt, status: row.status,
    statusCode: row.statusCode, durationMs: row.durationMs, responseBodyPreview: row.responseBodyPreview, error: row.error,
    createdAt: row.createdAt, finishedAt: row.finishedAt, nextAttemptAt: row.status === 'pending' ? row.nextAttemptAt : null,
  };
}

export interface EndpointInput {
  url: string;
  secret?: string;
  events: string[];
  projectId?: string | null;
  active?: boolean;
  description?: string | null;
}

const newSecret = () => 'whsec_' + randomToken(32);

/** Webhook endpoints: management, and the fan-out of dispatched platform events into deliveries. */
export class WebhooksService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly box: SecretBox;
  private readonly orgs: OrgsService;
  private readonly opened = new Map<string, string>();

  constructor(deps: Deps, orgs: OrgsService) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.config = deps.config;
    this.box = new SecretBox(deps.config.appSecret);
    this.orgs = orgs;
  }

  secretOf(row: EndpointRow): string {
    return this.open(row.secretSealed);
  }

  /** Sealed secrets are opened once per value, not once per delivery. */
  open(sealed: string): string {
    let plain = this.opened.get(sealed);
    if (plain === undefined) {
      plain = this.box.open(sealed);
      if (this.opened.size > 10_000) this.opened.clear();
      this.opened.set(sealed, plain);
    }
    return plain;
  }

  private checkUrl(url: string) {
    return assertOutboundUrl(url, 'body.url', { allowPrivate: this.config.webhookAllowPrivate, requireHttps: true });
  }

  async create(orgId: string, input: EndpointInput) {
    await this.checkUrl(input.url);
    if (input.projectId) await this.orgs.assertProject(orgId, input.projectId);
    const secret = input.secret || newSecret();
    const [row] = await this.db.insert(webhookEndpoints).values({
      id: newId('webhookEndpoint'),
      orgId,
      projectId: input.projectId ?? null,
      url: input.url,
      description: input.description ?? null,
      events: [...new Set(input.events)],
      active: input.active ?? true,
      secretSealed: this.box.seal(secret),
    }).returning();
    return { ...publicEndpoint(row!), secret };
  }

  async row(orgId: string, id: string): Promise<EndpointRow> {
    const [row] = await this.db.select().from(webhookEndpoints).where(and(eq(webhookEndpoints.orgId, orgId), eq(webhookEndpoints.id, id)));
    if (!row) throw notFound('Webhook endpoint');
    return row;
  }

  async list(orgId: string, query: ListQuery) {
    const page = pageOf(query);
    const where = eq(webhookEndpoints.orgId, orgId);
    const [items, counted] = await Promise.all([
      this.db.select().from(webhookEndpoints).where(where).orderBy(desc(webhookEndpoints.id)).limit(page.limit).offset(page.offset),
      this.db.select({ n: sql<number>`count(*)::int` }).from(webhookEndpoints).where(where),
    ]);
    return envelope(items.map(publicEndpoint), counted[0]?.n ?? 0, page);
  }

  async update(orgId: string, id: string, patch: Partial<Omit<EndpointInput, 'secret'>>) {
    const before = await this.row(orgId, id);
    if (patch.url !== undefined) await this.checkUrl(patch.url);
    if (patch.projectId) await this.orgs.assertProject(orgId, patch.projectId);
    const set: Partial<EndpointRow> = { updatedAt: this.clock.now() };
    if (patch.url !== undefined) set.url = patch.url;
    if (patch.events !== undefined) set.events = [...new Set(patch.events)];
    if (patch.projectId !== undefined) set.projectId = patch.projectId;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.active !== undefined) {
      set.active = patch.active;
      // Re-enabling starts the failure count afresh.
      if (patch.active && !before.active) {
        set.consecutiveFailures = 0;
        set.disabledReason = null;
      }
    }
    const [row] = await this.db.update(webhookEndpoints).set(set).where(eq(webhookEndpoints.id, id)).returning();
    if (patch.active === false) await this.cancelPending(this.db, id, 'endpoint deactivated');
    return publicEndpoint(row!);
  }

  async delete(orgId: string, id: string): Promise<void> {
    await this.row(orgId, id);
    await this.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  }

  async rotateSecret(orgId: string, id: string) {
    await this.row(orgId, id);
    const secret = newSecret();
    await this.db.update(webhookEndpoints).set({ secretSealed: this.box.seal(secret), updatedAt: this.clock.now() }).where(eq(webhookEndpoints.id, id));
    return { secret };
  }

  /** Sends a `ping` envelope now and reports what the receiver said. */
  async test(orgId: string, id: string): Promise<SendResult & { ok: boolean }> {
    const row = await this.row(orgId, id);
    const at = this.clock.now();
    const ping = { id: newId('event', at.getTime()), type: 'ping', organizationId: orgId, ...(row.projectId ? { projectId: row.projectId } : {}), at: at.toISOString(), payload: { endpointId: row.id } };
    return sendSigned({
      url: row.url, secret: this.secretOf(row), body: JSON.stringify(ping), eventType: 'ping',
      deliveryId: newId('delivery'), allowPrivate: this.config.webhookAllowPrivate, previewBytes: 1024, timeoutMs: this.config.webhookTimeoutMs,
    });
  }

  async deliveries(orgId: string, id: string, query: ListQuery & { status?: string }) {
    await this.row(orgId, id);
    const page = pageOf(query);
    const where = and(eq(webhookDeliveries.orgId, orgId), eq(webhookDeliveries.endpointId, id), query.status ? eq(webhookDeliveries.status, query.status) : undefined);
    const [items, counted] = await Promise.all([
      this.db.select().from(webhookDeliveries).where(where).orderBy(desc(webhookDeliveries.id)).limit(page.limit).offset(page.offset),
      this.db.select({ n: sql<number>`count(*)::int` }).from(webhookDeliveries).where(where),
    ]);
    return envelope(items.map(publicDelivery), counted[0]?.n ?? 0, page);
  }

  /** A new delivery (attempt 1) of the same envelope, same envelope id. */
  async resend(orgId: string, endpointId: string, deliveryId: string) {
    await this.row(orgId, endpointId);
    const [old] = await this.db.select().from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.orgId, orgId), eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.id, deliveryId)));
    if (!old) throw notFound('Delivery');
    const [row] = await this.db.insert(webhookDeliveries).values({
      id: newId('delivery'), orgId, endpointId, eventId: old.eventId, eventType: old.eventType, attempt: 1, status: 'pending', nextAttemptAt: this.clock.now(),
    }).returning();
    return publicDelivery(row!);
  }

  /** Dispatcher subscriber: one pending delivery per matching active endpoint, in the dispatch transaction. */
  async fanOut(tx: Db, batch: EventRow[]): Promise<void> {
    const orgIds = [...new Set(batch.map((e) => e.orgId))];
    const endpoints = await tx.select({ id: webhookEndpoints.id, orgId: webhookEndpoints.orgId, projectId: webhookEndpoints.projectId, events: webhookEndpoints.events })
      .from(webhookEndpoints)
      .where(and(inArray(webhookEndpoints.orgId, orgIds), eq(webhookEndpoints.active, true)));
    if (endpoints.length === 0) return;
    const now = this.clock.now();
    const rows: (typeof webhookDeliveries.$inferInsert)[] = [];
    for (const event of batch) {
      for (const ep of endpoints) {
        if (ep.orgId !== event.orgId) continue;
        if (ep.projectId && ep.projectId !== event.projectId) continue;
        if (!ep.events.includes('*') && !ep.events.includes(event.type)) continue;
        rows.push({ id: newId('delivery', now.getTime()), orgId: event.orgId, endpointId: ep.id, eventId: event.id, eventType: event.type, attempt: 1, status: 'pending', nextAttemptAt: now });
      }
    }
    for (let i = 0; i < rows.length; i += 500) await tx.insert(webhookDeliveries).values(rows.slice(i, i + 500));
  }

  async cancelPending(db: Db, endpointId: string, reason: string): Promise<void> {
    await db.update(webhookDeliveries)
      .set({ status: 'failed', error: reason, finishedAt: this.clock.now(), lockedUntil: null })
      .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, 'pending')));
  }

}
