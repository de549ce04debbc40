import { and, eq, inArray, sql } from 'drizzle-orm';
import { rows, type Db } from '../../platform/db.ts';
import type { EventRow } from '../events/index.ts';
import type { CampaignsContext } from './context.ts';
import type { OutboundStatus } from './ports.ts';
import { campaignRecipients, campaignSends, campaigns, type CampaignRow } from './tables.ts';

export interface Stats {
  total: number;
  sent: number;
  delivered: number;
  read: number;
  replied: number;
  failed: number;
  skipped: number;
  pending: number;
}

export function emptyStats(total: number): Stats {
  return { total, sent: 0, delivered: 0, read: 0, replied: 0, failed: 0, skipped: 0, pending: 0 };
}

/** Recipient counters of campaigns (CONTRACT §9): each recipient at most once per counter. */
export async function statsOf(db: Db, list: CampaignRow[]): Promise<Map<string, Stats>> {
  const out = new Map(list.map((r) => [r.id, emptyStats(r.total)]));
  if (!list.length) return out;
  const counted = await db
    .select({
      id: campaignRecipients.campaignId,
      sent: sql<number>`count(*) filter (where ${campaignRecipients.sentAt} is not null)::int`,
      delivered: sql<number>`count(*) filter (where ${campaignRecipients.deliveredAt} is not null)::int`,
      read: sql<number>`count(*) filter (where ${campaignRecipients.readAt} is not null)::int`,
      replied: sql<number>`count(*) filter (where ${campaignRecipients.repliedAt} is not null)::int`,
      failed: sql<number>`count(*) filter (where ${campaignRecipients.status} = 'FAILED')::int`,
      skipped: sql<number>`count(*) filter (where ${campaignRecipients.status} = 'SKIPPED')::int`,
      pending: sql<number>`count(*) filter (where ${campaignRecipients.status} in ('PENDING', 'ACTIVE'))::int`,
    })
    .from(campaignRecipients)
    .where(
      inArray(
        campaignRecipients.campaignId,
        list.map((r) => r.id),
      ),
    )
    .groupBy(campaignRecipients.campaignId);
  for (const c of counted)
    out.set(c.id, {
      ...out.get(c.id)!,
      sent: c.sent,
      delivered: c.delivered,
      read: c.read,
      replied: c.replied,
      failed: c.failed,
      skipped: c.skipped,
      pending: c.pending,
    });
  return out;
}

/**
 * What comes back of a campaign's sends: the outbound messages' outcomes (the conversations
 * module's status changes, subscribed in services.ts), the leads' replies (platform events), and
 * what follows them: a recipient's next step or end, failures in a row that pause the campaign, the
 * campaign's end with its figures.
 */
export class Outcomes {
  private readonly ctx: CampaignsContext;

  constructor(ctx: CampaignsContext) {
    this.ctx = ctx;
  }

  /** Failures in a row: maxErrors of them pause the campaign and tell the organization why. */
  async noteErrors(tx: Db, row: CampaignRow, errorsInRow: number, now: Date): Promise<void> {
    if (errorsInRow === row.errorsInRow) return;
    const pause = errorsInRow >= row.settings.maxErrors && row.status === 'RUNNING';
    const reason = `${errorsInRow} sends failed in a row (maxErrors ${row.settings.maxErrors})`;
    await tx
      .update(campaigns)
      .set({ errorsInRow, ...(pause ? { status: 'PAUSED', pausedReason: reason } : {}), updatedAt: now })
      .where(eq(campaigns.id, row.id));
    if (pause) {
      await this.ctx.ports.notifications.notify(
        {
          orgId: row.orgId,
          projectId: row.projectId,
          userId: null,
          kind: 'campaign.paused',
          title: `Campaign "${row.name}" was paused`,
          body: `${reason}. Fix the cause (the recipients' errors say what it is) and resume it.`,
          link: `/campaigns/${row.id}`,
        },
        tx,
      );
    }
  }

  /** FINISHED once no recipient is waiting for anything; `campaign.finished` with the stats. */
  async finishIfDone(tx: Db, id: string, now: Date): Promise<void> {
    const [open] = await tx
      .select({ id: campaignRecipients.id })
      .from(campaignRecipients)
      .where(and(eq(campaignRecipients.campaignId, id), inArray(campaignRecipients.status, ['PENDING', 'ACTIVE'])))
      .limit(1);
    if (open) return;
    const [done] = await tx
      .update(campaigns)
      .set({ status: 'FINISHED', finishedAt: now, updatedAt: now })
      .where(and(eq(campaigns.id, id), eq(campaigns.status, 'RUNNING')))
      .returning();
    if (done) await this.finishedEvent(tx, done);
  }

