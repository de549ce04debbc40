import { and, eq, sql } from 'drizzle-orm';
import { rows, transaction, type Db } from '../../platform/db.ts';
import { AppError } from '../../platform/errors.ts';
import { derivedId } from '../../platform/ids.ts';
import { leadsByIds, leadsMatching, type LeadRow } from '../leads/index.ts';
import { publicLead } from '../leads/index.ts';
import { contactAddressOfLead } from '../conversations/index.ts';
import { ExpressionError, resolveParams, runsInWorkers } from '../../platform/expressions/expressions.ts';
import { localDate } from '../../platform/range.ts';
import type { CampaignsContext } from './context.ts';
import type { Outcomes } from './outcomes.ts';
import type { InboxRow } from './ports.ts';
import { blockedAddresses } from './suppressions.ts';
import {
  campaignRate,
  campaignRecipients,
  campaignSends,
  campaigns,
  leadConsents,
  suppressions,
  type CampaignRow,
  type CampaignStep,
  type RecipientRow,
} from './tables.ts';
import { nextOpening } from './window.ts';

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

/** Whether the campaign's sending window lets it send at `now` (test mode sends regardless). */
function windowOpen(row: CampaignRow, now: Date): boolean {
  return !row.settings.window || row.testMode || nextOpening(row.settings.window, now).getTime() <= now.getTime();
}

/** A step rendered for one recipient. */
interface Rendered {
  subject: string | null;
  text: string;
}

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
 * The runner: a campaign's start (its audience resolved into recipients), and the rounds that
 * claim due recipients with SKIP LOCKED under the campaign's row lock (so limits hold across
 * instances), render each step and queue it in the conversations module, recording each
 * (recipient, step) in campaign_sends in the transaction that queues its message: a step never
 * goes out twice.
 */
export class CampaignRunner {
  private readonly ctx: CampaignsContext;
  private readonly outcomes: Outcomes;

  constructor(ctx: CampaignsContext, outcomes: Outcomes) {
    this.ctx = ctx;
    this.outcomes = outcomes;
  }

  /**
   * The first move into RUNNING: the audience resolved into recipients in one statement (each
   * skipped one with its reason), `total` fixed, `campaign.started` written.
   */
  async begin(tx: Db, row: CampaignRow, now: Date): Promise<void> {
    const total = await this.resolveAudience(tx, row, now);
    const [started] = await tx.update(campaigns).set({ status: 'RUNNING', total, startedAt: now, updatedAt: now }).where(eq(campaigns.id, row.id)).returning();
    await this.ctx.ports.events.record(tx, {
      orgId: row.orgId,
      projectId: row.projectId,
      type: 'campaign.started',
      payload: { campaign: { id: row.id, name: row.name, channel: row.channel, total, testMode: started!.testMode } },
    });
  }

  /** The audience's leads as recipients; returns how many (the campaign's `total`). */
  private async resolveAudience(tx: Db, row: CampaignRow, now: Date): Promise<number> {
    const a = row.audience;
    const matching = leadsMatching(
      row.orgId,
      row.projectId,
      'leadIds' in a
        ? { leadIds: a.leadIds }
        : {
            ...(a.status
              ? {
                  status: a.status
                    .split(',')
                    .map((s) => s.trim().toUpperCase())
                    .filter(Boolean),
                }
              : {}),
            ...(a.tags ? { tags: a.tags } : {}),
            ...(a.minScore !== undefined ? { minScore: a.minScore } : {}),
          },
    );
    const address =
      row.channel === 'email'
        ? sql`l.email`
        : row.channel === 'whatsapp'
          ? sql`regexp_replace(l.phone, '[^0-9+]', '', 'g')`
          : contactAddressOfLead(row.inboxId, sql`l.lead_id`);
    const firstAt = new Date(now.getTime() + (row.steps[0]?.delaySeconds ?? 0) * 1000).toISOString();
    const result = await rows<{ n: number }>(
      tx,
      sql`
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
      select count(*)::int as n from added`,
    );
    return result[0]?.n ?? 0;
  }

