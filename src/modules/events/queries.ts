import { sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { Db } from '../../platform/db.ts';
import type { Page } from '../../platform/http/pagination.ts';
import { toEnvelope, type PlatformEvent } from './service.ts';
import { events } from './tables.ts';

/**
 * A lead's history: the platform events of an organization that carry the lead (`lead`) or name it
 * (`leadId`), newest first, and how many there are. Read through events_lead_idx, whose expression
 * and predicate this repeats exactly.
 */
export async function eventsAboutLead(db: Db, orgId: string, leadId: string, page: Page): Promise<{ rows: PlatformEvent[]; total: number }> {
  const about = sql`${events.orgId} = ${orgId} and (${events.payload} ? 'lead' or ${events.payload} ? 'leadId')
    and coalesce(${events.payload}->'lead'->>'id', ${events.payload}->>'leadId') = ${leadId}`;
  const [rows, [count]] = await Promise.all([
    db.select().from(events).where(about).orderBy(sql`${events.id} desc`).limit(page.limit).offset(page.offset),
    db.select({ n: sql<number>`count(*)::int` }).from(events).where(about),
  ]);
  return { rows: rows.map(toEnvelope), total: count!.n };
}

/**
 * A subquery: the conversation ids of a lead's `message.sent` events from the given senders before
 * `before` (the conversations module asks whether the lead was sent outreach). Read through
 * events_sent_lead_idx, whose expression and predicate this repeats exactly.
 */
export function conversationsMessagedForLead(orgId: string | Placeholder, leadId: string | SQL, senders: string[], before: Date | string | Placeholder): SQL {
  const at = before instanceof Date ? before.toISOString() : before;
  return sql`select ${events.payload}->>'conversationId' from ${events} where ${events.orgId} = ${orgId} and (${events.payload} ? 'lead' or ${events.payload} ? 'leadId')
    and coalesce(${events.payload}->'lead'->>'id', ${events.payload}->>'leadId') = ${leadId} and ${events.type} = 'message.sent'
    and ${events.payload}->>'sender' = any(${sql.param(senders)}::text[]) and ${events.at} < ${at}::timestamptz`;
}
