import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { transaction, type Database, type Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import { SecretBox, randomToken } from '../../platform/crypto.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Scope } from '../../platform/context.ts';
import { assertCanChange, assertMayMakeOrgWide, inScope, inScopeOrgWide } from '../../platform/tenant.ts';
import { assertOutboundUrl } from '../../platform/http-client.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import type { EventRow } from '../events/index.ts';
import { isPlatformEventName } from '../../shared/event-names.ts';
import type { WebhooksOrgsPort, WebhooksPlansPort, WebhooksPorts } from './ports.ts';
import { sendSigned, type SendResult } from './signer.ts';
import { webhookDeliveries, webhookEndpoints } from './tables.ts';

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export const DELIVERIES_WAKE = 'wake:webhook-deliveries';

export function publicEndpoint(row: EndpointRow) {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    projectId: row.projectId,
    active: row.active,
    description: row.description,
    consecutiveFailures: row.consecutiveFailures,
    disabledReason: row.disabledReason,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function publicDelivery(row: DeliveryRow) {
  return {
    id: row.id,
    endpointId: row.endpointId,
    eventId: row.eventId,
    eventType: row.eventType,
    attempt: row.attempt,
    status: row.status,
    statusCode: row.statusCode,
    durationMs: row.durationMs,
    responseBodyPreview: row.responseBodyPreview,
    error: row.error,
    createdAt: row.createdAt,
    finishedAt: row.finishedAt,
    nextAttemptAt: row.status === 'pending' ? row.nextAttemptAt : null,
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

/** An endpoint subscribes to platform event names or `*`; an unknown name would never fire, so it is refused. */
function checkEvents(events: string[]): void {
  const unknown = [...new Set(events.filter((name) => name !== '*' && !isPlatformEventName(name)))];
  if (unknown.length === 0) return;
  const list = unknown.map((name) => `'${name}'`).join(', ');
  throw badRequest(
    `Unknown event name${unknown.length > 1 ? 's' : ''} ${list}: use the platform event names (such as 'lead.created') or '*'`,
    unknown.map((name) => ({
      field: `body.events[${events.indexOf(name)}]`,
      message: `unknown event name '${name}'`,
    })),
  );
}

/**
 * The first attempts of a dispatched batch's deliveries, in one statement of fixed text whatever
 * their number ($1: their rows as JSON; $2: due now). Built row by row through the query builder,
 * a burst's batch of 2,000 made four statements of 4,000 parameters, an eighth of the process's CPU.
 */
const FAN_OUT = `
  insert into webhook_deliveries (id, org_id, endpoint_id, event_id, event_type, attempt, status, next_attempt_at)
  select d.id, d.org_id, d.endpoint_id, d.event_id, d.event_type, 1, 'pending', $2::timestamptz
  from jsonb_to_recordset($1::jsonb) as d(id text, org_id text, endpoint_id text, event_id text, event_type text)`;

/** Webhook endpoints: management, and the fan-out of dispatched platform events into deliveries. */
export class WebhooksService {
  private readonly db: Db;
  private readonly database: Database;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly box: SecretBox;
  private readonly orgs: WebhooksOrgsPort;
  private readonly opened = new Map<string, string>();

  /** The plan's webhookEndpoints limit (CONTRACT §12). */
  private readonly plans: WebhooksPlansPort | null;

  constructor(deps: Deps, ports: WebhooksPorts) {
    this.plans = ports.plans ?? null;
    this.db = deps.db;
    this.database = deps.database;
    this.clock = deps.clock;
    this.config = deps.config;
    this.box = new SecretBox(deps.config.appSecret);
    this.orgs = ports.orgs;
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

  /**
   * A key bound to a project makes endpoints of its project only: an explicit `projectId: null`
   * (organization-wide, so every project's events) or another project is 403.
   */
  async create(scope: Scope, input: EndpointInput) {
    checkEvents(input.events);
    await this.checkUrl(input.url);
    assertMayMakeOrgWide(scope, input.projectId, 'webhook endpoint');
    const projectId = await this.orgs.projectFor(scope, input.projectId);
    const secret = input.secret || newSecret();
    const insert = (db: Db) =>
      db
        .insert(webhookEndpoints)
        .values({
          id: newId('webhookEndpoint'),
          orgId: scope.orgId,
          projectId,
          url: input.url,
          description: input.description ?? null,
          events: [...new Set(input.events)],
          active: input.active ?? true,
          secretSealed: this.box.seal(secret),
        })
        .returning();
    const plans = this.plans;
    const [row] = plans?.enabled
      ? await transaction(this.db, async (tx) => {
          await plans.assertRoom(tx, scope.orgId, 'webhookEndpoints');
          return insert(tx);
        })
      : await insert(this.db);
    return { ...publicEndpoint(row!), secret };
  }

  /** An endpoint the scope can see: its project's, or organization-wide ones (read-only for a bound key). */
  async row(scope: Scope, id: string): Promise<EndpointRow> {
    const [row] = await this.db
      .select()
      .from(webhookEndpoints)
      .where(inScopeOrgWide(scope, webhookEndpoints, eq(webhookEndpoints.id, id)));
    if (!row) throw notFound('Webhook endpoint');
    return row;
  }

  /** An endpoint the scope may change: an organization-wide one is 403 for a bound key. */
  private async ownRow(scope: Scope, id: string): Promise<EndpointRow> {
    const row = await this.row(scope, id);
    assertCanChange(scope, row.projectId, 'This webhook endpoint');
    return row;
  }

  async list(scope: Scope, query: ListQuery) {
    const page = pageOf(query);
    const where = inScopeOrgWide(scope, webhookEndpoints);
    const [items, counted] = await Promise.all([
      this.db.select().from(webhookEndpoints).where(where).orderBy(desc(webhookEndpoints.id)).limit(page.limit).offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(webhookEndpoints)
        .where(where),
    ]);
    return envelope(items.map(publicEndpoint), counted[0]?.n ?? 0, page);
  }

  async update(scope: Scope, id: string, patch: Partial<Omit<EndpointInput, 'secret'>>) {
    if (patch.events !== undefined) checkEvents(patch.events);
    const before = await this.ownRow(scope, id);
    if (patch.url !== undefined) await this.checkUrl(patch.url);
    assertMayMakeOrgWide(scope, patch.projectId, 'webhook endpoint');
    if (patch.projectId) await this.orgs.projectFor(scope, patch.projectId);
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
    const [row] = await this.db
      .update(webhookEndpoints)
      .set(set)
      .where(inScope(scope, webhookEndpoints, eq(webhookEndpoints.id, id)))
      .returning();
    if (patch.active === false) await this.cancelPending(this.db, scope.orgId, id, 'endpoint deactivated');
    return publicEndpoint(row!);
  }

  async delete(scope: Scope, id: string): Promise<void> {
    await this.ownRow(scope, id);
    await this.db.delete(webhookEndpoints).where(inScope(scope, webhookEndpoints, eq(webhookEndpoints.id, id)));
  }

  async rotateSecret(scope: Scope, id: string) {
    await this.ownRow(scope, id);
    const secret = newSecret();
    await this.db
      .update(webhookEndpoints)
      .set({ secretSealed: this.box.seal(secret), updatedAt: this.clock.now() })
      .where(inScope(scope, webhookEndpoints, eq(webhookEndpoints.id, id)));
    return { secret };
  }

  /** Sends a `ping` envelope now and reports what the receiver said. */
  async test(scope: Scope, id: string): Promise<SendResult & { ok: boolean }> {
    const row = await this.ownRow(scope, id);
    const at = this.clock.now();
    const ping = {
      id: newId('event', at.getTime()),
      type: 'ping',
      organizationId: scope.orgId,
      ...(row.projectId ? { projectId: row.projectId } : {}),
      at: at.toISOString(),
      payload: { endpointId: row.id },
    };
    return sendSigned({
      url: row.url,
      secret: this.secretOf(row),
      body: JSON.stringify(ping),
      eventType: 'ping',
      deliveryId: newId('delivery'),
      allowPrivate: this.config.webhookAllowPrivate,
      previewBytes: 1024,
      timeoutMs: this.config.webhookTimeoutMs,
    });
  }

  /**
   * An organization-wide endpoint receives every project's events, so its deliveries are not a
   * bound key's to see: they are not found (404), like another project's.
   */
  private async deliveringRow(scope: Scope, id: string): Promise<EndpointRow> {
    const row = await this.row(scope, id);
    if (scope.projectId && row.projectId !== scope.projectId) throw notFound('Webhook endpoint');
    return row;
  }

  async deliveries(scope: Scope, id: string, query: ListQuery & { status?: string }) {
    await this.deliveringRow(scope, id);
    const page = pageOf(query);
    const where = and(
      eq(webhookDeliveries.orgId, scope.orgId),
      eq(webhookDeliveries.endpointId, id),
      query.status ? eq(webhookDeliveries.status, query.status) : undefined,
    );
    const [items, counted] = await Promise.all([
      this.db.select().from(webhookDeliveries).where(where).orderBy(desc(webhookDeliveries.id)).limit(page.limit).offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(webhookDeliveries)
        .where(where),
    ]);
    return envelope(items.map(publicDelivery), counted[0]?.n ?? 0, page);
  }

  /** A new delivery (attempt 1) of the same envelope, same envelope id. */
  async resend(scope: Scope, endpointId: string, deliveryId: string) {
    const orgId = scope.orgId;
    await this.ownRow(scope, endpointId);
    const [old] = await this.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.orgId, orgId), eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.id, deliveryId)));
    if (!old) throw notFound('Delivery');
    const [row] = await this.db
      .insert(webhookDeliveries)
      .values({
        id: newId('delivery'),
        orgId,
        endpointId,
        eventId: old.eventId,
        eventType: old.eventType,
        attempt: 1,
        status: 'pending',
        nextAttemptAt: this.clock.now(),
      })
      .returning();
    return publicDelivery(row!);
  }

  /** Dispatcher subscriber: one pending delivery per matching active endpoint, in the dispatch transaction. */
  async fanOut(tx: Db, batch: EventRow[]): Promise<void> {
    const orgIds = [...new Set(batch.map((e) => e.orgId))];
    const endpoints = await tx
      .select({ id: webhookEndpoints.id, orgId: webhookEndpoints.orgId, projectId: webhookEndpoints.projectId, events: webhookEndpoints.events })
      .from(webhookEndpoints)
      .where(and(inArray(webhookEndpoints.orgId, orgIds), eq(webhookEndpoints.active, true)));
    if (endpoints.length === 0) return;
    const now = this.clock.now();
    const rows: { id: string; org_id: string; endpoint_id: string; event_id: string; event_type: string }[] = [];
    for (const event of batch) {
      for (const ep of endpoints) {
        if (ep.orgId !== event.orgId) continue;
        if (ep.projectId && ep.projectId !== event.projectId) continue;
        if (!ep.events.includes('*') && !ep.events.includes(event.type)) continue;
        rows.push({ id: newId('delivery', now.getTime()), org_id: event.orgId, endpoint_id: ep.id, event_id: event.id, event_type: event.type });
      }
    }
    if (rows.length > 0) await this.database.prepared('webhook_fan_out', FAN_OUT, [JSON.stringify(rows), now.toISOString()], tx);
  }

  async cancelPending(db: Db, orgId: string, endpointId: string, reason: string): Promise<void> {
    await db
      .update(webhookDeliveries)
      .set({ status: 'failed', error: reason, finishedAt: this.clock.now(), lockedUntil: null })
      .where(and(eq(webhookDeliveries.orgId, orgId), eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, 'pending')));
  }
}