  /**
   * One round: scheduled campaigns that came due start; then each running campaign with due
   * recipients sends one batch (in its own transaction). True when there may be more to do now.
   */
  async round(): Promise<boolean> {
    const now = this.ctx.clock.now();
    const due = await this.ctx.db
      .select({ id: campaigns.id })
      .from(campaigns)
      .where(sql`${campaigns.status} = 'SCHEDULED' and ${campaigns.scheduledAt} <= ${now.toISOString()}::timestamptz`)
      .limit(CAMPAIGNS_PER_ROUND);
    for (const { id } of due) {
      await transaction(this.ctx.db, async (tx) => {
        const [row] = await tx
          .select()
          .from(campaigns)
          .where(and(eq(campaigns.id, id), eq(campaigns.status, 'SCHEDULED')))
          .for('update', { skipLocked: true });
        if (row) await this.begin(tx, row, now);
      });
    }
    const running = await this.ctx.db
      .select({ id: campaigns.id, inboxId: campaigns.inboxId })
      .from(campaigns)
      .where(eq(campaigns.status, 'RUNNING'))
      .orderBy(campaigns.updatedAt)
      .limit(CAMPAIGNS_PER_ROUND);
    let more = false;
    for (const { id, inboxId } of running) {
      if (await this.sendBatch(id, inboxId, now)) more = true;
    }
    return more;
  }

  /** How many more the campaign may send now under its per-minute and daily limits and IN_FLIGHT (test mode: no limits). */
  private async allowance(tx: Db, row: CampaignRow, now: Date): Promise<number> {
    if (row.testMode) return BATCH;
    const [queued] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(campaignRecipients)
      .where(and(eq(campaignRecipients.campaignId, row.id), sql`${campaignRecipients.awaiting} is not null`));
    const room = IN_FLIGHT - (queued?.n ?? 0);
    if (room <= 0) return 0;
    const second = Math.floor(now.getTime() / 1000);
    // A second's count leaves the window only when the whole second is more than 60 s ago: the
    // count errs on the side of the limit, never past it.
    const [minute] = await tx
      .select({ sent: sql<number>`coalesce(sum(${campaignRate.sent}), 0)::int` })
      .from(campaignRate)
      .where(and(eq(campaignRate.campaignId, row.id), sql`${campaignRate.second} >= ${second - 60}`));
    const today = localDate(now.getTime(), row.settings.window?.timezone ?? 'UTC');
    const daySent = row.day === today ? row.daySent : 0;
    return Math.max(0, Math.min(BATCH, room, row.settings.perMinute - (minute?.sent ?? 0), row.settings.dailyLimit - daySent));
  }

  /** Counts `sent` sends against the limits (in the batch's transaction, under the campaign's row lock). */
  private async countSends(tx: Db, row: CampaignRow, sent: number, now: Date): Promise<void> {
    if (sent === 0 || row.testMode) return;
    await this.ctx.ports.plans?.add(tx, row.orgId, 'campaignMessagesPerMonth', sent);
    const second = Math.floor(now.getTime() / 1000);
    await tx
      .insert(campaignRate)
      .values({ campaignId: row.id, second, sent })
      .onConflictDoUpdate({ target: [campaignRate.campaignId, campaignRate.second], set: { sent: sql`${campaignRate.sent} + excluded.sent` } });
    await tx.delete(campaignRate).where(and(eq(campaignRate.campaignId, row.id), sql`${campaignRate.second} < ${second - 60}`));
    const today = localDate(now.getTime(), row.settings.window?.timezone ?? 'UTC');
    await tx
      .update(campaigns)
      .set({ day: today, daySent: row.day === today ? sql`${campaigns.daySent} + ${sent}` : sent })
      .where(eq(campaigns.id, row.id));
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
    const [row] = await this.ctx.db
      .select()
      .from(campaigns)
      .where(and(eq(campaigns.id, id), eq(campaigns.status, 'RUNNING')));
    if (!row || !windowOpen(row, now) || !row.steps.some((step) => runsInWorkers([step.subject, step.text]))) return out;
    // Only as many as the batch may send: a campaign held by its limits (perMinute, the queue ahead)
    // would otherwise render a hundred recipients in the workers at every round, to send none.
    const allowed = await this.allowance(this.ctx.db, row, now);
    if (allowed === 0) return out;
    const due = await this.ctx.db
      .select()
      .from(campaignRecipients)
      .where(dueRecipients(row.id, now))
      .orderBy(campaignRecipients.nextSendAt, campaignRecipients.id)
      .limit(allowed);
    const byId = new Map(
      (
        await leadsByIds(
          this.ctx.db,
          due.map((r) => r.leadId),
        )
      ).map((l) => [l.id, l]),
    );
    await Promise.all(
      due.map(async (r) => {
        const step = row.steps[r.step];
        const lead = byId.get(r.leadId);
        if (!step || !lead || !r.address) return;
        try {
          out.set(renderKey(r, step, lead), await this.render(row, step, lead, r.address, false));
        } catch (error) {
          if (!(error instanceof ExpressionError)) throw error;
          out.set(renderKey(r, step, lead), error);
        }
      }),
    );
    return out;
  }

