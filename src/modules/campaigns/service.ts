import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { rows, type Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import type { Scope } from '../../platform/context.ts';
import { createHmac } from 'node:crypto';
import { deriveKey, safeEqual } from '../../platform/crypto.ts';
import { AppError, badRequest, conflict, notFound, unprocessable } from '../../platform/errors.ts';
import { derivedId, newId } from '../../platform/ids.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import { inScope } from '../../platform/tenant.ts';
import type { EventRow, EventsService } from '../events/service.ts';
import { leadInScope, leadsByIds, leadsMatching, type LeadRow } from '../leads/queries.ts';
import { publicLead } from '../leads/service.ts';
import type { NotificationsService } from '../notifications/service.ts';
import type { OrgsService } from '../orgs/service.ts';
import type { ConversationsService, OutboundMessage } from '../conversations/service.ts';
import { contactAddressOfLead } from '../conversations/queries.ts';

type InboxRow = NonNullable<Awaited<ReturnType<ConversationsService['inboxById']>>>;
import { ExpressionError, resolveParams, runsInWorkers } from '../workflows/engine/expressions.ts';
import { assertTimezone, localDate } from '../../platform/range.ts';
import type { PlansService } from '../plans/service.ts';
import {
  campaignRate, campaignRecipients, campaignSends, campaigns, leadConsents, suppressions,
  type CampaignAudience, type CampaignRow, type CampaignSettings, type CampaignStep, type RecipientRow,
} from './tables.ts';
import { minutesOf, nextOpening } from './window.ts';

export const CAMPAIGN_CHANNELS = ['email', 'whatsapp', 'telegram'] as const;
export const SUPPRESSION_REASONS = ['unsubscribed', 'hard_bounce', 'complaint', 'stop_keyword', 'manual'] as const;
export const RECIPIENT_STATUSES = ['PENDING', 'ACTIVE', 'COMPLETED', 'REPLIED', 'SKIPPED', 'FAILED', 'STOPPED'] as const;
const EDITABLE = ['DRAFT', 'SCHEDULED', 'PAUSED'];
const DEFAULTS: CampaignSettings = { stopOnReply: true, perMinute: 60, dailyLimit: 1000, maxErrors: 50 };
/** Recipients one runner transaction sends to at most. */
const BATCH = 100;
/**
 * Steps of one campaign queued and not yet out, at most: the runner stays this far ahead of the
 * sender instead of queueing the whole audience at once (a short queue is cheap to claim from, and
 * a pause holds back all but these).
 */
const IN_FLIGHT = 1000;
/** Campaigns one round looks at. */
const CAMPAIGNS_PER_ROUND = 20;

export interface CampaignInput {
  name: string;
  projectId?: string;
  inboxId: string;
  audience: CampaignAudience;
  steps: CampaignStep[];
  settings?: Partial<Omit<CampaignSettings, 'window'>> & { window?: CampaignSettings['window'] | null };
  scheduledAt?: string | null;
}

type Ports = {
  events: EventsService;
  notifications: Pick<NotificationsService, 'notify'>;
  orgs: Pick<OrgsService, 'projectFor' | 'defaultProjectId'>;
  conversations: ConversationsService;
  /** The plan's campaignMessagesPerMonth limit (CONTRACT §12). */
  plans?: Pick<PlansService, 'room' | 'add'>;
};

interface Stats { total: number; sent: number; delivered: number; read: number; replied: number; failed: number; skipped: number; pending: number }

const normalAddress = (channel: string, address: string) => {
  const a = address.trim();
  return channel === 'email' ? a.toLowerCase() : channel === 'whatsapp' ? a.replace(/[^\d+]/g, '') : a;
};


export function publicCampaign(row: CampaignRow, stats: Stats) {
  return {
    id: row.id, name: row.name, projectId: row.projectId, inboxId: row.inboxId, channel: row.channel, status: row.status,
    audience: row.audience, steps: row.steps, settings: row.settings, scheduledAt: row.scheduledAt, testMode: row.testMode,
    total: row.total, stats, pausedReason: row.pausedReason, startedAt: row.startedAt, finishedAt: row.finishedAt,
    createdAt: row.createdAt, updatedAt: row.updatedAt,
  };
}

export function publicRecipient(row: RecipientRow, campaign: CampaignRow, now: Date) {
  return {
    id: row.id, leadId: row.leadId, address: row.address, status: row.status, ...(row.skipReason ? { skipReason: row.skipReason } : {}),
    currentStep: row.step, nextSendAt: goesAt(row.nextSendAt, campaign, now), sentAt: row.sentAt, deliveredAt: row.deliveredAt, readAt: row.readAt,
    repliedAt: row.repliedAt, ...(row.error ? { error: row.error } : {}),
  };
}

/**
 * When a recipient's next step will go (CONTRACT §9): its due time, or — when the campaign's window
 * is closed then (or now, for one already due) — the window's next opening. The row keeps the due
 * time, which orders the claim and is what a changed or removed window applies to; only the answer
 * says when the window lets it out. Test mode sends regardless of the window.
 */
function goesAt(due: Date | null, campaign: CampaignRow, now: Date): Date | null {
  const window = campaign.settings.window;
  if (!due || !window || campaign.testMode) return due;
  const from = due > now ? due : now;
  const opening = nextOpening(window, from);
  return opening > from ? opening : due;
}

/** Whether the campaign's sending window lets it send at `now` (test mode sends regardless). */
function windowOpen(row: CampaignRow, now: Date): boolean {
  return !row.settings.window || row.testMode || nextOpening(row.settings.window, now).getTime() <= now.getTime();
}

/** A step rendered for one recipient. */
interface Rendered { subject: string | null; text: string }

/** What a rendering depends on: the recipient and its step, the step's words, the address, the lead's version. */
function renderKey(r: Pick<RecipientRow, 'id' | 'step' | 'address'>, step: CampaignStep, lead: Pick<LeadRow, 'updatedAt'>): string {
  return JSON.stringify([r.id, r.step, r.address, lead.updatedAt.getTime(), step.subject ?? null, step.text]);
}

/** A campaign's recipients due for their next step now, not waiting on a message already queued. */
function dueRecipients(campaignId: string, now: Date) {
  return sql`${campaignRecipients.campaignId} = ${campaignId} and ${campaignRecipients.status} in ('PENDING', 'ACTIVE') and ${campaignRecipients.awaiting} is null
    and ${campaignRecipients.nextSendAt} <= ${now.toISOString()}::timestamptz`;
}

/**
 * Campaigns (CONTRACT §9): audiences resolved once at start, steps sent through the conversations
 * module's inboxes by a runner that claims due recipients with SKIP LOCKED under the campaign's row
 * lock (so limits hold across instances), and records each (recipient, step) in campaign_sends in
 * the transaction that queues its message: a step never goes out twice. Suppressions and consent
 * are checked at every send; replies, receipts and failures come back through the events and the
 * conversations module's outbound watcher.
 */
export class CampaignsService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly ports: Ports;
  private readonly unsubscribeKey: Buffer;

  constructor(deps: Deps, ports: Ports) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.config = deps.config;
    this.ports = ports;
    this.unsubscribeKey = deriveKey(deps.config.appSecret, 'unsubscribe');
    ports.conversations.unsubscribeUrl = (orgId, channel, address) => this.unsubscribeUrl(orgId, channel, address);
    ports.conversations.watchOutbound((tx, rows) => this.onOutbound(tx, rows));
  }

  // ------------------------------------------------------------------ unsubscribe

  /** The token of one address: (organization, channel, address) and their HMAC; nothing else is needed to honour it. */
  unsubscribeToken(orgId: string, channel: string, address: string): string {
    const payload = Buffer.from([orgId, channel, normalAddress(channel, address)].join('\n')).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  unsubscribeUrl(orgId: string, channel: string, address: string): string {
    return `${this.config.publicUrl}/api/v1/unsubscribe/${this.unsubscribeToken(orgId, channel, address)}`;
  }

  /** What a token names, or null when it is not one of ours (fails closed). */
  readToken(token: string): { orgId: string; channel: string; address: string } | null {
    const [payload, mac] = token.split('.');
    if (!payload || !mac || token.length > 2000) return null;
    if (!safeEqual(this.mac(payload), mac)) return null;
    const [orgId, channel, address, extra] = Buffer.from(payload, 'base64url').toString('utf8').split('\n');
    return orgId && channel && address && extra === undefined ? { orgId, channel, address } : null;
  }

  /** 128 bits of the HMAC-SHA256 of a token's payload, base64url. */
  private mac(payload: string): string {
    return createHmac('sha256', this.unsubscribeKey).update(payload).digest().subarray(0, 16).toString('base64url');
  }

  /** One-click unsubscribe: the address is suppressed (reason `unsubscribed`); doing it twice changes nothing. */
  async unsubscribe(token: string): Promise<{ channel: string; address: string } | null> {
    const who = this.readToken(token);
    if (!who) return null;
    await this.db.insert(suppressions).values({ id: newId('suppression'), orgId: who.orgId, channel: who.channel, address: who.address, reason: 'unsubscribed' })
      .onConflictDoNothing();
    return { channel: who.channel, address: who.address };
  }

  // ------------------------------------------------------------------ suppressions and consents

  async listSuppressions(scope: Scope, query: ListQuery & { channel?: string; q?: string }) {
    const page = pageOf(query);
    const q = query.q?.trim().toLowerCase();
    const where = and(eq(suppressions.orgId, scope.orgId), query.channel ? eq(suppressions.channel, query.channel) : undefined,
      q ? sql`${suppressions.address} like ${`%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}` : undefined);
    const [items, [count]] = await Promise.all([
      this.db.select().from(suppressions).where(where).orderBy(desc(suppressions.createdAt), desc(suppressions.id)).limit(page.limit).offset(page.offset),
      this.db.select({ n: sql<number>`count(*)::int` }).from(suppressions).where(where),
    ]);
    return envelope(items.map(publicSuppression), count?.n ?? 0, page);
  }

  async addSuppression(scope: Scope, input: { channel: string; address: string; reason?: string }) {
    const address = normalAddress(input.channel, input.address);
    if (!address) throw badRequest('address is empty', [{ field: 'body.address', message: 'must not be empty' }]);
    const [row] = await this.db.insert(suppressions).values({ id: newId('suppression'), orgId: scope.orgId, channel: input.channel, address, reason: input.reason ?? 'manual' })
      .onConflictDoUpdate({ target: [suppressions.orgId, suppressions.channel, suppressions.address], set: { reason: input.reason ?? 'manual' } }).returning();
    return publicSuppression(row!);
  }

  async deleteSuppression(scope: Scope, id: string): Promise<void> {
    const gone = await this.db.delete(suppressions).where(and(eq(suppressions.orgId, scope.orgId), eq(suppressions.id, id))).returning({ id: suppressions.id });
    if (!gone.length) throw notFound('Suppression');
  }

  private async leadOf(scope: Scope, leadId: string): Promise<LeadRow> {
    const lead = await leadInScope(this.db, scope, leadId);
    if (!lead) throw notFound('Lead');
    return lead;
  }

  async listConsents(scope: Scope, leadId: string) {
    await this.leadOf(scope, leadId);
    const items = await this.db.select().from(leadConsents).where(and(eq(leadConsents.orgId, scope.orgId), eq(leadConsents.leadId, leadId)))
      .orderBy(desc(leadConsents.createdAt), desc(leadConsents.id)).limit(500);
    return { items: items.map(publicConsent) };
  }

  async addConsent(scope: Scope, leadId: string, input: { channel: string; status: string; source?: string; text?: string }) {
    await this.leadOf(scope, leadId);
    const [row] = await this.db.insert(leadConsents).values({
      id: newId('consent'), orgId: scope.orgId, leadId, channel: input.channel, status: input.status, source: input.source ?? null, text: input.text ?? null, createdAt: this.clock.now(),
    }).returning();
    return publicConsent(row!);
  }

  // ------------------------------------------------------------------ campaigns

  private async settingsOf(input: Partial<Omit<CampaignSettings, 'window'>> & { window?: CampaignSettings['window'] | null } | undefined, base: CampaignSettings): Promise<CampaignSettings> {
    const { window, ...rest } = input ?? {};
    const settings: CampaignSettings = { ...base, ...rest, ...(window ? { window } : {}) };
    // null removes the window; leaving it out keeps the one there is.
    if (window === null) delete settings.window;
    const w = settings.window;
    if (w) {
      const from = minutesOf(w.from);
      const to = minutesOf(w.to);
      if (from === null || to === null) throw badRequest('settings.window.from and to are times of day, HH:MM', [{ field: 'body.settings.window', message: 'from and to must be HH:MM' }]);
      if (to <= from) throw badRequest('settings.window.to must be after from (a window within one day)', [{ field: 'body.settings.window.to', message: 'must be after from' }]);
      if (!w.days.length) throw badRequest('settings.window.days names at least one day', [{ field: 'body.settings.window.days', message: 'must name at least one day (1 Monday … 7 Sunday)' }]);
      settings.window = { ...w, days: [...new Set(w.days)].sort(), timezone: assertTimezone(w.timezone, 'body.settings.window.timezone') };
    }
    return settings;
  }

  private checkSteps(steps: CampaignStep[], channel: string): void {
    steps.forEach((step, i) => {
      if (channel === 'email' && i === 0 && !step.subject?.trim()) throw badRequest('The first step of an e-mail campaign needs a subject', [{ field: 'body.steps.0.subject', message: 'is required for e-mail' }]);
    });
  }

  /**
   * A campaign works inside its project (CONTRACT §9): `leadIds` that are not leads of it — another
   * project's, another organization's, unknown — are refused by name (400) rather than dropped at
   * start, where the campaign would quietly reach fewer people than it was given; unknown and other
   * organizations' ids get the same answer, which tells nothing of whether they exist. A filter's
   * `projectId` names a project the caller may use (another organization's is not found, 404; a
   * bound key's other project, 403) and must be the campaign's own: a filter over another project
   * would otherwise be resolved over the campaign's project anyway, sending to leads it never named.
   */
  private async checkAudience(scope: Scope, projectId: string, audience: CampaignAudience): Promise<void> {
    if ('leadIds' in audience) {
      const ids = [...new Set(audience.leadIds)];
      const found = new Set((await rows<{ lead_id: string }>(this.db, leadsMatching(scope.orgId, projectId, { leadIds: ids }))).map((l) => l.lead_id));
      const strangers = ids.filter((id) => !found.has(id));
      if (!strangers.length) return;
      // The first 20 by name: enough to find them, and a bounded answer for 100,000 ids.
      const named = `${strangers.slice(0, 20).join(', ')}${strangers.length > 20 ? ` and ${strangers.length - 20} more` : ''}`;
      throw badRequest(`audience.leadIds names ${strangers.length} ${strangers.length === 1 ? 'id that is not a lead' : 'ids that are not leads'} of the campaign's project: ${named}`,
        [{ field: 'body.audience.leadIds', message: `not leads of the campaign's project (${projectId}): ${named}` }]);
    }
    if (audience.projectId === undefined) return;
    await this.ports.orgs.projectFor(scope, audience.projectId);
    if (audience.projectId !== projectId) {
      throw badRequest(`audience.projectId ${audience.projectId} is not the campaign's project (${projectId}): a campaign sends to its own project's leads`,
        [{ field: 'body.audience.projectId', message: `must be the campaign's project (${projectId}), or left out` }]);
    }
  }

  private async inboxFor(scope: Scope, inboxId: string) {
    const inbox = await this.ports.conversations.inboxRow(scope, inboxId).catch(() => null);
    if (!inbox) throw badRequest(`Inbox ${inboxId} not found`, [{ field: 'body.inboxId', message: 'must be an inbox of this organization' }]);
    if (!(CAMPAIGN_CHANNELS as readonly string[]).includes(inbox.channel)) {
      throw unprocessable('CHANNEL_NOT_SUPPORTED', `Campaigns send through email, whatsapp or telegram inboxes; this one is ${inbox.channel}`, [{ field: 'body.inboxId', message: `a ${inbox.channel} inbox cannot send campaigns` }]);
    }
    return inbox;
  }

  private scheduledAtOf(value: string | null | undefined): Date | null {
    if (value === undefined || value === null) return null;
    const at = new Date(value);
    if (Number.isNaN(at.getTime())) throw badRequest('scheduledAt is not a date-time', [{ field: 'body.scheduledAt', message: 'must be an ISO 8601 date-time' }]);
    return at;
  }

  async create(scope: Scope, input: CampaignInput) {
    const inbox = await this.inboxFor(scope, input.inboxId);
    const projectId = (await this.ports.orgs.projectFor(scope, input.projectId)) ?? inbox.projectId;
    if (projectId !== inbox.projectId) throw badRequest('The inbox belongs to another project', [{ field: 'body.inboxId', message: 'must be an inbox of the campaign\'s project' }]);
    this.checkSteps(input.steps, inbox.channel);
    await this.checkAudience(scope, projectId, input.audience);
    const settings = await this.settingsOf(input.settings, DEFAULTS);
    const now = this.clock.now();
    const [row] = await this.db.insert(campaigns).values({
      id: newId('campaign', now.getTime()), orgId: scope.orgId, projectId, name: input.name, inboxId: inbox.id, channel: inbox.channel,
      audience: input.audience, steps: input.steps, settings, status: 'DRAFT', scheduledAt: this.scheduledAtOf(input.scheduledAt), createdAt: now, updatedAt: now,
    }).returning();
    return publicCampaign(row!, emptyStats(0));
  }

  private async row(scope: Scope, id: string, tx: Db = this.db, lock = false): Promise<CampaignRow> {
    const query = tx.select().from(campaigns).where(inScope(scope, campaigns, eq(campaigns.id, id)));
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('Campaign');
    return row;
  }

  async get(scope: Scope, id: string) {
    const row = await this.row(scope, id);
    return publicCampaign(row, (await this.statsOf([row])).get(row.id)!);
  }

  async list(scope: Scope, query: ListQuery & { status?: string }) {
    const page = pageOf(query);
    const where = inScope(scope, campaigns, query.status ? eq(campaigns.status, query.status) : undefined);
    const [items, [count]] = await Promise.all([
      this.db.select().from(campaigns).where(where).orderBy(desc(campaigns.createdAt), desc(campaigns.id)).limit(page.limit).offset(page.offset),
      this.db.select({ n: sql<number>`count(*)::int` }).from(campaigns).where(where),
    ]);
    const stats = await this.statsOf(items);
    return envelope(items.map((r) => publicCampaign(r, stats.get(r.id)!)), count?.n ?? 0, page);
  }

  async update(scope: Scope, id: string, patch: Partial<CampaignInput>) {
    // Read before the transaction: the embedded store has one connection, which the transaction holds.
    const inbox = patch.inboxId ? await this.inboxFor(scope, patch.inboxId) : null;
    if (patch.audience) {
      // A campaign never changes project; one that may no longer change its audience gets its 409 below.
      const current = await this.row(scope, id);
      if (EDITABLE.includes(current.status) && !current.startedAt) await this.checkAudience(scope, current.projectId, patch.audience);
    }
    return this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const row = await this.row(scope, id, tx, true);
      if (!EDITABLE.includes(row.status)) throw conflict(`A ${row.status} campaign cannot be changed; only DRAFT, SCHEDULED and PAUSED ones can`);
      if (patch.audience && row.startedAt) throw conflict('The audience was resolved when the campaign started; it cannot change now');
      if (patch.inboxId && patch.inboxId !== row.inboxId && row.startedAt) throw conflict('A started campaign keeps its inbox');
      if (inbox && inbox.projectId !== row.projectId) throw badRequest('The inbox belongs to another project', [{ field: 'body.inboxId', message: 'must be an inbox of the campaign\'s project' }]);
      const steps = patch.steps ?? row.steps;
      if (row.startedAt && patch.steps && patch.steps.length < row.steps.length) {
        const [sent] = await tx.select({ n: sql<number>`coalesce(max(${campaignRecipients.step}), 0)::int` }).from(campaignRecipients).where(eq(campaignRecipients.campaignId, row.id));
        if ((sent?.n ?? 0) > patch.steps.length) throw conflict('Some recipients are past the steps this change would remove');
      }
      this.checkSteps(steps, inbox?.channel ?? row.channel);
      const set: Partial<CampaignRow> = { updatedAt: this.clock.now() };
      if (patch.name !== undefined) set.name = patch.name;
      if (inbox) Object.assign(set, { inboxId: inbox.id, channel: inbox.channel });
      if (patch.audience) set.audience = patch.audience;
      if (patch.steps) set.steps = patch.steps;
      if (patch.settings) set.settings = await this.settingsOf(patch.settings, row.settings);
      if (patch.scheduledAt !== undefined) set.scheduledAt = this.scheduledAtOf(patch.scheduledAt);
      const [updated] = await tx.update(campaigns).set(set).where(eq(campaigns.id, row.id)).returning();
      return publicCampaign(updated!, (await this.statsOf([updated!], tx)).get(row.id)!);
    });
  }

  async delete(scope: Scope, id: string): Promise<void> {
    const row = await this.row(scope, id);
    if (row.status === 'RUNNING') throw conflict('A running campaign cannot be deleted: pause or cancel it first');
    await this.db.delete(campaigns).where(eq(campaigns.id, row.id));
  }

  /** Start (CONTRACT §9): SCHEDULED when scheduledAt is still ahead, else RUNNING with the audience resolved now. */
  async start(scope: Scope, id: string, options: { testMode?: boolean } = {}) {
    await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const row = await this.row(scope, id, tx, true);
      if (row.status !== 'DRAFT') throw conflict(`Only a DRAFT campaign can be started; this one is ${row.status}${row.status === 'PAUSED' ? ' (resume it)' : ''}`);
      const now = this.clock.now();
      await tx.update(campaigns).set({ testMode: options.testMode === true, updatedAt: now }).where(eq(campaigns.id, row.id));
      if (row.scheduledAt && row.scheduledAt > now) {
        await tx.update(campaigns).set({ status: 'SCHEDULED' }).where(eq(campaigns.id, row.id));
        return;
      }
      await this.begin(tx, { ...row, testMode: options.testMode === true }, now);
    });
    this.ports.events.wakeLocal();
    return this.get(scope, id);
  }

  async pause(scope: Scope, id: string) {
    return this.move(scope, id, ['RUNNING', 'SCHEDULED'], 'PAUSED', { pausedReason: 'paused by a person' });
  }

  async resume(scope: Scope, id: string) {
    await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const row = await this.row(scope, id, tx, true);
      if (row.status !== 'PAUSED') throw conflict(`Only a PAUSED campaign can be resumed; this one is ${row.status}`);
      const now = this.clock.now();
      await tx.update(campaigns).set({ pausedReason: null, errorsInRow: 0, updatedAt: now }).where(eq(campaigns.id, row.id));
      if (!row.startedAt && row.scheduledAt && row.scheduledAt > now) await tx.update(campaigns).set({ status: 'SCHEDULED' }).where(eq(campaigns.id, row.id));
      else if (!row.startedAt) await this.begin(tx, row, now);
      else await tx.update(campaigns).set({ status: 'RUNNING' }).where(eq(campaigns.id, row.id));
    });
    return this.get(scope, id);
  }

  async cancel(scope: Scope, id: string) {
    await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const row = await this.row(scope, id, tx, true);
      if (!['DRAFT', 'SCHEDULED', 'RUNNING', 'PAUSED'].includes(row.status)) throw conflict(`A ${row.status} campaign cannot be canceled`);
      const now = this.clock.now();
      await tx.update(campaignRecipients).set({ status: 'STOPPED', nextSendAt: null })
        .where(and(eq(campaignRecipients.campaignId, row.id), inArray(campaignRecipients.status, ['PENDING', 'ACTIVE'])));
      const [canceled] = await tx.update(campaigns).set({ status: 'CANCELED', finishedAt: now, updatedAt: now }).where(eq(campaigns.id, row.id)).returning();
      if (row.startedAt) await this.finishedEvent(tx, canceled!);
    });
    return this.get(scope, id);
  }

  private async move(scope: Scope, id: string, from: string[], to: string, set: Partial<CampaignRow> = {}) {
    await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const row = await this.row(scope, id, tx, true);
      if (!from.includes(row.status)) throw conflict(`A ${row.status} campaign cannot be moved to ${to}`);
      await tx.update(campaigns).set({ ...set, status: to, updatedAt: this.clock.now() }).where(eq(campaigns.id, row.id));
    });
    return this.get(scope, id);
  }

  /**
   * The first move into RUNNING: the audience resolved into recipients in one statement (each
   * skipped one with its reason), `total` fixed, `campaign.started` written.
   */
  private async begin(tx: Db, row: CampaignRow, now: Date): Promise<void> {
    const total = await this.resolveAudience(tx, row, now);
    const [started] = await tx.update(campaigns).set({ status: 'RUNNING', total, startedAt: now, updatedAt: now }).where(eq(campaigns.id, row.id)).returning();
    await this.ports.events.record(tx, {
      orgId: row.orgId, projectId: row.projectId, type: 'campaign.started',
      payload: { campaign: { id: row.id, name: row.name, channel: row.channel, total, testMode: started!.testMode } },
    });
  }

  /** The audience's leads as recipients; returns how many (the campaign's `total`). */
  private async resolveAudience(tx: Db, row: CampaignRow, now: Date): Promise<number> {
    const a = row.audience;
    const matching = leadsMatching(row.orgId, row.projectId, 'leadIds' in a ? { leadIds: a.leadIds } : {
      ...(a.status ? { status: a.status.split(',').map((s) => s.trim().toUpperCase()).filter(Boolean) } : {}),
      ...(a.tags ? { tags: a.tags } : {}), ...(a.minScore !== undefined ? { minScore: a.minScore } : {}),
    });
    const address = row.channel === 'email' ? sql`l.email` : row.channel === 'whatsapp' ? sql`regexp_replace(l.phone, '[^0-9+]', '', 'g')` : contactAddressOfLead(row.inboxId, sql`l.lead_id`);
    const firstAt = new Date(now.getTime() + (row.steps[0]?.delaySeconds ?? 0) * 1000).toISOString();
    const result = await rows<{ n: number }>(tx, sql`
      with audience as (
        select l.lead_id, ${address} as address from (${matching}) l),
      judged as (
        select a.lead_id, a.address,
          case
            when a.address is null or a.address = '' then 'NO_ADDRESS'
            when row_number() over (partition by a.address order by a.lead_id) > 1 then 'DUPLICATE_ADDRESS'
            when exists (select 1 from ${suppressions} s where s.org_id = ${row.orgId} and s.channel = ${row.channel} and s.address = a.address)
              or (select k.status from ${leadConsents} k where k.lead_id = a.lead_id and k.channel = ${row.channel} order by k.created_at desc, k.id desc limit 1) = 'opted_out' then 'SUPPRESSED'
            when ${row.channel} = 'whatsapp' and coalesce((select k.status from ${leadConsents} k where k.lead_id = a.lead_id and k.channel = 'whatsapp' order by k.created_at desc, k.id desc limit 1), '') <> 'opted_in' then 'NO_OPT_IN'
            when exists (select 1 from ${campaignRecipients} r join ${campaigns} c on c.id = r.campaign_id
              where r.lead_id = a.lead_id and r.status in ('PENDING', 'ACTIVE') and c.id <> ${row.id} and c.status in ('RUNNING', 'PAUSED')) then 'IN_OTHER_CAMPAIGN'
          end as skip
        from audience a),
      added as (
        insert into ${campaignRecipients} (id, campaign_id, org_id, lead_id, address, status, skip_reason, step, next_send_at)
        select 'rcp_' || substr(md5(${row.id} || j.lead_id), 1, 26), ${row.id}, ${row.orgId}, j.lead_id, j.address,
          case when j.skip is null then 'PENDING' else 'SKIPPED' end, j.skip, 0, case when j.skip is null then ${firstAt}::timestamptz end
        from judged j
        on conflict (campaign_id, lead_id) do nothing
        returning 1)
      select count(*)::int as n from added`);
    return result[0]?.n ?? 0;
  }

  async test(scope: Scope, id: string, input: { to: string }) {
    const row = await this.row(scope, id);
    const inbox = await this.inboxFor(scope, row.inboxId);
    const step = row.steps[0]!;
    // The first lead of the audience, if it names some, so the personalisation shows; else an empty lead.
    const leadId = 'leadIds' in row.audience ? row.audience.leadIds[0] : undefined;
    const lead = leadId ? await leadInScope(this.db, scope, leadId) : undefined;
    const rendered = await this.render(row, step, lead ?? null, input.to, true);
    const messageId = newId('message');
    const now = this.clock.now();
    await this.db.transaction((trx) => this.ports.conversations.queueOutreach(trx as unknown as Db, inbox, {
      address: normalAddress(row.channel, input.to), name: null, leadId: null, subject: rendered.subject ? `[Test] ${rendered.subject}` : null, text: rendered.text,
      template: null, authorId: row.id, messageId,
    }, now));
    return { ok: true, messageId };
  }

  async recipients(scope: Scope, id: string, query: ListQuery & { status?: string }) {
    const row = await this.row(scope, id);
    const page = pageOf(query);
    const where = and(eq(campaignRecipients.campaignId, row.id), query.status ? eq(campaignRecipients.status, query.status) : undefined);
    const [items, [count]] = await Promise.all([
      this.db.select().from(campaignRecipients).where(where).orderBy(campaignRecipients.id).limit(page.limit).offset(page.offset),
      this.db.select({ n: sql<number>`count(*)::int` }).from(campaignRecipients).where(where),
    ]);
    const now = this.clock.now();
    return envelope(items.map((r) => publicRecipient(r, row, now)), count?.n ?? 0, page);
  }

  /** Recipient counters of campaigns (CONTRACT §9): each recipient at most once per counter. */
  private async statsOf(list: CampaignRow[], db: Db = this.db): Promise<Map<string, Stats>> {
    const out = new Map(list.map((r) => [r.id, emptyStats(r.total)]));
    if (!list.length) return out;
    const counted = await db.select({
      id: campaignRecipients.campaignId,
      sent: sql<number>`count(*) filter (where ${campaignRecipients.sentAt} is not null)::int`,
      delivered: sql<number>`count(*) filter (where ${campaignRecipients.deliveredAt} is not null)::int`,
      read: sql<number>`count(*) filter (where ${campaignRecipients.readAt} is not null)::int`,
      replied: sql<number>`count(*) filter (where ${campaignRecipients.repliedAt} is not null)::int`,
      failed: sql<number>`count(*) filter (where ${campaignRecipients.status} = 'FAILED')::int`,
      skipped: sql<number>`count(*) filter (where ${campaignRecipients.status} = 'SKIPPED')::int`,
      pending: sql<number>`count(*) filter (where ${campaignRecipients.status} in ('PENDING', 'ACTIVE'))::int`,
    }).from(campaignRecipients).where(inArray(campaignRecipients.campaignId, list.map((r) => r.id))).groupBy(campaignRecipients.campaignId);
    for (const c of counted) out.set(c.id, { ...out.get(c.id)!, sent: c.sent, delivered: c.delivered, read: c.read, replied: c.replied, failed: c.failed, skipped: c.skipped, pending: c.pending });
    return out;
  }

  // ------------------------------------------------------------------ the runner

  /**
   * One round: scheduled campaigns that came due start; then each running campaign with due
   * recipients sends one batch (in its own transaction). True when there may be more to do now.
   */
  async round(): Promise<boolean> {
    const now = this.clock.now();
    const due = await this.db.select({ id: campaigns.id }).from(campaigns)
      .where(sql`${campaigns.status} = 'SCHEDULED' and ${campaigns.scheduledAt} <= ${now.toISOString()}::timestamptz`).limit(CAMPAIGNS_PER_ROUND);
    for (const { id } of due) {
      await this.db.transaction(async (trx) => {
        const tx = trx as unknown as Db;
        const [row] = await tx.select().from(campaigns).where(and(eq(campaigns.id, id), eq(campaigns.status, 'SCHEDULED'))).for('update', { skipLocked: true });
        if (row) await this.begin(tx, row, now);
      });
    }
    const running = await this.db.select({ id: campaigns.id, inboxId: campaigns.inboxId }).from(campaigns).where(eq(campaigns.status, 'RUNNING'))
      .orderBy(campaigns.updatedAt).limit(CAMPAIGNS_PER_ROUND);
    let more = false;
    for (const { id, inboxId } of running) {
      if (await this.sendBatch(id, inboxId, now)) more = true;
    }
    return more;
  }

  /** How many more the campaign may send now under its per-minute and daily limits and IN_FLIGHT (test mode: no limits). */
  private async allowance(tx: Db, row: CampaignRow, now: Date): Promise<number> {
    if (row.testMode) return BATCH;
    const [queued] = await tx.select({ n: sql<number>`count(*)::int` }).from(campaignRecipients)
      .where(and(eq(campaignRecipients.campaignId, row.id), sql`${campaignRecipients.awaiting} is not null`));
    const room = IN_FLIGHT - (queued?.n ?? 0);
    if (room <= 0) return 0;
    const second = Math.floor(now.getTime() / 1000);
    // A second's count leaves the window only when the whole second is more than 60 s ago: the
    // count errs on the side of the limit, never past it.
    const [minute] = await tx.select({ sent: sql<number>`coalesce(sum(${campaignRate.sent}), 0)::int` }).from(campaignRate)
      .where(and(eq(campaignRate.campaignId, row.id), sql`${campaignRate.second} >= ${second - 60}`));
    const today = localDate(now.getTime(), row.settings.window?.timezone ?? 'UTC');
    const daySent = row.day === today ? row.daySent : 0;
    return Math.max(0, Math.min(BATCH, room, row.settings.perMinute - (minute?.sent ?? 0), row.settings.dailyLimit - daySent));
  }

  /** Counts `sent` sends against the limits (in the batch's transaction, under the campaign's row lock). */
  private async countSends(tx: Db, row: CampaignRow, sent: number, now: Date): Promise<void> {
    if (sent === 0 || row.testMode) return;
    await this.ports.plans?.add(tx, row.orgId, 'campaignMessagesPerMonth', sent);
    const second = Math.floor(now.getTime() / 1000);
    await tx.insert(campaignRate).values({ campaignId: row.id, second, sent })
      .onConflictDoUpdate({ target: [campaignRate.campaignId, campaignRate.second], set: { sent: sql`${campaignRate.sent} + excluded.sent` } });
    await tx.delete(campaignRate).where(and(eq(campaignRate.campaignId, row.id), sql`${campaignRate.second} < ${second - 60}`));
    const today = localDate(now.getTime(), row.settings.window?.timezone ?? 'UTC');
    await tx.update(campaigns).set({ day: today, daySent: row.day === today ? sql`${campaigns.daySent} + ${sent}` : sent }).where(eq(campaigns.id, row.id));
  }

  /**
   * The due recipients' messages rendered before a batch's transaction, when a step's expressions go
   * to the expression workers: one may run up to its time limit there (a probe's endless recursion, 1 s
   * a recipient), and a transaction held meanwhile would hold the campaign's locks and, on the
   * embedded store, its one connection — every other organization's requests with it. The batch uses
   * a rendering only for the same recipient, step, step text, address and lead version; a recipient
   * claimed otherwise (a lead changed in between) is rendered in the transaction as before.
   */
  private async renderAhead(id: string, now: Date): Promise<Map<string, Rendered | ExpressionError>> {
    const out = new Map<string, Rendered | ExpressionError>();
    const [row] = await this.db.select().from(campaigns).where(and(eq(campaigns.id, id), eq(campaigns.status, 'RUNNING')));
    if (!row || !windowOpen(row, now) || !row.steps.some((step) => runsInWorkers([step.subject, step.text]))) return out;
    // Only as many as the batch may send: a campaign held by its limits (perMinute, the queue ahead)
    // would otherwise render a hundred recipients in the workers at every round, to send none.
    const allowed = await this.allowance(this.db, row, now);
    if (allowed === 0) return out;
    const due = await this.db.select().from(campaignRecipients).where(dueRecipients(row.id, now)).orderBy(campaignRecipients.nextSendAt, campaignRecipients.id).limit(allowed);
    const byId = new Map((await leadsByIds(this.db, due.map((r) => r.leadId))).map((l) => [l.id, l]));
    await Promise.all(due.map(async (r) => {
      const step = row.steps[r.step];
      const lead = byId.get(r.leadId);
      if (!step || !lead || !r.address) return;
      try {
        out.set(renderKey(r, step, lead), await this.render(row, step, lead, r.address, false));
      } catch (error) {
        if (!(error instanceof ExpressionError)) throw error;
        out.set(renderKey(r, step, lead), error);
      }
    }));
    return out;
  }

  /** One batch of one campaign, under its row lock (another instance skips it meanwhile). True when it sent anything. */
  private async sendBatch(id: string, inboxId: string, now: Date): Promise<boolean> {
    // Read before the transaction: the embedded store has one connection, which the transaction holds.
    const inbox = await this.ports.conversations.inboxById(inboxId);
    const ahead = await this.renderAhead(id, now);
    const finished = await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const [row] = await tx.select().from(campaigns).where(and(eq(campaigns.id, id), eq(campaigns.status, 'RUNNING'))).for('update', { skipLocked: true });
      if (!row) return { sent: 0 };
      if (!windowOpen(row, now)) return { sent: 0 };
      let allowed = await this.allowance(tx, row, now);
      // The plan's monthly messages (held under the organization's lock until this batch commits).
      const planRoom = allowed > 0 && !row.testMode ? await this.ports.plans?.room(tx, row.orgId, 'campaignMessagesPerMonth') : null;
      if (planRoom === 0) {
        await this.pauseForPlan(tx, row, now);
        return { sent: 0 };
      }
      if (planRoom != null) allowed = Math.min(allowed, planRoom);
      let sent = 0;
      if (allowed > 0) {
        const claimed = await tx.select().from(campaignRecipients).where(dueRecipients(row.id, now))
          .orderBy(campaignRecipients.nextSendAt, campaignRecipients.id).limit(allowed).for('update', { skipLocked: true });
        if (claimed.length) sent = await this.sendTo(tx, row, inbox, claimed, now, ahead);
        await this.countSends(tx, row, sent, now);
      }
      await this.finishIfDone(tx, row.id, now);
      return { sent };
    });
    return finished.sent > 0;
  }

  /**
   * One batch of claimed recipients: those who may not be reached now are skipped or stopped, each
   * step is rendered for its lead, and every rendered one is recorded in the ledger and queued in
   * the conversations module — in bulk on a channel without send rules (e-mail: a few statements
   * for the whole batch), else one by one, each in a savepoint so that the channel's refusal (its
   * 422) fails that recipient only.
   */
  private async sendTo(tx: Db, row: CampaignRow, inbox: InboxRow | undefined, claimed: RecipientRow[], now: Date, ahead: Map<string, Rendered | ExpressionError>): Promise<number> {
    const byId = new Map((await leadsByIds(tx, claimed.map((r) => r.leadId))).map((l) => [l.id, l]));
    const blocked = await this.blockedAddresses(tx, row, claimed);
    const failures: { id: string; error: string }[] = [];
    const ready: { r: RecipientRow; step: CampaignStep; lead: LeadRow; subject: string | null; text: string; messageId: string | null }[] = [];
    for (const r of claimed) {
      const step = row.steps[r.step];
      const lead = byId.get(r.leadId);
      if (!step || !lead || !inbox) {
        await tx.update(campaignRecipients).set({ status: 'STOPPED', nextSendAt: null, error: !inbox ? 'the campaign\'s inbox was deleted' : !lead ? 'the lead was deleted' : null }).where(eq(campaignRecipients.id, r.id));
        continue;
      }
      const block = blocked.get(r.id);
      if (block) {
        // Before the first step a recipient is skipped; later, their sequence stops.
        await tx.update(campaignRecipients).set(r.step === 0 ? { status: 'SKIPPED', skipReason: block, nextSendAt: null } : { status: 'STOPPED', error: `no further steps: ${block.toLowerCase()}`, nextSendAt: null })
          .where(eq(campaignRecipients.id, r.id));
        continue;
      }
      try {
        const early = ahead.get(renderKey(r, step, lead));
        if (early instanceof ExpressionError) throw early;
        const rendered = early ?? await this.render(row, step, lead, r.address!, false);
        ready.push({ r, step, lead, ...rendered, messageId: row.testMode ? null : derivedId('message', r.id, [String(r.step)]) });
      } catch (error) {
        if (!(error instanceof ExpressionError)) throw error;
        failures.push({ id: r.id, error: error.message });
      }
    }
    const ledger = (x: (typeof ready)[number]) => ({ recipientId: x.r.id, step: x.r.step, campaignId: row.id, messageId: x.messageId, subject: x.subject, text: x.text, at: now });
    let sent = 0;
    if (ready.length && (row.testMode || !this.ports.conversations.hasSendRules(row.channel))) {
      await tx.insert(campaignSends).values(ready.map(ledger));
      if (row.testMode) {
        for (const x of ready) await this.advance(tx, row, x.r, x.r.step + 1, now);
      } else {
        await this.ports.conversations.queueOutreachMany(tx, inbox!, ready.map((x) => ({
          address: x.r.address!, name: x.lead.name, leadId: x.lead.id, subject: x.subject, text: x.text, authorId: row.id, messageId: x.messageId!,
        })), now);
        await this.awaitOutcomes(tx, ready.map((x) => ({ id: x.r.id, messageId: x.messageId!, step: x.r.step + 1 })));
      }
      sent = ready.length;
    } else {
      for (const x of ready) {
        try {
          await tx.transaction(async (sp) => {
            const inner = sp as unknown as Db;
            await inner.insert(campaignSends).values(ledger(x));
            await this.ports.conversations.queueOutreach(inner, inbox!, {
              address: x.r.address!, name: x.lead.name, leadId: x.lead.id, subject: x.subject, text: x.text, template: x.step.template ?? null, authorId: row.id, messageId: x.messageId!,
            }, now);
          });
          await this.awaitOutcomes(tx, [{ id: x.r.id, messageId: x.messageId!, step: x.r.step + 1 }]);
          sent++;
        } catch (error) {
          // A refusal with a name (the channel's 422); anything else fails the batch, retried whole.
          if (!(error instanceof AppError)) throw error;
          failures.push({ id: x.r.id, error: error.message });
        }
      }
    }
    for (const f of failures) {
      await tx.update(campaignRecipients).set({ status: 'FAILED', failedAt: now, error: f.error.slice(0, 1000), nextSendAt: null }).where(eq(campaignRecipients.id, f.id));
    }
    await this.noteErrors(tx, row, row.errorsInRow + failures.length, now);
    return sent;
  }

  /** Recipients whose step was queued: ACTIVE, waiting for the message's outcome (onOutbound) before the next step. */
  private async awaitOutcomes(tx: Db, list: { id: string; messageId: string; step: number }[]): Promise<void> {
    await tx.execute(sql`update ${campaignRecipients} r set status = 'ACTIVE', awaiting = v.message_id, step = v.step, next_send_at = null
      from unnest(${sql.param(list.map((x) => x.id))}::text[], ${sql.param(list.map((x) => x.messageId))}::text[], ${sql.param(list.map((x) => x.step))}::int[]) as v(id, message_id, step)
      where r.id = v.id`);
  }

  /**
   * The claimed recipients who must not be sent to now, and why: a suppression of their address on
   * the channel or an opt-out (SUPPRESSED), or — WhatsApp — no opt-in (NO_OPT_IN). Checked at every send.
   */
  private async blockedAddresses(tx: Db, row: CampaignRow, claimed: RecipientRow[]): Promise<Map<string, string>> {
    const found = await rows<{ id: string; block: string | null }>(tx, sql`
      select r.id, case
        when exists (select 1 from ${suppressions} s where s.org_id = ${row.orgId} and s.channel = ${row.channel} and s.address = r.address)
          or k.status = 'opted_out' then 'SUPPRESSED'
        when ${row.channel} = 'whatsapp' and coalesce(k.status, '') <> 'opted_in' then 'NO_OPT_IN'
      end as block
      from ${campaignRecipients} r
      left join lateral (select status from ${leadConsents} c where c.lead_id = r.lead_id and c.channel = ${row.channel} order by c.created_at desc, c.id desc limit 1) k on true
      where r.id = any(${sql.param(claimed.map((r) => r.id))}::text[])`);
    return new Map(found.filter((f) => f.block).map((f) => [f.id, f.block!]));
  }

  /** The step's subject and text for a lead, personalised (`{{ lead.name }}`); e-mail gets its unsubscribe link. */
  private async render(row: CampaignRow, step: CampaignStep, lead: LeadRow | null, address: string, test: boolean): Promise<Rendered> {
    const item = { lead: lead ? publicLead(lead) : {} };
    const scope = { orgId: row.orgId, input: item, run: { id: row.id, workflowId: '', testMode: test || row.testMode, startedAt: row.startedAt?.toISOString() ?? null }, node: () => undefined };
    const out = await resolveParams({ subject: step.subject ?? null, text: step.text }, item as never, scope) as { subject?: string | null; text?: string };
    let text = String(out.text ?? '');
    if (row.channel === 'email') text += `\n\n--\nTo stop receiving these messages: ${this.unsubscribeUrl(row.orgId, row.channel, address)}`;
    return { subject: out.subject ? String(out.subject) : null, text };
  }

  /** A recipient after a step went out: the next step's time, or done (COMPLETED, or REPLIED if they answered). */
  private async advance(tx: Db, row: CampaignRow, r: Pick<RecipientRow, 'id' | 'repliedAt' | 'sentAt'>, nextStep: number, now: Date): Promise<void> {
    const next = row.steps[nextStep];
    const base = { awaiting: null, step: nextStep, sentAt: r.sentAt ?? now };
    await tx.update(campaignRecipients).set(next
      ? { ...base, status: 'ACTIVE', nextSendAt: new Date(now.getTime() + next.delaySeconds * 1000) }
      : { ...base, status: r.repliedAt ? 'REPLIED' : 'COMPLETED', nextSendAt: null })
      .where(eq(campaignRecipients.id, r.id));
  }

  /** The plan's monthly messages are spent: the campaign pauses with the reason, and the organization is told. */
  private async pauseForPlan(tx: Db, row: CampaignRow, now: Date): Promise<void> {
    const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const reason = `the plan's campaignMessagesPerMonth limit is reached; resume it after ${next.toISOString().slice(0, 10)} (UTC) or once the plan allows more`;
    await tx.update(campaigns).set({ status: 'PAUSED', pausedReason: reason, updatedAt: now }).where(eq(campaigns.id, row.id));
    await this.ports.notifications.notify({
      orgId: row.orgId, projectId: row.projectId, userId: null, kind: 'campaign.paused',
      title: `Campaign "${row.name}" was paused`, body: `Paused: ${reason}.`, link: `/campaigns/${row.id}`,
    }, tx);
  }

  /** Failures in a row: maxErrors of them pause the campaign and tell the organization why. */
  private async noteErrors(tx: Db, row: CampaignRow, errorsInRow: number, now: Date): Promise<void> {
    if (errorsInRow === row.errorsInRow) return;
    const pause = errorsInRow >= row.settings.maxErrors && row.status === 'RUNNING';
    const reason = `${errorsInRow} sends failed in a row (maxErrors ${row.settings.maxErrors})`;
    await tx.update(campaigns).set({ errorsInRow, ...(pause ? { status: 'PAUSED', pausedReason: reason } : {}), updatedAt: now }).where(eq(campaigns.id, row.id));
    if (pause) {
      await this.ports.notifications.notify({
        orgId: row.orgId, projectId: row.projectId, userId: null, kind: 'campaign.paused',
        title: `Campaign "${row.name}" was paused`, body: `${reason}. Fix the cause (the recipients' errors say what it is) and resume it.`, link: `/campaigns/${row.id}`,
      }, tx);
    }
  }

  /** FINISHED once no recipient is waiting for anything; `campaign.finished` with the stats. */
  private async finishIfDone(tx: Db, id: string, now: Date): Promise<void> {
    const [open] = await tx.select({ id: campaignRecipients.id }).from(campaignRecipients)
      .where(and(eq(campaignRecipients.campaignId, id), inArray(campaignRecipients.status, ['PENDING', 'ACTIVE']))).limit(1);
    if (open) return;
    const [done] = await tx.update(campaigns).set({ status: 'FINISHED', finishedAt: now, updatedAt: now })
      .where(and(eq(campaigns.id, id), eq(campaigns.status, 'RUNNING'))).returning();
    if (done) await this.finishedEvent(tx, done);
  }

  private async finishedEvent(tx: Db, row: CampaignRow): Promise<void> {
    const stats = (await this.statsOf([row], tx)).get(row.id)!;
    const { pending: _pending, total: _total, ...counters } = stats;
    await this.ports.events.record(tx, {
      orgId: row.orgId, projectId: row.projectId, type: 'campaign.finished',
      payload: { campaign: { id: row.id, name: row.name, channel: row.channel, total: row.total }, stats: counters, status: row.status },
    });
  }

  // ------------------------------------------------------------------ what comes back

  /**
   * Outbound campaign messages changed (in their transaction; a sender's batch of successes at once):
   * the recipients' counters, and for the step each was waiting on, its next step or its end.
   */
  private async onOutbound(tx: Db, changed: OutboundMessage[]): Promise<void> {
    // Three lookups by key rather than one join: on a fast-growing ledger the planner's stale
    // estimates turned the join into a scan of every recipient (84 ms at 100,000).
    const sends = await tx.select({ recipientId: campaignSends.recipientId, campaignId: campaignSends.campaignId, messageId: campaignSends.messageId }).from(campaignSends)
      .where(sql`${campaignSends.messageId} = any(${sql.param(changed.map((m) => m.id))}::text[])`);
    if (!sends.length) return;
    const recipientsById = new Map((await tx.select().from(campaignRecipients)
      .where(sql`${campaignRecipients.id} = any(${sql.param(sends.map((s) => s.recipientId))}::text[])`).for('update')).map((r) => [r.id, r]));
    const campaignsById = new Map((await tx.select().from(campaigns)
      .where(sql`${campaigns.id} = any(${sql.param([...new Set(sends.map((s) => s.campaignId))])}::text[])`)).map((c) => [c.id, c]));
    const found = sends.flatMap((s) => {
      const r = recipientsById.get(s.recipientId);
      const c = campaignsById.get(s.campaignId);
      return r && c ? [{ r, c, messageId: s.messageId }] : [];
    });
    const now = this.clock.now();
    const byMessage = new Map(changed.map((m) => [m.id, m]));
    const moves: { id: string; status: string; nextSendAt: Date | null }[] = [];
    const touched = new Map<string, CampaignRow>();
    const failedIn = new Map<string, number>();
    for (const { r, c, messageId } of found) {
      const message = byMessage.get(messageId!)!;
      touched.set(c.id, c);
      if (message.status === 'delivered' || message.status === 'read') {
        await tx.update(campaignRecipients).set({ deliveredAt: r.deliveredAt ?? now, ...(message.status === 'read' ? { readAt: r.readAt ?? now } : {}) }).where(eq(campaignRecipients.id, r.id));
      } else if (r.awaiting !== message.id) {
        // A late outcome (a receipt's failure after it was sent): counted, never moving the recipient back.
        if (message.status === 'failed' && !r.failedAt) await tx.update(campaignRecipients).set({ failedAt: now, error: message.error }).where(eq(campaignRecipients.id, r.id));
      } else if (message.status === 'sent') {
        const next = c.steps[r.step];
        moves.push(r.status !== 'ACTIVE' ? { id: r.id, status: r.status, nextSendAt: null }
          : next ? { id: r.id, status: 'ACTIVE', nextSendAt: new Date(now.getTime() + next.delaySeconds * 1000) }
            : { id: r.id, status: r.repliedAt ? 'REPLIED' : 'COMPLETED', nextSendAt: null });
      } else if (message.status === 'failed') {
        await tx.update(campaignRecipients).set({ awaiting: null, ...(r.status === 'ACTIVE' ? { status: 'FAILED' } : {}), failedAt: now, error: message.error, nextSendAt: null })
          .where(eq(campaignRecipients.id, r.id));
        failedIn.set(c.id, (failedIn.get(c.id) ?? 0) + 1);
      }
    }
    if (moves.length) {
      // The sent ones in one statement: sent_at kept from the first step, the next step's time or the end.
      await tx.execute(sql`update ${campaignRecipients} r set awaiting = null, sent_at = coalesce(r.sent_at, ${now.toISOString()}::timestamptz), status = v.status, next_send_at = v.next_send_at
        from unnest(${sql.param(moves.map((m) => m.id))}::text[], ${sql.param(moves.map((m) => m.status))}::text[], ${sql.param(moves.map((m) => m.nextSendAt?.toISOString() ?? null))}::timestamptz[]) as v(id, status, next_send_at)
        where r.id = v.id`);
    }
    for (const c of touched.values()) {
      const failed = failedIn.get(c.id) ?? 0;
      if (failed) await this.noteErrors(tx, c, c.errorsInRow + failed, now);
      else if (c.errorsInRow > 0 && moves.length) await tx.update(campaigns).set({ errorsInRow: 0 }).where(eq(campaigns.id, c.id));
      if (c.status === 'RUNNING') await this.finishIfDone(tx, c.id, now);
    }
  }

  /**
   * Platform events (the dispatcher's batch, in its transaction): a `lead.replied` marks the lead's
   * recipients in campaigns on that channel — REPLIED at once with stopOnReply (no further step),
   * else their sequence goes on and ends REPLIED. Auto-replies never produce `lead.replied`.
   */
  async onEvents(tx: Db, batch: EventRow[]): Promise<void> {
    const replies = batch.filter((e) => e.type === 'lead.replied');
    for (const e of replies) {
      const p = e.payload as { leadId?: string; channel?: string };
      if (!p.leadId) continue;
      const at = e.at instanceof Date ? e.at : new Date(e.at);
      await tx.execute(sql`
        update ${campaignRecipients} r set replied_at = coalesce(r.replied_at, ${at.toISOString()}::timestamptz),
          status = case when r.status in ('PENDING', 'ACTIVE') and (c.settings->>'stopOnReply')::boolean is not false then 'REPLIED'
                        when r.status = 'COMPLETED' then 'REPLIED' else r.status end,
          next_send_at = case when (c.settings->>'stopOnReply')::boolean is not false then null else r.next_send_at end
        from ${campaigns} c
        where c.id = r.campaign_id and r.org_id = ${e.orgId} and r.lead_id = ${p.leadId} and c.channel = ${p.channel ?? ''}
          and r.status in ('PENDING', 'ACTIVE', 'COMPLETED') and r.replied_at is null and c.started_at <= ${at.toISOString()}::timestamptz`);
      const ended = await rows<{ id: string }>(tx, sql`select distinct r.campaign_id as id from ${campaignRecipients} r join ${campaigns} c on c.id = r.campaign_id
        where r.lead_id = ${p.leadId} and c.status = 'RUNNING'`);
      for (const { id } of ended) await this.finishIfDone(tx, id, this.clock.now());
    }
  }

  /** A campaign's figures for a report (CAMPAIGN_SUMMARY): the record, the skip reasons, who replied and who was sent everything without replying. */
  async summary(scope: Scope, id: string) {
    const campaign = await this.get(scope, id);
    const leadsWhere = (condition: ReturnType<typeof sql>) => this.db.select({ id: campaignRecipients.leadId }).from(campaignRecipients)
      .where(and(eq(campaignRecipients.campaignId, id), condition)).orderBy(campaignRecipients.id).limit(1000);
    const [skips, replied, unanswered] = await Promise.all([
      this.db.select({ reason: campaignRecipients.skipReason, n: sql<number>`count(*)::int` }).from(campaignRecipients)
        .where(and(eq(campaignRecipients.campaignId, id), eq(campaignRecipients.status, 'SKIPPED'))).groupBy(campaignRecipients.skipReason),
      leadsWhere(sql`${campaignRecipients.repliedAt} is not null`),
      leadsWhere(sql`${campaignRecipients.status} = 'COMPLETED' and ${campaignRecipients.repliedAt} is null`),
    ]);
    return {
      campaign, skipped: Object.fromEntries(skips.map((s) => [s.reason ?? 'unknown', s.n])),
      repliedLeadIds: replied.map((r) => r.id), unansweredLeadIds: unanswered.map((r) => r.id),
    };
  }
}

function emptyStats(total: number): Stats {
  return { total, sent: 0, delivered: 0, read: 0, replied: 0, failed: 0, skipped: 0, pending: 0 };
}

function publicSuppression(row: typeof suppressions.$inferSelect) {
  return { id: row.id, channel: row.channel, address: row.address, reason: row.reason, createdAt: row.createdAt };
}

function publicConsent(row: typeof leadConsents.$inferSelect) {
  return { id: row.id, leadId: row.leadId, channel: row.channel, status: row.status, source: row.source, text: row.text, createdAt: row.createdAt };
}

