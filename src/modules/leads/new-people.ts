import { isForeignKeyViolation, type Database } from '../../platform/db.ts';
import { outboxCtes, outboxParam, type EventRow } from '../events/index.ts';
import type { MatchKind } from './normalize.ts';
import type { leads } from './tables.ts';

/** A lead as stored, without the search text the database derives from it. */
export type LeadRow = Omit<typeof leads.$inferSelect, 'search'>;

/** A lead to create as a new person: its row, its de-duplication keys, their advisory lock ids and its lead.created event. */
export interface NewPerson {
  row: LeadRow;
  keys: { kind: MatchKind; key: string }[];
  locks: bigint[];
  event: EventRow;
}

/**
 * New people in one autocommitted statement of fixed text (prepared once per connection), for any
 * number of them: take every key's advisory lock ($1, sorted, each once), claim the keys ($2–$6,
 * one entry per key) and insert each lead all of whose keys were free ($7, with the number of keys it
 * carries) with its lead.created event ($8, each naming its lead; written by the events module's
 * CTEs; no NOTIFY: this instance's dispatcher is woken after the commit). Every key a lead carries
 * has a claim (see lead_keys), so a free claim means no lead carries the key; reading the claims'
 * primary key rather than the leads keeps the one generic plan cheap whatever the statistics say. A
 * concurrent create of the same person inserting the same claim makes this one wait for it and then
 * find the key taken. A person whose keys were taken only in part leaves claims naming a lead that
 * was not inserted: their foreign key fails and the whole statement is undone.
 */
const CREATE_NEW_PEOPLE = `
  with c as (
    insert into lead_keys (project_id, kind, key, org_id, lead_id)
    select k.project_id, k.kind, k.key, k.org_id, k.lead_id
    from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) as k(project_id, kind, key, org_id, lead_id)
    -- evaluated once, before the first claim: the locks, in the array's (sorted) order
    where (select count(pg_advisory_xact_lock(l)) from unnest($1::bigint[]) as l) >= 0
    on conflict do nothing returning lead_id),
  ins as (
    insert into leads (id, org_id, project_id, name, email, phone, company, website, source, status, tags, custom, email_key, phone_key, website_key, created_at, updated_at)
    select r.id, r.org_id, r.project_id, r.name, r.email, r.phone, r.company, r.website, r.source, r.status, r.tags, r.custom, r.email_key, r.phone_key, r.website_key, r.created_at, r.created_at
    from jsonb_to_recordset($7::jsonb) as r(id text, org_id text, project_id text, name text, email text, phone text, company text, website text, source text, status text,
      tags text[], custom jsonb, email_key text, phone_key text, website_key text, created_at timestamptz, keys int)
    where r.keys = (select count(*) from c where c.lead_id = r.id)
    returning id),
  ${outboxCtes({ json: '$8', each: 'ins' })}
  select id from ins`;

/**
 * Advisory lock ids in the one order every writer of lead keys takes them (ascending, each once, as
 * text for a bigint[] parameter): two writers then never wait on each other in a cycle.
 */
export function lockOrder(locks: bigint[]): string[] {
  return [...new Set(locks)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map(String);
}

/** Statements of new people in flight at once; more requests meanwhile wait and go together in the next one. */
const STATEMENTS = 4;
/** People in one statement at most. */
const BATCH = 100;

interface Waiting {
  person: NewPerson;
  resolve: (inserted: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes new people, batching the creates that arrive together (group commit). A create goes out at
 * once while fewer than STATEMENTS are in flight; under load the creates that arrive meanwhile share
 * the next statement, so its fixed costs (a round trip, the executor's start over five writes and
 * the nineteen indexes of four tables, the foreign-key checks' set-up, a commit and its WAL flush)
 * are paid once for all of them: five people in one statement cost the database about twice what
 * one costs alone (pgbench on the real schema: 0.85 ms of PostgreSQL CPU against 0.40).
 *
 * Each person still gets its own answer: inserted, or not (a key is claimed: the caller merges the
 * locked way). Two people sharing a key never go in one statement (the later one waits for the next),
 * so one person's claims cannot stand in another's way inside a statement; across statements the
 * advisory locks order them, as they order single creates. A statement that fails — a person's keys
 * taken in part, or a row the database refuses — is retried one person at a time, so that each
 * answer (and each error) lands on its own request and nothing of the others is lost.
 */
export class NewPeopleWriter {
  private readonly database: Database;
  private queue: Waiting[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(database: Database) {
    this.database = database;
  }

  /** True when the lead was inserted with its event; false when a key of it was claimed already. */
  write(person: NewPerson): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ person, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= STATEMENTS || this.queue.length === 0) return;
    this.scheduled = true;
    // After this turn's I/O, so the creates whose requests arrived together go out together.
    setImmediate(() => {
      this.scheduled = false;
      while (this.inFlight < STATEMENTS && this.queue.length > 0) {
        const batch = this.take();
        this.inFlight++;
        void this.run(batch).finally(() => {
          this.inFlight--;
          this.schedule();
        });
      }
    });
  }

  /** The next statement's people: in arrival order, skipping (for a later statement) any that shares a lock with one taken. */
  private take(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const taken = new Set<bigint>();
    for (const waiting of this.queue) {
      if (batch.length >= BATCH || waiting.person.locks.some((l) => taken.has(l))) {
        rest.push(waiting);
        continue;
      }
      for (const l of waiting.person.locks) taken.add(l);
      batch.push(waiting);
    }
    this.queue = rest;
    return batch;
  }

  private async run(batch: Waiting[]): Promise<void> {
    try {
      const inserted = await this.insert(batch.map((w) => w.person));
      for (const w of batch) w.resolve(inserted.has(w.person.row.id));
    } catch (error) {
      if (batch.length > 1) {
        await Promise.all(batch.map((w) => this.run([w])));
        return;
      }
      // Some keys were claimed but the lead was not inserted: the claims' reference to it failed and
      // the statement was undone. The person exists; the caller merges the locked way.
      if (isForeignKeyViolation(error)) batch[0]!.resolve(false);
      else batch[0]!.reject(error);
    }
  }

  private async insert(people: NewPerson[]): Promise<Set<string>> {
    const keys = people.flatMap((p) => p.keys.map((k) => ({ ...k, row: p.row })));
    const rows = people.map(({ row, keys: own }) => ({
      id: row.id,
      org_id: row.orgId,
      project_id: row.projectId,
      name: row.name,
      email: row.email,
      phone: row.phone,
      company: row.company,
      website: row.website,
      source: row.source,
      status: row.status,
      tags: row.tags,
      custom: row.custom,
      email_key: row.emailKey,
      phone_key: row.phoneKey,
      website_key: row.websiteKey,
      created_at: row.createdAt,
      keys: own.length,
    }));
    const result = await this.database.prepared<{ id: string }>('lead_create_new_people', CREATE_NEW_PEOPLE, [
      lockOrder(people.flatMap((p) => p.locks)),
      keys.map((k) => k.row.projectId),
      keys.map((k) => k.kind),
      keys.map((k) => k.key),
      keys.map((k) => k.row.orgId),
      keys.map((k) => k.row.id),
      JSON.stringify(rows),
      outboxParam(
        people.map((p) => p.event),
        people.map((p) => p.row.id),
      ),
    ]);
    return new Set(result.map((r) => r.id));
  }
}