  /** One batch of one campaign, under its row lock (another instance skips it meanwhile). True when it sent anything. */
  private async sendBatch(id: string, inboxId: string, now: Date): Promise<boolean> {
    // Read before the transaction: the embedded store has one connection, which the transaction holds.
    const inbox = await this.ctx.ports.conversations.inboxById(inboxId);
    const ahead = await this.renderAhead(id, now);
    const finished = await transaction(this.ctx.db, async (tx) => {
      const [row] = await tx
        .select()
        .from(campaigns)
        .where(and(eq(campaigns.id, id), eq(campaigns.status, 'RUNNING')))
        .for('update', { skipLocked: true });
      if (!row) return { sent: 0 };
      if (!windowOpen(row, now)) return { sent: 0 };
      let allowed = await this.allowance(tx, row, now);
      // The plan's monthly messages (held under the organization's lock until this batch commits).
      const planRoom = allowed > 0 && !row.testMode ? await this.ctx.ports.plans?.room(tx, row.orgId, 'campaignMessagesPerMonth') : null;
      if (planRoom === 0) {
        await this.pauseForPlan(tx, row, now);
        return { sent: 0 };
      }
      if (planRoom != null) allowed = Math.min(allowed, planRoom);
      let sent = 0;
      if (allowed > 0) {
        const claimed = await tx
          .select()
          .from(campaignRecipients)
          .where(dueRecipients(row.id, now))
          .orderBy(campaignRecipients.nextSendAt, campaignRecipients.id)
          .limit(allowed)
          .for('update', { skipLocked: true });
        if (claimed.length) sent = await this.sendTo(tx, row, inbox, claimed, now, ahead);
        await this.countSends(tx, row, sent, now);
      }
      await this.outcomes.finishIfDone(tx, row.id, now);
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
  private async sendTo(
    tx: Db,
    row: CampaignRow,
    inbox: InboxRow | undefined,
    claimed: RecipientRow[],
    now: Date,
    ahead: Map<string, Rendered | ExpressionError>,
  ): Promise<number> {
    const byId = new Map(
      (
        await leadsByIds(
          tx,
          claimed.map((r) => r.leadId),
        )
      ).map((l) => [l.id, l]),
    );
    const blocked = await blockedAddresses(tx, row, claimed);
    const failures: { id: string; error: string }[] = [];
    const ready: { r: RecipientRow; step: CampaignStep; lead: LeadRow; subject: string | null; text: string; messageId: string | null }[] = [];
    for (const r of claimed) {
      const step = row.steps[r.step];
      const lead = byId.get(r.leadId);
      if (!step || !lead || !inbox) {
        await tx
          .update(campaignRecipients)
          .set({ status: 'STOPPED', nextSendAt: null, error: !inbox ? "the campaign's inbox was deleted" : !lead ? 'the lead was deleted' : null })
          .where(eq(campaignRecipients.id, r.id));
        continue;
      }
      const block = blocked.get(r.id);
      if (block) {
        // Before the first step a recipient is skipped; later, their sequence stops.
        await tx
          .update(campaignRecipients)
          .set(
            r.step === 0
              ? { status: 'SKIPPED', skipReason: block, nextSendAt: null }
              : { status: 'STOPPED', error: `no further steps: ${block.toLowerCase()}`, nextSendAt: null },
          )
          .where(eq(campaignRecipients.id, r.id));
        continue;
      }
      try {
        const early = ahead.get(renderKey(r, step, lead));
        if (early instanceof ExpressionError) throw early;
        const rendered = early ?? (await this.render(row, step, lead, r.address!, false));
        ready.push({ r, step, lead, ...rendered, messageId: row.testMode ? null : derivedId('message', r.id, [String(r.step)]) });
      } catch (error) {
        if (!(error instanceof ExpressionError)) throw error;
        failures.push({ id: r.id, error: error.message });
      }
    }
    const ledger = (x: (typeof ready)[number]) => ({
      recipientId: x.r.id,
      step: x.r.step,
      campaignId: row.id,
      messageId: x.messageId,
      subject: x.subject,
      text: x.text,
      at: now,
    });
    let sent = 0;
    if (ready.length && (row.testMode || !this.ctx.ports.conversations.hasSendRules(row.channel))) {
      await tx.insert(campaignSends).values(ready.map(ledger));
      if (row.testMode) {
        for (const x of ready) await this.advance(tx, row, x.r, x.r.step + 1, now);
      } else {
        await this.ctx.ports.conversations.queueOutreachMany(
          tx,
          inbox!,
          ready.map((x) => ({
            address: x.r.address!,
            name: x.lead.name,
            leadId: x.lead.id,
            subject: x.subject,
            text: x.text,
            authorId: row.id,
            messageId: x.messageId!,
          })),
          now,
        );
        await this.awaitOutcomes(
          tx,
          ready.map((x) => ({ id: x.r.id, messageId: x.messageId!, step: x.r.step + 1 })),
        );
      }
      sent = ready.length;
    } else {
      for (const x of ready) {
        try {
          await transaction(tx, async (inner) => {
            await inner.insert(campaignSends).values(ledger(x));
            await this.ctx.ports.conversations.queueOutreach(
              inner,
              inbox!,
              {
                address: x.r.address!,
                name: x.lead.name,
                leadId: x.lead.id,
                subject: x.subject,
                text: x.text,
                template: x.step.template ?? null,
                authorId: row.id,
                messageId: x.messageId!,
              },
              now,
            );
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
      await tx
        .update(campaignRecipients)
        .set({ status: 'FAILED', failedAt: now, error: f.error.slice(0, 1000), nextSendAt: null })
        .where(eq(campaignRecipients.id, f.id));
    }
    await this.outcomes.noteErrors(tx, row, row.errorsInRow + failures.length, now);
    return sent;
  }

  /** Recipients whose step was queued: ACTIVE, waiting for the message's outcome (onOutbound) before the next step. */
  private async awaitOutcomes(tx: Db, list: { id: string; messageId: string; step: number }[]): Promise<void> {
    await tx.execute(sql`update ${campaignRecipients} r set status = 'ACTIVE', awaiting = v.message_id, step = v.step, next_send_at = null
      from unnest(${sql.param(list.map((x) => x.id))}::text[], ${sql.param(list.map((x) => x.messageId))}::text[], ${sql.param(list.map((x) => x.step))}::int[]) as v(id, message_id, step)
      where r.id = v.id`);
  }

  /** The step's subject and text for a lead, personalised (`{{ lead.name }}`); e-mail gets its unsubscribe link. */
  async render(row: CampaignRow, step: CampaignStep, lead: LeadRow | null, address: string, test: boolean): Promise<Rendered> {
    const item = { lead: lead ? publicLead(lead) : {} };
    const scope = {
      orgId: row.orgId,
      input: item,
      run: { id: row.id, workflowId: '', testMode: test || row.testMode, startedAt: row.startedAt?.toISOString() ?? null },
      node: () => undefined,
    };
    const out = (await resolveParams({ subject: step.subject ?? null, text: step.text }, item as never, scope)) as { subject?: string | null; text?: string };
    let text = String(out.text ?? '');
    if (row.channel === 'email') text += `\n\n--\nTo stop receiving these messages: ${this.ctx.ports.links.url(row.orgId, row.channel, address)}`;
    return { subject: out.subject ? String(out.subject) : null, text };
  }

  /** A recipient after a step went out: the next step's time, or done (COMPLETED, or REPLIED if they answered). */
  private async advance(tx: Db, row: CampaignRow, r: Pick<RecipientRow, 'id' | 'repliedAt' | 'sentAt'>, nextStep: number, now: Date): Promise<void> {
    const next = row.steps[nextStep];
    const base = { awaiting: null, step: nextStep, sentAt: r.sentAt ?? now };
    await tx
      .update(campaignRecipients)
      .set(
        next
          ? { ...base, status: 'ACTIVE', nextSendAt: new Date(now.getTime() + next.delaySeconds * 1000) }
          : { ...base, status: r.repliedAt ? 'REPLIED' : 'COMPLETED', nextSendAt: null },
      )
      .where(eq(campaignRecipients.id, r.id));
  }

  /** The plan's monthly messages are spent: the campaign pauses with the reason, and the organization is told. */
  private async pauseForPlan(tx: Db, row: CampaignRow, now: Date): Promise<void> {
    const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const reason = `the plan's campaignMessagesPerMonth limit is reached; resume it after ${next.toISOString().slice(0, 10)} (UTC) or once the plan allows more`;
    await tx.update(campaigns).set({ status: 'PAUSED', pausedReason: reason, updatedAt: now }).where(eq(campaigns.id, row.id));
    await this.ctx.ports.notifications.notify(
      {
        orgId: row.orgId,
        projectId: row.projectId,
        userId: null,
        kind: 'campaign.paused',
        title: `Campaign "${row.name}" was paused`,
        body: `Paused: ${reason}.`,
        link: `/campaigns/${row.id}`,
      },
      tx,
    );
  }
}
