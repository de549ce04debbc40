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
    db
      .select()
      .from(events)
      .where(about)
      .orderBy(sql`${events.id} desc`)
      .limit(page.limit)
      .offset(page.offset),
    db
      .select({ n: sql<number>`count(*)::int` })
      .from(events)
      .where(about),
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

/** What a statement of another module reads of the events of an organization (the stats). */
export interface EventsInRange {
  orgId: string;
  types: string[];
  /** [from, to), ISO instants. */
  from: string;
  to: string;
  /** Only this project's events; null: all of the organization's. */
  projectId: string | null;
  /** true: the events the dispatcher has handed out (no longer in the outbox); false: those still in it. */
  dispatched: boolean;
}

/**
 * A subquery of an organization's events of some types in a range, dispatched or still in the
 * outbox: rows of `type`, `at` and `n` (1), for a statement that counts them per bucket (the stats,
 * which read the dispatched events only at the edges of the range and the others throughout).
 */
export function eventsInRange(q: EventsInRange): SQL {
  const types = sql.join(
    q.types.map((t) => sql`${t}`),
    sql`, `,
  );
  const project = q.projectId ? sql` and project_id = ${q.projectId}` : sql``;
  return q.dispatched
    ? sql`
        select type, at, 1 as n from events
        where org_id = ${q.orgId} and type in (${types}) and at >= ${q.from}::timestamptz and at < ${q.to}::timestamptz
          and id not in (select id from event_outbox)${project}`
    : sql`
        select type, at, 1 as n from events
        where id in (select id from event_outbox) and org_id = ${q.orgId} and type in (${types})
          and at >= ${q.from}::timestamptz and at < ${q.to}::timestamptz${project}`;
}

/**
 * A query of an organization's dispatched events counted per project ('' for none), type and UTC
 * hour: rows of `org_id`, `project_id`, `type`, `hour` and `n`, in that order (the stats' recount
 * inserts them as they come).
 */
export function dispatchedEventsPerHour(orgId: string): SQL {
  return sql`
          select org_id, coalesce(project_id, '') as project_id, type, date_trunc('hour', at, 'UTC') as hour, count(*) as n
          from events where org_id = ${orgId} and id not in (select id from event_outbox)
          group by 1, 2, 3, 4`;
}

/**
 * A subquery of the one event whose id is `id` (an SQL expression of the outer statement), every
 * column: for a `left join lateral (…) ev on true` that looks each event up by its primary key (the
 * webhook deliverer's claim, which reads a batch's events with its deliveries in one statement).
 */
export function eventById(id: SQL): SQL {
  return sql`select * from events where events.id = ${id}`;
}
