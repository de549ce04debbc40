import { and, desc, eq, sql } from 'drizzle-orm';
import { rows, type Db } from '../../platform/db.ts';
import type { Scope } from '../../platform/context.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import { leadInScope, type LeadRow } from '../leads/index.ts';
import type { CampaignsContext } from './context.ts';
import { campaignRecipients, leadConsents, suppressions, type CampaignRow, type RecipientRow } from './tables.ts';
import { normalAddress } from './unsubscribe.ts';

export const SUPPRESSION_REASONS = ['unsubscribed', 'hard_bounce', 'complaint', 'stop_keyword', 'manual'] as const;

/** Who must not be reached: suppressed addresses (an unsubscribe among them) and the leads' consents, checked at every send. */
export class Suppressions {
  private readonly ctx: CampaignsContext;

  constructor(ctx: CampaignsContext) {
    this.ctx = ctx;
  }

  /** One-click unsubscribe: the address is suppressed (reason `unsubscribed`); doing it twice changes nothing. */
  async unsubscribe(token: string): Promise<{ channel: string; address: string } | null> {
    const who = this.ctx.ports.links.read(token);
    if (!who) return null;
    await this.ctx.db
      .insert(suppressions)
      .values({ id: newId('suppression'), orgId: who.orgId, channel: who.channel, address: who.address, reason: 'unsubscribed' })
      .onConflictDoNothing();
    return { channel: who.channel, address: who.address };
  }

  async listSuppressions(scope: Scope, query: ListQuery & { channel?: string; q?: string }) {
    const page = pageOf(query);
    const q = query.q?.trim().toLowerCase();
    const where = and(
      eq(suppressions.orgId, scope.orgId),
      query.channel ? eq(suppressions.channel, query.channel) : undefined,
      q ? sql`${suppressions.address} like ${`%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}` : undefined,
    );
    const [items, [count]] = await Promise.all([
      this.ctx.db.select().from(suppressions).where(where).orderBy(desc(suppressions.createdAt), desc(suppressions.id)).limit(page.limit).offset(page.offset),
      this.ctx.db
        .select({ n: sql<number>`count(*)::int` })
        .from(suppressions)
        .where(where),
    ]);
    return envelope(items.map(publicSuppression), count?.n ?? 0, page);
  }

  async addSuppression(scope: Scope, input: { channel: string; address: string; reason?: string }) {
    const address = normalAddress(input.channel, input.address);
    if (!address) throw badRequest('address is empty', [{ field: 'body.address', message: 'must not be empty' }]);
    const [row] = await this.ctx.db
      .insert(suppressions)
      .values({ id: newId('suppression'), orgId: scope.orgId, channel: input.channel, address, reason: input.reason ?? 'manual' })
      .onConflictDoUpdate({ target: [suppressions.orgId, suppressions.channel, suppressions.address], set: { reason: input.reason ?? 'manual' } })
      .returning();
    return publicSuppression(row!);
  }

  async deleteSuppression(scope: Scope, id: string): Promise<void> {
    const gone = await this.ctx.db
      .delete(suppressions)
      .where(and(eq(suppressions.orgId, scope.orgId), eq(suppressions.id, id)))
      .returning({ id: suppressions.id });
    if (!gone.length) throw notFound('Suppression');
  }

  private async leadOf(scope: Scope, leadId: string): Promise<LeadRow> {
    const lead = await leadInScope(this.ctx.db, scope, leadId);
    if (!lead) throw notFound('Lead');
    return lead;
  }

  async listConsents(scope: Scope, leadId: string) {
    await this.leadOf(scope, leadId);
    const items = await this.ctx.db
      .select()
      .from(leadConsents)
      .where(and(eq(leadConsents.orgId, scope.orgId), eq(leadConsents.leadId, leadId)))
      .orderBy(desc(leadConsents.createdAt), desc(leadConsents.id))
      .limit(500);
    return { items: items.map(publicConsent) };
  }

  async addConsent(scope: Scope, leadId: string, input: { channel: string; status: string; source?: string; text?: string }) {
    await this.leadOf(scope, leadId);
    const [row] = await this.ctx.db
      .insert(leadConsents)
      .values({
        id: newId('consent'),
        orgId: scope.orgId,
        leadId,
        channel: input.channel,
        status: input.status,
        source: input.source ?? null,
        text: input.text ?? null,
        createdAt: this.ctx.clock.now(),
      })
      .returning();
    return publicConsent(row!);
  }
}

/**
 * The claimed recipients who must not be sent to now, and why: a suppression of their address on
 * the channel or an opt-out (SUPPRESSED), or — WhatsApp — no opt-in (NO_OPT_IN). Checked at every send.
 */
export async function blockedAddresses(tx: Db, row: CampaignRow, claimed: RecipientRow[]): Promise<Map<string, string>> {
  const found = await rows<{ id: string; block: string | null }>(
    tx,
    sql`
    select r.id, case
      when exists (select 1 from ${suppressions} s where s.org_id = ${row.orgId} and s.channel = ${row.channel} and s.address = r.address)
        or k.status = 'opted_out' then 'SUPPRESSED'
      when ${row.channel} = 'whatsapp' and coalesce(k.status, '') <> 'opted_in' then 'NO_OPT_IN'
    end as block
    from ${campaignRecipients} r
    left join lateral (select status from ${leadConsents} c where c.lead_id = r.lead_id and c.channel = ${row.channel} order by c.created_at desc, c.id desc limit 1) k on true
    where r.id = any(${sql.param(claimed.map((r) => r.id))}::text[])`,
  );
  return new Map(found.filter((f) => f.block).map((f) => [f.id, f.block!]));
}

function publicSuppression(row: typeof suppressions.$inferSelect) {
  return { id: row.id, channel: row.channel, address: row.address, reason: row.reason, createdAt: row.createdAt };
}

function publicConsent(row: typeof leadConsents.$inferSelect) {
  return { id: row.id, leadId: row.leadId, channel: row.channel, status: row.status, source: row.source, text: row.text, createdAt: row.createdAt };
}