  async finishedEvent(tx: Db, row: CampaignRow): Promise<void> {
    const stats = (await statsOf(tx, [row])).get(row.id)!;
    const { pending: _pending, total: _total, ...counters } = stats;
    await this.ctx.ports.events.record(tx, {
      orgId: row.orgId,
      projectId: row.projectId,
      type: 'campaign.finished',
      payload: { campaign: { id: row.id, name: row.name, channel: row.channel, total: row.total }, stats: counters, status: row.status },
    });
  }

  /**
   * Outbound campaign messages changed (in their transaction; a sender's batch of successes at once):
   * the recipients' counters, and for the step each was waiting on, its next step or its end.
   */
  async onOutbound(tx: Db, changed: OutboundStatus[]): Promise<void> {
    // Three lookups by key rather than one join: on a fast-growing ledger the planner's stale
    // estimates turned the join into a scan of every recipient (84 ms at 100,000).
    const sends = await tx
      .select({ recipientId: campaignSends.recipientId, campaignId: campaignSends.campaignId, messageId: campaignSends.messageId })
      .from(campaignSends)
      .where(sql`${campaignSends.messageId} = any(${sql.param(changed.map((m) => m.id))}::text[])`);
    if (!sends.length) return;
    const recipientsById = new Map(
      (
        await tx
          .select()
          .from(campaignRecipients)
          .where(sql`${campaignRecipients.id} = any(${sql.param(sends.map((s) => s.recipientId))}::text[])`)
          .for('update')
      ).map((r) => [r.id, r]),
    );
    const campaignsById = new Map(
      (
        await tx
          .select()
          .from(campaigns)
          .where(sql`${campaigns.id} = any(${sql.param([...new Set(sends.map((s) => s.campaignId))])}::text[])`)
      ).map((c) => [c.id, c]),
    );
    const found = sends.flatMap((s) => {
      const r = recipientsById.get(s.recipientId);
      const c = campaignsById.get(s.campaignId);
      return r && c ? [{ r, c, messageId: s.messageId }] : [];
    });
    const now = this.ctx.clock.now();
    const byMessage = new Map(changed.map((m) => [m.id, m]));
    const moves: { id: string; status: string; nextSendAt: Date | null }[] = [];
    const touched = new Map<string, CampaignRow>();
    const failedIn = new Map<string, number>();
    for (const { r, c, messageId } of found) {
      const message = byMessage.get(messageId!)!;
      touched.set(c.id, c);
      if (message.status === 'delivered' || message.status === 'read') {
        await tx
          .update(campaignRecipients)
          .set({ deliveredAt: r.deliveredAt ?? now, ...(message.status === 'read' ? { readAt: r.readAt ?? now } : {}) })
          .where(eq(campaignRecipients.id, r.id));
      } else if (r.awaiting !== message.id) {
        // A late outcome (a receipt's failure after it was sent): counted, never moving the recipient back.
        if (message.status === 'failed' && !r.failedAt)
          await tx.update(campaignRecipients).set({ failedAt: now, error: message.error }).where(eq(campaignRecipients.id, r.id));
      } else if (message.status === 'sent') {
        const next = c.steps[r.step];
        moves.push(
          r.status !== 'ACTIVE'
            ? { id: r.id, status: r.status, nextSendAt: null }
            : next
              ? { id: r.id, status: 'ACTIVE', nextSendAt: new Date(now.getTime() + next.delaySeconds * 1000) }
              : { id: r.id, status: r.repliedAt ? 'REPLIED' : 'COMPLETED', nextSendAt: null },
        );
      } else if (message.status === 'failed') {
        await tx
          .update(campaignRecipients)
          .set({ awaiting: null, ...(r.status === 'ACTIVE' ? { status: 'FAILED' } : {}), failedAt: now, error: message.error, nextSendAt: null })
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
      const ended = await rows<{ id: string }>(
        tx,
        sql`select distinct r.campaign_id as id from ${campaignRecipients} r join ${campaigns} c on c.id = r.campaign_id
        where r.lead_id = ${p.leadId} and c.status = 'RUNNING'`,
      );
      for (const { id } of ended) await this.finishIfDone(tx, id, this.ctx.clock.now());
    }
  }
}
