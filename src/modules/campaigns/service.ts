import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { rows, transaction, type Db } from '../../platform/db.ts';
import type { Scope } from '../../platform/context.ts';
import { badRequest, conflict, notFound, unprocessable } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import { inScope } from '../../platform/tenant.ts';
import type { EventRow } from '../events/index.ts';
import { leadInScope, leadsMatching } from '../leads/index.ts';
import { assertTimezone } from '../../platform/range.ts';
import type { CampaignsContext } from './context.ts';
import { emptyStats, Outcomes, statsOf, type Stats } from './outcomes.ts';
import type { CampaignPorts, OutboundStatus } from './ports.ts';
import { CampaignRunner } from './runner.ts';
import { Suppressions } from './suppressions.ts';
import {
  campaignRecipients,
  campaigns,
  type CampaignAudience,
  type CampaignRow,
  type CampaignSettings,
  type CampaignStep,
  type RecipientRow,
} from './tables.ts';
import { normalAddress } from './unsubscribe.ts';
import { minutesOf, nextOpening } from './window.ts';

export const CAMPAIGN_CHANNELS = ['email', 'whatsapp', 'telegram'] as const;
export const RECIPIENT_STATUSES = ['PENDING', 'ACTIVE', 'COMPLETED', 'REPLIED', 'SKIPPED', 'FAILED', 'STOPPED'] as const;
const EDITABLE = ['DRAFT', 'SCHEDULED', 'PAUSED'];
const DEFAULTS: CampaignSettings = { stopOnReply: true, perMinute: 60, dailyLimit: 1000, maxErrors: 50 };

export interface CampaignInput {
  name: string;
  projectId?: string;
  inboxId: string;
  audience: CampaignAudience;
  steps: CampaignStep[];
  settings?: Partial<Omit<CampaignSettings, 'window'>> & { window?: CampaignSettings['window'] | null };
  scheduledAt?: string | null;
}

