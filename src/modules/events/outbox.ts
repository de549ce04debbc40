import { sql, type SQL } from 'drizzle-orm';
import { newId } from '../../platform/ids.ts';
import type { events } from './tables.ts';

/**
 * The one writer of platform events. Every statement that records events — EventsService.record,
 * the lead create statement, the run writer's statement — composes the same two CTEs, so an event
 * cannot be written without its outbox entry (the dispatcher finds work only through the outbox):
 *
 *   new_events  inserts the events, given as one jsonb array (outboxParam);
 *   new_outbox  inserts their outbox entries, `returning 1` (a caller may select from it, e.g. to
 *               NOTIFY only when something was written).
 *
 * It is text, not a query object, so that statements of fixed text (prepared once per connection,
 * see Database.prepared) can embed it; outboxSql gives the same text with its parameter bound, for
 * Drizzle statements. A statement composing it must not name its own CTEs `new_events` or `new_outbox`.
 */

export interface NewEvent {
  orgId: string;
  projectId?: string | null;
  type: string;
  payload: Record<string, unknown>;
}

export type EventRow = typeof events.$inferSelect;

const HEAD = `new_events as (
    insert into events (id, org_id, project_id, type, payload, at)
    select e.id, e.org_id, e.project_id, e.type, e.payload, e.at
    from jsonb_to_recordset(`;

function tail(when?: string): string {
  // `where exists`: written only when the named CTE returned a row (the change they describe happened).
  return `) as e(id text, org_id text, project_id text, type text, payload jsonb, at timestamptz)${when ? `
    where exists (select 1 from ${when})` : ''}
    returning id),
  new_outbox as (insert into event_outbox (id) select id from new_events returning 1)`;
}

/**
 * The CTEs for a statement of fixed text: `param` is the placeholder of the events' jsonb array
 * (e.g. `$11`), `when` the name of a CTE of the statement that must return a row for them to be written.
 */
export function outboxCtes(param: string, options: { when?: string } = {}): string {
  if (!/^\$\d+$/.test(param)) throw new Error(`outboxCtes: ${param} is not a placeholder`);
  if (options.when && !/^[a-z_]+$/.test(options.when)) throw new Error(`outboxCtes: ${options.when} is not a CTE name`);
  return `${HEAD}${param}::jsonb${tail(options.when)}`;
}

/** The same CTEs with the events bound, for a Drizzle statement (`with ${outboxSql(rows)} select …`). */
export function outboxSql(rows: EventRow[]): SQL {
  return sql`${sql.raw(HEAD)}${outboxParam(rows)}::jsonb${sql.raw(tail())}`;
}

/** The value of the CTEs' parameter. Dates inside payloads become ISO strings, exactly as the API shows them. */
export function outboxParam(rows: EventRow[]): string {
  return JSON.stringify(rows.map((r) => ({ id: r.id, org_id: r.orgId, project_id: r.projectId, type: r.type, payload: r.payload, at: r.at })));
}

/** Event rows to write: ids and the time fixed now, so a caller knows them before its statement runs. */
export function eventRows(list: NewEvent[], at: Date): EventRow[] {
  return list.map((e) => ({ id: newId('event', at.getTime()), orgId: e.orgId, projectId: e.projectId ?? null, type: e.type, payload: e.payload, at }));
}
