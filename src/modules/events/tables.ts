import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { ts } from '../../platform/columns.ts';

/**
 * Platform events: each is written in the same transaction as the change it describes, in the SPEC
 * envelope shape, and never changed afterwards.
 */
export const events = pgTable(
  'events',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id'),
    type: text('type').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    at: ts('at').notNull(),
  },
  (t) => [
    index('events_org_type_at_idx').on(t.orgId, t.type, t.at),
    // A lead's history (GET …/leads/:id/events): events that carry the lead, or name it by leadId.
    index('events_lead_idx')
      .on(sql`(coalesce(${t.payload}->'lead'->>'id', ${t.payload}->>'leadId'))`, t.id)
      .where(sql`(${t.payload} ? 'lead' or ${t.payload} ? 'leadId')`),
    // Whether a lead was sent outreach (conversationsMessagedForLead): one probe of its message.sent
    // events, not a walk of its whole history (every inbound message of the lead adds to that).
    index('events_sent_lead_idx')
      .on(sql`(coalesce(${t.payload}->'lead'->>'id', ${t.payload}->>'leadId'))`, t.at)
      .where(sql`${t.type} = 'message.sent' and (${t.payload} ? 'lead' or ${t.payload} ? 'leadId')`),
  ],
);

/**
 * The transactional outbox: the ids of events not yet dispatched, written with each event and
 * deleted by the dispatcher in the transaction that fans the event out. Marking the event row
 * instead rewrote every event (payload and all) and two of its index entries once more.
 */
export const eventOutbox = pgTable('event_outbox', {
  id: text('id').primaryKey(),
});