export function publicCampaign(row: CampaignRow, stats: Stats) {
  return {
    id: row.id,
    name: row.name,
    projectId: row.projectId,
    inboxId: row.inboxId,
    channel: row.channel,
    status: row.status,
    audience: row.audience,
    steps: row.steps,
    settings: row.settings,
    scheduledAt: row.scheduledAt,
    testMode: row.testMode,
    total: row.total,
    stats,
    pausedReason: row.pausedReason,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function publicRecipient(row: RecipientRow, campaign: CampaignRow, now: Date) {
  return {
    id: row.id,
    leadId: row.leadId,
    address: row.address,
    status: row.status,
    ...(row.skipReason ? { skipReason: row.skipReason } : {}),
    currentStep: row.step,
    nextSendAt: goesAt(row.nextSendAt, campaign, now),
    sentAt: row.sentAt,
    deliveredAt: row.deliveredAt,
    readAt: row.readAt,
    repliedAt: row.repliedAt,
    ...(row.error ? { error: row.error } : {}),
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

/**
 * Campaigns (CONTRACT §9): their CRUD and moves (start, pause, resume, cancel, test), and the one
 * face of the module's parts — unsubscribe links (unsubscribe.ts), suppressions and consents
 * (suppressions.ts), the runner (runner.ts), what comes back (outcomes.ts: receipts and failures
 * through the conversations module's outbound status changes, subscribed in services.ts, and
 * replies through the events). Suppressions and consent are checked at every send.
 */
export class CampaignsService {
  private readonly ctx: CampaignsContext;
  private readonly suppressions: Suppressions;
  private readonly outcomes: Outcomes;
  private readonly runner: CampaignRunner;

  constructor(deps: Deps, ports: CampaignPorts) {
    this.ctx = { db: deps.db, clock: deps.clock, ports };
    this.suppressions = new Suppressions(this.ctx);
    this.outcomes = new Outcomes(this.ctx);
    this.runner = new CampaignRunner(this.ctx, this.outcomes);
  }

  // ------------------------------------------------------------------ unsubscribe (unsubscribe.ts)

  /** The token of one address (see UnsubscribeLinks). */
  unsubscribeToken(orgId: string, channel: string, address: string): string {
    return this.ctx.ports.links.token(orgId, channel, address);
  }

  /** What a token names, or null when it is not one of ours (fails closed). */
  readToken(token: string): { orgId: string; channel: string; address: string } | null {
    return this.ctx.ports.links.read(token);
  }

  unsubscribe(token: string): Promise<{ channel: string; address: string } | null> {
    return this.suppressions.unsubscribe(token);
  }

  // ------------------------------------------------------------------ suppressions and consents (suppressions.ts)

  listSuppressions(scope: Scope, query: ListQuery & { channel?: string; q?: string }) {
    return this.suppressions.listSuppressions(scope, query);
  }
  addSuppression(scope: Scope, input: { channel: string; address: string; reason?: string }) {
    return this.suppressions.addSuppression(scope, input);
  }
  deleteSuppression(scope: Scope, id: string): Promise<void> {
    return this.suppressions.deleteSuppression(scope, id);
  }
  listConsents(scope: Scope, leadId: string) {
    return this.suppressions.listConsents(scope, leadId);
  }
  addConsent(scope: Scope, leadId: string, input: { channel: string; status: string; source?: string; text?: string }) {
    return this.suppressions.addConsent(scope, leadId, input);
  }

  // ------------------------------------------------------------------ the runner (runner.ts) and what comes back (outcomes.ts)

  /** One round of the runner. True when there may be more to do now. */
  round(): Promise<boolean> {
    return this.runner.round();
  }

  /** Outbound campaign messages changed, in their transaction (the conversations module's subscription, wired in services.ts). */
  onOutbound(tx: Db, changed: OutboundStatus[]): Promise<void> {
    return this.outcomes.onOutbound(tx, changed);
  }

  /** Platform events (the dispatcher's batch, in its transaction): the leads' replies. */
  onEvents(tx: Db, batch: EventRow[]): Promise<void> {
    return this.outcomes.onEvents(tx, batch);
  }

  // ------------------------------------------------------------------ campaigns

  private async settingsOf(
    input: (Partial<Omit<CampaignSettings, 'window'>> & { window?: CampaignSettings['window'] | null }) | undefined,
    base: CampaignSettings,
  ): Promise<CampaignSettings> {
    const { window, ...rest } = input ?? {};
    const settings: CampaignSettings = { ...base, ...rest, ...(window ? { window } : {}) };
    // null removes the window; leaving it out keeps the one there is.
    if (window === null) delete settings.window;
    const w = settings.window;
    if (w) {
      const from = minutesOf(w.from);
      const to = minutesOf(w.to);
      if (from === null || to === null)
        throw badRequest('settings.window.from and to are times of day, HH:MM', [{ field: 'body.settings.window', message: 'from and to must be HH:MM' }]);
      if (to <= from)
        throw badRequest('settings.window.to must be after from (a window within one day)', [
          { field: 'body.settings.window.to', message: 'must be after from' },
        ]);
      if (!w.days.length)
        throw badRequest('settings.window.days names at least one day', [
          { field: 'body.settings.window.days', message: 'must name at least one day (1 Monday … 7 Sunday)' },
        ]);
      settings.window = { ...w, days: [...new Set(w.days)].sort(), timezone: assertTimezone(w.timezone, 'body.settings.window.timezone') };
    }
    return settings;
  }

  private checkSteps(steps: CampaignStep[], channel: string): void {
    steps.forEach((step, i) => {
      if (channel === 'email' && i === 0 && !step.subject?.trim())
        throw badRequest('The first step of an e-mail campaign needs a subject', [{ field: 'body.steps.0.subject', message: 'is required for e-mail' }]);
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
      const found = new Set((await rows<{ lead_id: string }>(this.ctx.db, leadsMatching(scope.orgId, projectId, { leadIds: ids }))).map((l) => l.lead_id));
      const strangers = ids.filter((id) => !found.has(id));
      if (!strangers.length) return;
      // The first 20 by name: enough to find them, and a bounded answer for 100,000 ids.
      const named = `${strangers.slice(0, 20).join(', ')}${strangers.length > 20 ? ` and ${strangers.length - 20} more` : ''}`;
      throw badRequest(
        `audience.leadIds names ${strangers.length} ${strangers.length === 1 ? 'id that is not a lead' : 'ids that are not leads'} of the campaign's project: ${named}`,
        [{ field: 'body.audience.leadIds', message: `not leads of the campaign's project (${projectId}): ${named}` }],
      );
    }
    if (audience.projectId === undefined) return;
    await this.ctx.ports.orgs.projectFor(scope, audience.projectId);
    if (audience.projectId !== projectId) {
      throw badRequest(`audience.projectId ${audience.projectId} is not the campaign's project (${projectId}): a campaign sends to its own project's leads`, [
        { field: 'body.audience.projectId', message: `must be the campaign's project (${projectId}), or left out` },
      ]);
    }
  }

  private async inboxFor(scope: Scope, inboxId: string) {
    const inbox = await this.ctx.ports.conversations.inboxRow(scope, inboxId).catch(() => null);
    if (!inbox) throw badRequest(`Inbox ${inboxId} not found`, [{ field: 'body.inboxId', message: 'must be an inbox of this organization' }]);
    if (!(CAMPAIGN_CHANNELS as readonly string[]).includes(inbox.channel)) {
      throw unprocessable('CHANNEL_NOT_SUPPORTED', `Campaigns send through email, whatsapp or telegram inboxes; this one is ${inbox.channel}`, [
        { field: 'body.inboxId', message: `a ${inbox.channel} inbox cannot send campaigns` },
      ]);
    }
    return inbox;
  }

  private scheduledAtOf(value: string | null | undefined): Date | null {
    if (value === undefined || value === null) return null;
    const at = new Date(value);
    if (Number.isNaN(at.getTime()))
      throw badRequest('scheduledAt is not a date-time', [{ field: 'body.scheduledAt', message: 'must be an ISO 8601 date-time' }]);
    return at;
  }

  async create(scope: Scope, input: CampaignInput) {
    const inbox = await this.inboxFor(scope, input.inboxId);
    const projectId = (await this.ctx.ports.orgs.projectFor(scope, input.projectId)) ?? inbox.projectId;
    if (projectId !== inbox.projectId)
      throw badRequest('The inbox belongs to another project', [{ field: 'body.inboxId', message: "must be an inbox of the campaign's project" }]);
    this.checkSteps(input.steps, inbox.channel);
    await this.checkAudience(scope, projectId, input.audience);
    const settings = await this.settingsOf(input.settings, DEFAULTS);
    const now = this.ctx.clock.now();
    const [row] = await this.ctx.db
      .insert(campaigns)
      .values({
        id: newId('campaign', now.getTime()),
        orgId: scope.orgId,
        projectId,
        name: input.name,
        inboxId: inbox.id,
        channel: inbox.channel,
        audience: input.audience,
        steps: input.steps,
        settings,
        status: 'DRAFT',
        scheduledAt: this.scheduledAtOf(input.scheduledAt),
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return publicCampaign(row!, emptyStats(0));
  }

  private async row(scope: Scope, id: string, tx: Db = this.ctx.db, lock = false): Promise<CampaignRow> {
    const query = tx
      .select()
      .from(campaigns)
      .where(inScope(scope, campaigns, eq(campaigns.id, id)));
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('Campaign');
    return row;
  }

  async get(scope: Scope, id: string) {
    const row = await this.row(scope, id);
    return publicCampaign(row, (await statsOf(this.ctx.db, [row])).get(row.id)!);
  }

  async list(scope: Scope, query: ListQuery & { status?: string }) {
    const page = pageOf(query);
    const where = inScope(scope, campaigns, query.status ? eq(campaigns.status, query.status) : undefined);
    const [items, [count]] = await Promise.all([
      this.ctx.db.select().from(campaigns).where(where).orderBy(desc(campaigns.createdAt), desc(campaigns.id)).limit(page.limit).offset(page.offset),
      this.ctx.db
        .select({ n: sql<number>`count(*)::int` })
        .from(campaigns)
        .where(where),
    ]);
    const stats = await statsOf(this.ctx.db, items);
    return envelope(
      items.map((r) => publicCampaign(r, stats.get(r.id)!)),
      count?.n ?? 0,
      page,
    );
  }

  async update(scope: Scope, id: string, patch: Partial<CampaignInput>) {
    // Read before the transaction: the embedded store has one connection, which the transaction holds.
    const inbox = patch.inboxId ? await this.inboxFor(scope, patch.inboxId) : null;
    if (patch.audience) {
      // A campaign never changes project; one that may no longer change its audience gets its 409 below.
      const current = await this.row(scope, id);
      if (EDITABLE.includes(current.status) && !current.startedAt) await this.checkAudience(scope, current.projectId, patch.audience);
    }
    return transaction(this.ctx.db, async (tx) => {
      const row = await this.row(scope, id, tx, true);
      if (!EDITABLE.includes(row.status)) throw conflict(`A ${row.status} campaign cannot be changed; only DRAFT, SCHEDULED and PAUSED ones can`);
      if (patch.audience && row.startedAt) throw conflict('The audience was resolved when the campaign started; it cannot change now');
      if (patch.inboxId && patch.inboxId !== row.inboxId && row.startedAt) throw conflict('A started campaign keeps its inbox');
      if (inbox && inbox.projectId !== row.projectId)
        throw badRequest('The inbox belongs to another project', [{ field: 'body.inboxId', message: "must be an inbox of the campaign's project" }]);
      const steps = patch.steps ?? row.steps;
      if (row.startedAt && patch.steps && patch.steps.length < row.steps.length) {
        const [sent] = await tx
          .select({ n: sql<number>`coalesce(max(${campaignRecipients.step}), 0)::int` })
          .from(campaignRecipients)
          .where(eq(campaignRecipients.campaignId, row.id));
        if ((sent?.n ?? 0) > patch.steps.length) throw conflict('Some recipients are past the steps this change would remove');
      }
      this.checkSteps(steps, inbox?.channel ?? row.channel);
      const set: Partial<CampaignRow> = { updatedAt: this.ctx.clock.now() };
      if (patch.name !== undefined) set.name = patch.name;
      if (inbox) Object.assign(set, { inboxId: inbox.id, channel: inbox.channel });
      if (patch.audience) set.audience = patch.audience;
      if (patch.steps) set.steps = patch.steps;
      if (patch.settings) set.settings = await this.settingsOf(patch.settings, row.settings);
      if (patch.scheduledAt !== undefined) set.scheduledAt = this.scheduledAtOf(patch.scheduledAt);
      const [updated] = await tx.update(campaigns).set(set).where(eq(campaigns.id, row.id)).returning();
      return publicCampaign(updated!, (await statsOf(tx, [updated!])).get(row.id)!);
    });
  }

  async delete(scope: Scope, id: string): Promise<void> {
    const row = await this.row(scope, id);
    if (row.status === 'RUNNING') throw conflict('A running campaign cannot be deleted: pause or cancel it first');
    await this.ctx.db.delete(campaigns).where(eq(campaigns.id, row.id));
  }

  /** Start (CONTRACT §9): SCHEDULED when scheduledAt is still ahead, else RUNNING with the audience resolved now. */
  async start(scope: Scope, id: string, options: { testMode?: boolean } = {}) {
    await transaction(this.ctx.db, async (tx) => {
      const row = await this.row(scope, id, tx, true);
      if (row.status !== 'DRAFT')
        throw conflict(`Only a DRAFT campaign can be started; this one is ${row.status}${row.status === 'PAUSED' ? ' (resume it)' : ''}`);
      const now = this.ctx.clock.now();
      await tx
        .update(campaigns)
        .set({ testMode: options.testMode === true, updatedAt: now })
        .where(eq(campaigns.id, row.id));
      if (row.scheduledAt && row.scheduledAt > now) {
        await tx.update(campaigns).set({ status: 'SCHEDULED' }).where(eq(campaigns.id, row.id));
        return;
      }
      await this.runner.begin(tx, { ...row, testMode: options.testMode === true }, now);
    });
    this.ctx.ports.events.wakeLocal();
    return this.get(scope, id);
  }

  async pause(scope: Scope, id: string) {
    return this.move(scope, id, ['RUNNING', 'SCHEDULED'], 'PAUSED', { pausedReason: 'paused by a person' });
  }

  async resume(scope: Scope, id: string) {
    await transaction(this.ctx.db, async (tx) => {
      const row = await this.row(scope, id, tx, true);
      if (row.status !== 'PAUSED') throw conflict(`Only a PAUSED campaign can be resumed; this one is ${row.status}`);
      const now = this.ctx.clock.now();
      await tx.update(campaigns).set({ pausedReason: null, errorsInRow: 0, updatedAt: now }).where(eq(campaigns.id, row.id));
      if (!row.startedAt && row.scheduledAt && row.scheduledAt > now) await tx.update(campaigns).set({ status: 'SCHEDULED' }).where(eq(campaigns.id, row.id));
      else if (!row.startedAt) await this.runner.begin(tx, row, now);
      else await tx.update(campaigns).set({ status: 'RUNNING' }).where(eq(campaigns.id, row.id));
    });
    return this.get(scope, id);
  }

  async cancel(scope: Scope, id: string) {
    await transaction(this.ctx.db, async (tx) => {
      const row = await this.row(scope, id, tx, true);
      if (!['DRAFT', 'SCHEDULED', 'RUNNING', 'PAUSED'].includes(row.status)) throw conflict(`A ${row.status} campaign cannot be canceled`);
      const now = this.ctx.clock.now();
      await tx
        .update(campaignRecipients)
        .set({ status: 'STOPPED', nextSendAt: null })
        .where(and(eq(campaignRecipients.campaignId, row.id), inArray(campaignRecipients.status, ['PENDING', 'ACTIVE'])));
      const [canceled] = await tx.update(campaigns).set({ status: 'CANCELED', finishedAt: now, updatedAt: now }).where(eq(campaigns.id, row.id)).returning();
      if (row.startedAt) await this.outcomes.finishedEvent(tx, canceled!);
    });
    return this.get(scope, id);
  }

  private async move(scope: Scope, id: string, from: string[], to: string, set: Partial<CampaignRow> = {}) {
    await transaction(this.ctx.db, async (tx) => {
      const row = await this.row(scope, id, tx, true);
      if (!from.includes(row.status)) throw conflict(`A ${row.status} campaign cannot be moved to ${to}`);
      await tx
        .update(campaigns)
        .set({ ...set, status: to, updatedAt: this.ctx.clock.now() })
        .where(eq(campaigns.id, row.id));
    });
    return this.get(scope, id);
  }

  async test(scope: Scope, id: string, input: { to: string }) {
    const row = await this.row(scope, id);
    const inbox = await this.inboxFor(scope, row.inboxId);
    const step = row.steps[0]!;
    // The first lead of the audience, if it names some, so the personalisation shows; else an empty lead.
    const leadId = 'leadIds' in row.audience ? row.audience.leadIds[0] : undefined;
    const lead = leadId ? await leadInScope(this.ctx.db, scope, leadId) : undefined;
    const rendered = await this.runner.render(row, step, lead ?? null, input.to, true);
    const messageId = newId('message');
    const now = this.ctx.clock.now();
    await transaction(this.ctx.db, (tx) =>
      this.ctx.ports.conversations.queueOutreach(
        tx,
        inbox,
        {
          address: normalAddress(row.channel, input.to),
          name: null,
          leadId: null,
          subject: rendered.subject ? `[Test] ${rendered.subject}` : null,
          text: rendered.text,
          template: null,
          authorId: row.id,
          messageId,
        },
        now,
      ),
    );
    return { ok: true, messageId };
  }

  async recipients(scope: Scope, id: string, query: ListQuery & { status?: string }) {
    const row = await this.row(scope, id);
    const page = pageOf(query);
    const where = and(eq(campaignRecipients.campaignId, row.id), query.status ? eq(campaignRecipients.status, query.status) : undefined);
    const [items, [count]] = await Promise.all([
      this.ctx.db.select().from(campaignRecipients).where(where).orderBy(campaignRecipients.id).limit(page.limit).offset(page.offset),
      this.ctx.db
        .select({ n: sql<number>`count(*)::int` })
        .from(campaignRecipients)
        .where(where),
    ]);
    const now = this.ctx.clock.now();
    return envelope(
      items.map((r) => publicRecipient(r, row, now)),
      count?.n ?? 0,
      page,
    );
  }

  /** A campaign's figures for a report (CAMPAIGN_SUMMARY): the record, the skip reasons, who replied and who was sent everything without replying. */
  async summary(scope: Scope, id: string) {
    const campaign = await this.get(scope, id);
    const leadsWhere = (condition: ReturnType<typeof sql>) =>
      this.ctx.db
        .select({ id: campaignRecipients.leadId })
        .from(campaignRecipients)
        .where(and(eq(campaignRecipients.campaignId, id), condition))
        .orderBy(campaignRecipients.id)
        .limit(1000);
    const [skips, replied, unanswered] = await Promise.all([
      this.ctx.db
        .select({ reason: campaignRecipients.skipReason, n: sql<number>`count(*)::int` })
        .from(campaignRecipients)
        .where(and(eq(campaignRecipients.campaignId, id), eq(campaignRecipients.status, 'SKIPPED')))
        .groupBy(campaignRecipients.skipReason),
      leadsWhere(sql`${campaignRecipients.repliedAt} is not null`),
      leadsWhere(sql`${campaignRecipients.status} = 'COMPLETED' and ${campaignRecipients.repliedAt} is null`),
    ]);
    return {
      campaign,
      skipped: Object.fromEntries(skips.map((s) => [s.reason ?? 'unknown', s.n])),
      repliedLeadIds: replied.map((r) => r.id),
      unansweredLeadIds: unanswered.map((r) => r.id),
    };
  }
}
