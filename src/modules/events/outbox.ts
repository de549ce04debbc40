import { sql, type SQL } from 'drizzle-orm';
import { newId } from '../../platform/ids.ts';
import type { events } from './tables.ts';

/**
 * The one writer of platform events. Every statement that records events — EventsService.record,
 * the lead create statement, the run writer's statement — composes the same two CTEs, so an event
 * cannot be written without its outbox entry (the dispatcher finds work only through the outbox):
 *
 *   new_events  inserts the events;
 *   new_outbox  inserts their outbox entries, `returning 1` (a caller may select from it, e.g. to
 *               NOTIFY only when something was written).
 *
 * They are text, not a query object, so that statements of fixed text (prepared once per
 * connection, see Database.prepared) can embed them (outboxCtes); outboxSql gives the same CTEs with
 * the rows bound, for Drizzle statements. Only where the rows come from differs, and each source is
 * the cheapest one for its statement: on the embedded store every statement is planned anew, and a
 * subquery more costs there on each request. A statement composing them must not name its own CTEs
 * `new_events` or `new_outbox`.
 */

export interface NewEvent {
  orgId: string;
  projectId?: string | null;
  type: string;
  payload: Record<string, unknown>;
}

export type EventRow = typeof events.$inferSelect;

const HEAD = 'new_events as (\n    insert into events (id, org_id, project_id, type, payload, at)\n    ';
const TAIL = '\n    returning id),\n  new_outbox as (insert into event_outbox (id) select id from new_events returning 1)';

/** Placeholders (`$n`) of one event's columns, in a statement of fixed text. */
export interface EventPlaceholders {
  id: string;
  orgId: string;
  projectId: string;
  type: string;
  /** jsonb text */
  payload: string;
  /** timestamptz text */
  at: string;
}

/**
 * Where a statement of fixed text takes its events from:
 *  - `json`: the placeholder of a jsonb array of any number of events (outboxParam); with `when`,
 *    the name of a CTE of the statement returning at most one row: the events are written only if
 *    it returned one (the change they describe happened); with `also`, more events from a second
 *    such placeholder, written only if its own CTE `when` returned a row (a consequence the
 *    statement itself decides, e.g. that an inbound message is a reply);
 *    With `each` instead, the name of a CTE returning rows with an `id`: each event names its row
 *    (`subject`, see outboxParam) and is written only if that row was returned (a batch of writes,
 *    each with its own event, where only some happen);
 *  - `one`: one event, a placeholder per column, written once per row of the CTE `from` (which
 *    returns at most one).
 */
export type OutboxSource =
  { json: string; when?: string; also?: { json: string; when: string } } | { json: string; each: string } | { one: EventPlaceholders; from: string };

const placeholder = (p: string) => {
  if (!/^\$\d+$/.test(p)) throw new Error(`outboxCtes: ${p} is not a placeholder`);
  return p;
};
const cteName = (name: string) => {
  if (!/^[a-z_]+$/.test(name)) throw new Error(`outboxCtes: ${name} is not a CTE name`);
  return name;
};

/** The CTEs for a statement of fixed text. */
export function outboxCtes(source: OutboxSource): string {
  // The events' columns from a jsonb array parameter (with `subject`: the row each one describes).
  const records = (json: string, subject = false) => `jsonb_to_recordset(${placeholder(json)}::jsonb)
      as e(id text, org_id text, project_id text, type text, payload jsonb, at timestamptz${subject ? ', subject text' : ''})`;
  const select = 'select e.id, e.org_id, e.project_id, e.type, e.payload, e.at';
  if ('each' in source) {
    const each = cteName(source.each);
    return `${HEAD}${select}\n    from ${records(source.json, true)} join ${each} on ${each}.id = e.subject${TAIL}`;
  }
  if ('json' in source) {
    const from = (json: string, when?: string) => `${select}\n    from ${when ? `${cteName(when)}, ` : ''}${records(json)}`;
    const also = source.also ? `\n    union all ${from(source.also.json, source.also.when)}` : '';
    return `${HEAD}${from(source.json, source.when)}${also}${TAIL}`;
  }
  const e = source.one;
  return `${HEAD}select ${placeholder(e.id)}::text, ${placeholder(e.orgId)}::text, ${placeholder(e.projectId)}::text, ${placeholder(e.type)}::text, ${placeholder(e.payload)}::jsonb, ${placeholder(e.at)}::timestamptz from ${cteName(source.from)}${TAIL}`;
}

/** The same CTEs with the rows bound, for a Drizzle statement (`with ${outboxSql(rows)} select …`). */
export function outboxSql(rows: EventRow[]): SQL {
  const values = rows.map(
    (r) => sql`(${r.id}, ${r.orgId}, ${r.projectId}, ${r.type}, ${JSON.stringify(r.payload)}::jsonb, ${r.at.toISOString()}::timestamptz)`,
  );
  return sql`${sql.raw(HEAD)}values ${sql.join(values, sql`, `)}${sql.raw(TAIL)}`;
}

/**
 * The value of a `json` source's parameter; with `subjects` (an `each` source), the id of the row
 * each event describes. Dates inside payloads become ISO strings, exactly as the API shows them.
 */
export function outboxParam(rows: EventRow[], subjects?: string[]): string {
  return JSON.stringify(
    rows.map((r, i) => ({
      id: r.id,
      org_id: r.orgId,
      project_id: r.projectId,
      type: r.type,
      payload: r.payload,
      at: r.at,
      ...(subjects ? { subject: subjects[i] } : {}),
    })),
  );
}

/** Event rows to write: ids and the time fixed now, so a caller knows them before its statement runs. */
export function eventRows(list: NewEvent[], at: Date): EventRow[] {
  return list.map((e) => ({ id: newId('event', at.getTime()), orgId: e.orgId, projectId: e.projectId ?? null, type: e.type, payload: e.payload, at }));
}
