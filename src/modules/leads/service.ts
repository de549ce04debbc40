import { createHash } from 'node:crypto';
import { asc, desc, eq, gte, inArray, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { withoutBitmapScans, transaction, type Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import { agentRunOf, type Scope } from '../../platform/context.ts';
import { inScope } from '../../platform/tenant.ts';
import type { EventsService, NewEvent } from '../events/service.ts';
import { eventRows, type EventRow } from '../events/outbox.ts';
import type { OrgsService } from '../orgs/service.ts';
import { normalizeEmail, LEAD_STATUSES, normalizeWebsite, phoneE164, type LeadStatus, type MatchKind } from './normalize.ts';
import { leads } from './tables.ts';

/** Lists count their matches exactly up to this many; above it `total` is an estimate (CONTRACT §3). */
const EXACT_TOTAL = 10_000;
/**
 * Above this estimate a capped count scans in order instead of building a bitmap of every match:
 * a scan reads about leads × EXACT_TOTAL / matches rows, a bitmap every match, and at a million
 * leads the two cost the same at a few hundred thousand matches.
 */
const SCAN_OVER = 200_000;
import { eventsAboutLead } from '../events/queries.ts';
import { LeadImporter, type ImportResult, type Turn } from './import.ts';
import { lockOrder, NewPeopleWriter, type LeadRow } from './new-people.ts';
import type { PlansService } from '../plans/service.ts';

/** Lead writes wake the dispatcher after their commit instead of carrying a NOTIFY (see EventsService.record). */
const CALLER_WAKES = { wake: 'caller' } as const;

export interface LeadInput {
  projectId?: string;
  name?: string;
  email?: string;
  phone?: string;
  company?: string;
  website?: string;
  source?: string;
  tags?: string[];
  custom?: Record<string, unknown>;
}

export interface LeadPatch {
  projectId?: string;
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  company?: string | null;
  website?: string | null;
  source?: string | null;
  tags?: string[];
  custom?: Record<string, unknown>;
  status?: LeadStatus;
  score?: number;
  scoreReason?: string | null;
}

export interface LeadListQuery extends ListQuery {
  status?: string;
  minScore?: number;
  tags?: string;
  projectId?: string;
  source?: string;
}

export type BulkAction = 'tag' | 'untag' | 'setStatus' | 'delete';

export function publicLead(row: LeadRow) {
  return {
    id: row.id,
    projectId: row.projectId,
    name: row.name,
    email: row.email,
    phone: row.phone,
    company: row.company,
    website: row.website,
    source: row.source,
    status: row.status,
    score: row.score,
    scoreReason: row.scoreReason,
    tags: row.tags,
    custom: row.custom,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
export type Lead = ReturnType<typeof publicLead>;

type SortKey = 'createdAt' | 'updatedAt' | 'name' | 'email' | 'company' | 'score' | 'status';
function sortableOf<T extends Record<SortKey, AnyColumn>>(t: T): Pick<T, SortKey> {
  return { createdAt: t.createdAt, updatedAt: t.updatedAt, name: t.name, email: t.email, company: t.company, score: t.score, status: t.status };
}
const SORTABLE = sortableOf(leads);

/**
 * A lead list's order: the sort field, then the newest (or, ascending, the oldest) first among equal
 * values, then the id. Every sort index is (org_id, field, created_at, id) in this same order, so
 * that an index serves both a sort by its field and an equality filter on it in the default order
 * (status = QUALIFIED, newest first, is a walk of twenty index entries).
 */
function leadOrder<T extends Record<SortKey, AnyColumn> & { id: AnyColumn }>(sort: string | undefined, t: T): SQL[] {
  const [first, second] = orderBy(sort, sortableOf(t), '-createdAt', t.id);
  if (first === undefined || second === undefined) throw new Error('unreachable: orderBy gives two terms');
  const descending = (sort && sort.length > 0 ? sort : '-createdAt').startsWith('-');
  const field = (sort && sort.length > 0 ? sort : '-createdAt').replace(/^-/, '');
  if (field === 'createdAt') return [first, second];
  return [first, descending ? desc(t.createdAt) : asc(t.createdAt), second];
}

const FIELDS = ['name', 'email', 'phone', 'company', 'website', 'source', 'status', 'score', 'scoreReason', 'tags', 'custom', 'projectId'] as const;
type Field = (typeof FIELDS)[number];
type Changes = Record<string, { from: unknown; to: unknown }>;

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function diff(before: LeadRow, after: Partial<LeadRow>): Changes {
  const changes: Changes = {};
  for (const field of FIELDS) {
    if (!(field in after)) continue;
    const to = after[field as Field];
    if (!same(before[field as Field], to)) changes[field] = { from: before[field as Field] ?? null, to: to ?? null };
  }
  return changes;
}

function uniq(values: string[]): string[] {
  return [...new Set(values.map((t) => t.trim()).filter(Boolean))];
}

/** A 64-bit advisory lock key for one de-duplication key inside a project. */
function lockKey(projectId: string, kind: MatchKind, value: string): bigint {
  return createHash('sha256').update(`${projectId}\u0000${kind}\u0000${value}`).digest().readBigInt64BE(0);
}

/** The advisory lock ids of a project's keys. */
function locksOf(projectId: string, keys: { kind: MatchKind; key: string }[]): bigint[] {
  return keys.map(({ kind, key }) => lockKey(projectId, kind, key));
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => '\\' + c);
}

/**
 * The conditions of a `q` search over the stored `search` text: the one the trigram index answers,
 * and, when that one is only part of the pattern, the whole pattern checked on the rows it gives.
 * The trigram index reads a posting list per trigram of the pattern, and a short word's trigrams
 * (`com`, ` co`, `inc`: top-level domains, legal forms) are in most leads: looking them up cost
 * ten times the rest of "acmerobotics.com". So when the pattern has words of four characters or
 * more, only those go to the index, and the full pattern is checked on an expression the index does
 * not serve (`search || ''`), so the planner cannot take it back to the index. Several words go to
 * the index one by one for the same reason: the whole of "acme robotics" also looks up the trigrams
 * at its word boundaries (`me `, `  r`, ` ro`: every word starting with "r"), a third of its cost.
 */
export function searchConditions(q: string): { indexed: SQL; recheck?: SQL } {
  // Lower-cased by the database, as the stored text is (its lower() and JavaScript's differ on a few letters).
  const pattern = q.trim();
  const like = (text: string) => sql`lower(${`%${escapeLike(text)}%`})`;
  const whole = sql`${leads.search} like ${like(pattern)}`;
  // pg_trgm's words: runs of letters and digits.
  const words = pattern.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  const long = words.filter((w) => w.length >= 4);
  if (long.length === 0 || (long.length === words.length && words.length === 1)) return { indexed: whole };
  const indexed = sql.join(long.map((w) => sql`${leads.search} like ${like(w)}`), sql` and `);
  return { indexed: sql`(${indexed})`, recheck: sql`(${leads.search} || '') like ${like(pattern)}` };
}

interface Keys {
  emailKey?: string | null;
  phoneKey?: string | null;
  websiteKey?: string | null;
}

/** The keys present, in match priority: email, then phone, then website. */
function presentKeys(keys: Keys): { kind: MatchKind; key: string }[] {
  const out: { kind: MatchKind; key: string }[] = [];
  for (const kind of ['email', 'phone', 'website'] as const) {
    const key = keys[`${kind}Key`];
    if (key) out.push({ kind, key });
  }
  return out;
}

const KEY_COLUMNS = { email: leads.emailKey, phone: leads.phoneKey, website: leads.websiteKey };

/** A lead carrying any of the keys (callers check that at least one is present). */
function matchesAny(keys: Keys): SQL {
  return or(...presentKeys(keys).map(({ kind, key }) => eq(KEY_COLUMNS[kind], key)))!;
}

export class LeadsService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly events: EventsService;
  private readonly orgs: OrgsService;
  private readonly importer: LeadImporter;
  private readonly newPeople: NewPeopleWriter;
  /** The plan's leads limit (CONTRACT §12). */
  private readonly plans: Pick<PlansService, 'enabled' | 'limitOf' | 'assertRoom'> | null;

  constructor(deps: Deps, events: EventsService, orgs: OrgsService, plans?: Pick<PlansService, 'enabled' | 'limitOf' | 'assertRoom'>) {
    this.plans = plans ?? null;
    this.db = deps.db;
    this.clock = deps.clock;
    this.events = events;
    this.orgs = orgs;
    this.importer = new LeadImporter(deps.db, this, orgs, deps.database.kind);
    this.newPeople = new NewPeopleWriter(deps.database);
  }

  /** Up to 10,000 rows, each de-duplicated as a single create; `dryRun` only counts; `signal` stops it between chunks. */
  import(scope: Scope, rows: unknown[], dryRun: boolean, signal?: AbortSignal): Promise<ImportResult & { stoppedAfter?: number }> {
    return this.importer.import(scope, rows, dryRun, signal);
  }

  /** A lead's history: the platform events that carry it or name it, newest first. */
  async history(scope: Scope, id: string, query: ListQuery) {
    await this.get(scope, id);
    const page = pageOf(query);
    const { rows, total } = await eventsAboutLead(this.db, scope.orgId, id, page);
    return envelope(rows, total, page);
  }

  private async resolveProject(scope: Scope, projectId: string | undefined): Promise<string> {
    return (await this.orgs.projectFor(scope, projectId)) ?? this.orgs.defaultProjectId(scope.orgId);
  }

  /** Serializes every writer that could create or claim the same person in a project. */
  private async lockKeys(tx: Db, projectId: string, keys: Keys): Promise<void> {
    const ids = lockOrder(locksOf(projectId, presentKeys(keys)));
    if (ids.length === 0) return;
    // One statement; unnest yields the keys in the sorted order given.
    await tx.execute(sql`select pg_advisory_xact_lock(k) from unnest(${sql.param(ids)}::bigint[]) with ordinality as t(k, n) order by n`);
  }

  private keyValues(row: { orgId: string; projectId: string; id: string }, keys: Keys): SQL[] {
    return presentKeys(keys).map(({ kind, key }) => sql`(${row.projectId}, ${kind}, ${key}, ${row.orgId}, ${row.id})`);
  }

  /** Claims the keys for a lead that now carries them (a key claimed before stays with its first lead). */
  private async claimKeys(tx: Db, row: { orgId: string; projectId: string; id: string }, keys: Keys): Promise<void> {
    const values = this.keyValues(row, keys);
    if (values.length) await tx.execute(sql`insert into lead_keys (project_id, kind, key, org_id, lead_id) values ${sql.join(values, sql`, `)} on conflict do nothing`);
  }

  /** A new person, in a statement it may share with other creates (NewPeopleWriter). False means "not created here": the caller goes the locked way and merges. */
  private async createNew(row: LeadRow, keys: Keys, event: NewEvent): Promise<boolean> {
    const present = presentKeys(keys);
    const [created] = eventRows([event], row.createdAt) as [EventRow];
    const inserted = await this.newPeople.write({ row, keys: present, locks: locksOf(row.projectId, present), event: created });
    if (inserted) this.events.wakeLocal();
    return inserted;
  }

  private async findMatch(tx: Db, orgId: string, projectId: string, keys: Keys, excludeId?: string): Promise<{ row: LeadRow; matchedOn: MatchKind } | null> {
    const present = presentKeys(keys);
    if (present.length === 0) return null;
    const found = await tx
      .select()
      .from(leads)
      .where(inScope({ orgId, projectId }, leads, matchesAny(keys), excludeId ? sql`${leads.id} <> ${excludeId}` : undefined))
      .orderBy(leads.id)
      .limit(20);
    for (const { kind, key } of present) {
      const row = found.find((r) => r[`${kind}Key`] === key);
      if (row) return { row, matchedOn: kind };
    }
    return null;
  }

  private normalizedContact(input: { email?: string | null; phone?: string | null; website?: string | null }) {
    const out: Partial<LeadRow> = {};
    if (input.email !== undefined) {
      const normalized = input.email === null ? null : normalizeEmail(input.email);
      out.email = normalized?.email ?? null;
      out.emailKey = normalized?.key ?? null;
    }
    if (input.phone !== undefined) {
      const e164 = input.phone === null ? null : phoneE164(input.phone);
      out.phone = e164;
      out.phoneKey = e164;
    }
    if (input.website !== undefined) {
      const site = input.website === null ? null : normalizeWebsite(input.website);
      out.website = site?.url ?? null;
      out.websiteKey = site?.host ?? null;
    }
    return out;
  }

  private updatedEvents(scope: Scope, before: LeadRow, after: LeadRow, changes: Changes): NewEvent[] {
    const lead = publicLead(after);
    const out: NewEvent[] = [{ orgId: scope.orgId, projectId: after.projectId, type: 'lead.updated', payload: { lead, changes, actor: scope.actor } }];
    if (changes.status && after.status === 'QUALIFIED' && before.status !== 'QUALIFIED') out.push(this.qualifiedEvent(scope, after));
    return out;
  }

  private qualifiedEvent(scope: Scope, row: LeadRow): NewEvent {
    const payload: Record<string, unknown> = { lead: publicLead(row), score: row.score, scoreReason: row.scoreReason };
    // An agent run qualifying a lead is named on lead.qualified.
    const agentRunId = agentRunOf(scope.actor);
    if (agentRunId) payload.agentRunId = agentRunId;
    return { orgId: scope.orgId, projectId: row.projectId, type: 'lead.qualified', payload };
  }

  /**
   * Creates a lead, or merges into the one person it matches inside the project (email, then phone,
   * then website). Advisory locks on the match keys make concurrent creates of one person yield one lead.
   * `lockedWay` makes the transaction (a merge, or a new person under a leads limit) wait for its
   * turn: an import's creates take a few connections at a time.
   */
  async create(scope: Scope, input: LeadInput, options: { lockedWay?: Turn } = {}): Promise<{ lead: Lead; created: boolean; matchedOn?: MatchKind }> {
    if (![input.name, input.email, input.phone, input.website].some((v) => typeof v === 'string' && v.trim() !== '')) {
      throw badRequest('A lead needs at least one of name, email, phone or website', [
        { field: 'body', message: 'must have at least one of name, email, phone, website' },
      ]);
    }
    const projectId = await this.resolveProject(scope, input.projectId);
    const contact = this.normalizedContact(input);
    const keys: Keys = { emailKey: contact.emailKey, phoneKey: contact.phoneKey, websiteKey: contact.websiteKey };
    const now = this.clock.now();
    const fresh: LeadRow = {
      id: newId('lead', now.getTime()), orgId: scope.orgId, projectId, name: input.name ?? null, email: null, phone: null,
      company: input.company ?? null, website: null, source: input.source ?? null, status: 'NEW', score: 0, scoreReason: null,
      tags: uniq(input.tags ?? []), custom: input.custom ?? {}, emailKey: null, phoneKey: null, websiteKey: null, createdAt: now, updatedAt: now,
      ...contact,
    };
    const created: NewEvent = { orgId: scope.orgId, projectId, type: 'lead.created', payload: { lead: publicLead(fresh), actor: scope.actor } };
    // Under a leads limit, a new person is counted under the organization's lock (assertRoom): the locked way.
    const limited = this.plans?.enabled === true && (await this.plans.limitOf(scope.orgId, 'leads')) !== null;
    if (!limited && await this.createNew(fresh, keys, created)) return { lead: publicLead(fresh), created: true };
    const locked = () => this.write(async (tx) => {
      // Holding the keys' locks, this sees every lead a concurrent create of the same person committed.
      await this.lockKeys(tx, projectId, keys);
      const match = await this.findMatch(tx, scope.orgId, projectId, keys);
      if (!match) {
        // The claim outlived its lead's value (changed or deleted), or none was tried: a new person.
        await this.plans?.assertRoom(tx, scope.orgId, 'leads');
        const [row] = await tx.insert(leads).values(fresh).returning();
        await this.claimKeys(tx, row!, keys);
        await this.events.record(tx, { orgId: scope.orgId, projectId, type: 'lead.created', payload: { lead: publicLead(row!), actor: scope.actor } }, CALLER_WAKES);
        return { lead: publicLead(row!), created: true };
      }
      const before = match.row;
      const next: Partial<LeadRow> = { ...contact };
      for (const field of ['name', 'company', 'source'] as const) if (input[field] !== undefined) next[field] = input[field];
      if (input.tags) next.tags = uniq([...before.tags, ...input.tags]);
      if (input.custom) next.custom = { ...before.custom, ...input.custom };
      const changes = diff(before, next);
      if (Object.keys(changes).length === 0) return { lead: publicLead(before), created: false, matchedOn: match.matchedOn };
      const [after] = await tx.update(leads).set({ ...next, updatedAt: now }).where(inScope(scope, leads, eq(leads.id, before.id))).returning();
      await this.claimKeys(tx, after!, { emailKey: after!.emailKey, phoneKey: after!.phoneKey, websiteKey: after!.websiteKey });
      await this.events.record(tx, this.updatedEvents(scope, before, after!, changes), CALLER_WAKES);
      return { lead: publicLead(after!), created: false, matchedOn: match.matchedOn };
    });
    return options.lockedWay ? options.lockedWay(locked) : locked();
  }

  /**
   * The lead a contact is (matched by the de-duplication keys, left unchanged), or a new one: for
   * channels linking their contacts, which must not overwrite an existing lead's name or source.
   */
  async findOrCreate(scope: Scope, input: LeadInput): Promise<{ lead: Lead; created: boolean }> {
    const projectId = await this.resolveProject(scope, input.projectId);
    const contact = this.normalizedContact(input);
    const match = await this.findMatch(this.db, scope.orgId, projectId, { emailKey: contact.emailKey, phoneKey: contact.phoneKey, websiteKey: contact.websiteKey });
    if (match) return { lead: publicLead(match.row), created: false };
    const { lead, created } = await this.create(scope, { ...input, projectId });
    return { lead, created };
  }

  /** A transaction whose events wake this instance's dispatcher once it has committed. */
  private async write<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
    const result = await transaction(this.db, fn);
    this.events.wakeLocal();
    return result;
  }

  async get(scope: Scope, id: string): Promise<Lead> {
    const [row] = await this.db.select().from(leads).where(inScope(scope, leads, eq(leads.id, id)));
    if (!row) throw notFound('Lead');
    return publicLead(row);
  }

  /**
   * A lead of the organization read through `db` — the caller's transaction, where the store must
   * not be read through the pool — or null: for an event that carries the lead as it is (`lead.replied`).
   */
  async find(db: Db, orgId: string, id: string): Promise<Lead | null> {
    const [row] = await db.select().from(leads).where(inScope({ orgId, projectId: null }, leads, eq(leads.id, id)));
    return row ? publicLead(row) : null;
  }

  async update(scope: Scope, id: string, patch: LeadPatch): Promise<Lead> {
    const contact = this.normalizedContact(patch);
    const targetProject = patch.projectId === undefined ? undefined : await this.resolveProject(scope, patch.projectId);
    return this.write(async (tx) => {
      const [before] = await tx.select().from(leads).where(inScope(scope, leads, eq(leads.id, id))).for('update');
      if (!before) throw notFound('Lead');
      const next: Partial<LeadRow> = { ...contact };
      for (const field of ['name', 'company', 'source', 'status', 'score', 'scoreReason'] as const) {
        if (patch[field] !== undefined) (next as Record<string, unknown>)[field] = patch[field];
      }
      if (patch.tags) next.tags = uniq(patch.tags);
      if (patch.custom) next.custom = { ...before.custom, ...patch.custom };
      if (targetProject) next.projectId = targetProject;
      const changes = diff(before, next);
      if (Object.keys(changes).length === 0) return publicLead(before);
      const projectId = targetProject ?? before.projectId;
      const keys: Keys = {
        emailKey: next.emailKey !== undefined ? next.emailKey : before.emailKey,
        phoneKey: next.phoneKey !== undefined ? next.phoneKey : before.phoneKey,
        websiteKey: next.websiteKey !== undefined ? next.websiteKey : before.websiteKey,
      };
      if (changes.email || changes.phone || changes.website || changes.projectId) {
        await this.lockKeys(tx, projectId, keys);
        const clash = await this.findMatch(tx, scope.orgId, projectId, keys, id);
        if (clash) throw conflict(`Another lead in this project has the same ${clash.matchedOn} (${clash.row.id})`);
      }
      const [after] = await tx.update(leads).set({ ...next, updatedAt: this.clock.now() }).where(inScope(scope, leads, eq(leads.id, id))).returning();
      if (changes.email || changes.phone || changes.website || changes.projectId) await this.claimKeys(tx, after!, keys);
      await this.events.record(tx, this.updatedEvents(scope, before, after!, changes), CALLER_WAKES);
      return publicLead(after!);
    });
  }

  async delete(scope: Scope, id: string): Promise<void> {
    const deleted = await transaction(this.db, (tx) => this.deleteLeads(tx, inScope(scope, leads, eq(leads.id, id))));
    if (deleted === 0) throw notFound('Lead');
  }

  /**
   * Deletes leads, and hands each of their claims (dropped with them) to another lead of the project
   * that carries the same key — a merge can leave two leads with one phone or website — so that every
   * carried key keeps a claim. Returns how many leads were deleted.
   */
  private async deleteLeads(tx: Db, where: SQL): Promise<number> {
    const gone = await tx.delete(leads).where(where).returning({ projectId: leads.projectId, emailKey: leads.emailKey, phoneKey: leads.phoneKey, websiteKey: leads.websiteKey });
    const keys = gone.flatMap((row) => presentKeys(row).map(({ kind, key }) => ({ projectId: row.projectId, kind, key })));
    if (keys.length) {
      const list = (kind: MatchKind) => keys.filter((k) => k.kind === kind);
      const carriers = (['email', 'phone', 'website'] as const).filter((kind) => list(kind).length).map((kind) => sql`(
        select distinct on (l.project_id, l.${sql.raw(`${kind}_key`)}) l.project_id, ${kind}::text, l.${sql.raw(`${kind}_key`)}, l.org_id, l.id
        from leads l join unnest(${sql.param(list(kind).map((k) => k.projectId))}::text[], ${sql.param(list(kind).map((k) => k.key))}::text[]) as k(project_id, key)
          on l.project_id = k.project_id and l.${sql.raw(`${kind}_key`)} = k.key
        order by l.project_id, l.${sql.raw(`${kind}_key`)}, l.id)`);
      await tx.execute(sql`insert into lead_keys (project_id, kind, key, org_id, lead_id) ${sql.join(carriers, sql` union all `)} on conflict do nothing`);
    }
    return gone.length;
  }

  async list(scope: Scope, query: LeadListQuery) {
    const page = pageOf(query);
    const conditions: (SQL | undefined)[] = [];
    if (query.status) {
      const statuses = query.status.split(',').map((s) => s.trim().toUpperCase()).filter(Boolean);
      const bad = statuses.filter((s) => !(LEAD_STATUSES as readonly string[]).includes(s));
      if (bad.length) throw badRequest(`Unknown status ${bad.join(', ')}; allowed: ${LEAD_STATUSES.join(', ')}`, [{ field: 'querystring.status', message: `must be one of ${LEAD_STATUSES.join(', ')}` }]);
      conditions.push(inArray(leads.status, statuses));
    }
    if (query.minScore !== undefined) conditions.push(gte(leads.score, query.minScore));
    if (query.tags) {
      const tags = uniq(query.tags.split(','));
      if (tags.length) conditions.push(sql`${leads.tags} @> ${sql.param(tags)}::text[]`);
    }
    if (query.projectId) conditions.push(eq(leads.projectId, query.projectId));
    if (query.source) conditions.push(eq(leads.source, query.source));
    const searching = Boolean(query.q && query.q.trim());
    const search = searching ? searchConditions(query.q!) : undefined;
    const where = inScope(scope, leads, ...conditions, search?.indexed, search?.recheck);
    // Validated first: a bad sort is a 400 before any query runs.
    const order = leadOrder(query.sort, leads);
    // Estimated on what the indexes serve (the planner has no statistics for the recheck), when needed.
    let estimated: number | undefined;
    const estimate = async () => (estimated ??= await this.estimate(search?.recheck ? inScope(scope, leads, ...conditions, search.indexed) : where));
    // A search, or a filter that no sort index carries in the list's order (a score range, tags, a
    // project; or a filtered sort other than the newest first): walking the sort index would skip
    // every non-matching lead on the way, and recent leads often all miss (yesterday's import of
    // another source). Their matches are ranked directly: one read gives the page and the exact count
    // (the trigram index and the rows it points at are read once, not once per statement). That read
    // stops at EXACT_TOTAL + 1 matches, so it is tried before asking the planner anything: a
    // selective list is one statement, and a broad one (more than EXACT_TOTAL after all) is then read
    // in order without being counted again.
    const ranks = searching || (conditions.length > 0 && !this.orderCarriesFilter(query));
    let above = false;
    if (ranks) {
      const ranked = await this.rankedPage(where, query.sort, page);
      const matched = ranked[0]!.matched;
      if (matched <= EXACT_TOTAL) return envelope(ranked.flatMap((r) => (r.lead ? [publicLead(r.lead)] : [])), matched, page);
      above = true;
    }
    // Filters in an index's order, and broad searches: the page comes from the matches in order (an
    // index on the sort column stops after a page) beside a count that stops at EXACT_TOTAL + 1 (the
    // filters' indexes count without reading the rows); above that the total is the planner's
    // estimate: an exact count would read every match on every page (CONTRACT §3).
    const approximately = await estimate();
    const [items, counted] = await Promise.all([
      this.db.select().from(leads).where(where).orderBy(...order).limit(page.limit).offset(page.offset),
      above ? EXACT_TOTAL + 1 : this.cappedCount(where, approximately),
    ]);
    if (counted <= EXACT_TOTAL) return envelope(items.map(publicLead), counted, page);
    return { ...envelope(items.map(publicLead), Math.max(EXACT_TOTAL + 1, approximately), page), totalIsEstimate: true };
  }

  /**
   * The page from every match (at most EXACT_TOTAL + 1 of them) ranked in the list's order, with how
   * many matched, in one statement: one aggregate over the matches counts them and orders their ids,
   * and the page's slice of those ids is joined to the rows at the end (one row with no lead when
   * the page is past the last match). Only the sort keys are carried through the ranking, so ten
   * thousand matches stay small in memory (and an index holding the filter and the sort key answers
   * without the rows). An aggregate rather than `count(*) over ()` beside a top-N sort: the window
   * keeps every match in a tuple store to hand each one back with the count (about 8 % of the
   * statement at ten thousand matches, pgbench with 4 clients).
   */
  private async rankedPage(where: SQL, sort: string | undefined, page: ReturnType<typeof pageOf>) {
    const field = (sort && sort.length > 0 ? sort : '-createdAt').replace(/^-/, '') as SortKey;
    // The order's columns alone: (org_id, score, created_at, id) answers minScore without the rows.
    const matches = this.db.select({ id: leads.id, createdAt: sql`${leads.createdAt}`.as('created_key'), key: sql`${SORTABLE[field]}`.as('sort_key') })
      .from(leads).where(where).limit(EXACT_TOTAL + 1).as('m');
    const [created, key] = [matches.createdAt, matches.key] as unknown as [AnyColumn, AnyColumn];
    const keys = { createdAt: created, updatedAt: key, name: key, email: key, company: key, score: key, status: key, id: matches.id };
    const ordered = sql`(array_agg(${matches.id} order by ${sql.join(leadOrder(sort, keys), sql`, `)}))[${page.offset + 1}:${page.offset + page.limit}]`;
    const ranked = this.db.select({ matched: sql<number>`count(*)::int`.as('matched'), ids: sql<string[] | null>`${ordered}`.as('page_ids') })
      .from(matches).as('r');
    // The page's rows in the same order (its keys end with the id: one order however they compare).
    return this.db.select({ lead: leads, matched: ranked.matched }).from(ranked)
      .leftJoin(leads, sql`${leads.id} = any(${ranked.ids})`).orderBy(...leadOrder(sort, leads));
  }

  /**
   * Whether a sort index walks the filtered list in order: the default order (newest first, or its
   * reverse) with one status or a source, whose indexes are (org_id, status | source, created_at, id);
   * other filters beside it are checked on that status's or source's leads alone.
   */
  private orderCarriesFilter(query: LeadListQuery): boolean {
    const field = (query.sort && query.sort.length > 0 ? query.sort : '-createdAt').replace(/^-/, '');
    if (field !== 'createdAt') return false;
    if (query.source && query.status === undefined) return true;
    return !query.source && query.status !== undefined && !query.status.includes(',');
  }

  /**
   * How many leads match, counted up to EXACT_TOTAL + 1. When a large part of the leads match, a
   * scan that stops at the cap beats a bitmap of every match (which the planner picks for a trigram
   * search: half a million rows to count ten thousand), so bitmap scans are off for that count.
   */
  private async cappedCount(where: SQL, estimated: number): Promise<number> {
    const capped = (db: Db) => db.select({ n: sql<number>`count(*)::int` }).from(db.select({ one: sql`1` }).from(leads).where(where).limit(EXACT_TOTAL + 1).as('capped'));
    if (estimated <= SCAN_OVER) return (await capped(this.db))[0]!.n;
    return (await withoutBitmapScans(this.db, capped))[0]!.n;
  }

  /** The planner's estimate of the matches (a plan, no execution). */
  private async estimate(where: SQL): Promise<number> {
    const matches = this.db.select({ one: sql`1` }).from(leads).where(where);
    const plan = await this.db.execute(sql`explain (format json) ${matches}`) as unknown as { rows: { 'QUERY PLAN': unknown }[] };
    const output = plan.rows[0]!['QUERY PLAN'];
    const [top] = (typeof output === 'string' ? JSON.parse(output) : output) as { Plan: { 'Plan Rows': number } }[];
    return Math.round(top!.Plan['Plan Rows']);
  }

  async bulk(scope: Scope, input: { ids: string[]; action: BulkAction; value?: unknown }) {
    const ids = [...new Set(input.ids)];
    const { action } = input;
    let tagValues: string[] = [];
    let status: LeadStatus | undefined;
    if (action === 'tag' || action === 'untag') {
      const v = input.value;
      tagValues = uniq(typeof v === 'string' ? [v] : Array.isArray(v) && v.every((t) => typeof t === 'string') ? (v as string[]) : []);
      if (tagValues.length === 0) throw badRequest(`${action} needs value: a tag or an array of tags`, [{ field: 'body.value', message: 'must be a non-empty string or array of strings' }]);
      if (tagValues.some((t) => t.length > 100)) throw badRequest('A tag is at most 100 characters', [{ field: 'body.value', message: 'tag longer than 100 characters' }]);
    } else if (action === 'setStatus') {
      if (typeof input.value !== 'string' || !(LEAD_STATUSES as readonly string[]).includes(input.value)) {
        throw badRequest(`setStatus needs value: one of ${LEAD_STATUSES.join(', ')}`, [{ field: 'body.value', message: `must be one of ${LEAD_STATUSES.join(', ')}` }]);
      }
      status = input.value as LeadStatus;
    }
    return this.write(async (tx) => {
      if (action === 'delete') {
        const deleted = await this.deleteLeads(tx, inScope(scope, leads, inArray(leads.id, ids)));
        return { action, matched: deleted, updated: deleted };
      }
      const rows = await tx.select().from(leads).where(inScope(scope, leads, inArray(leads.id, ids))).orderBy(leads.id).for('update');
      const now = this.clock.now();
      const pending: NewEvent[] = [];
      let updated = 0;
      for (const before of rows) {
        const next: Partial<LeadRow> =
          action === 'tag' ? { tags: uniq([...before.tags, ...tagValues]) }
          : action === 'untag' ? { tags: before.tags.filter((t) => !tagValues.includes(t)) }
          : { status };
        const changes = diff(before, next);
        if (Object.keys(changes).length === 0) continue;
        const [after] = await tx.update(leads).set({ ...next, updatedAt: now }).where(inScope(scope, leads, eq(leads.id, before.id))).returning();
        pending.push(...this.updatedEvents(scope, before, after!, changes));
        updated++;
      }
      await this.events.record(tx, pending, CALLER_WAKES);
      return { action, matched: rows.length, updated };
    });
  }

  async stats(scope: Scope, projectId?: string) {
    const where = inScope(scope, leads, projectId ? eq(leads.projectId, projectId) : undefined);
    const now = this.clock.now().getTime();
    const day = 86_400_000;
    const [totals, statuses, sources] = await Promise.all([
      this.db.select({
        total: sql<number>`count(*)::int`,
        averageScore: sql<number>`coalesce(avg(${leads.score}), 0)::float8`,
        last7: sql<number>`count(*) filter (where ${leads.createdAt} >= ${new Date(now - 7 * day).toISOString()}::timestamptz)::int`,
        last30: sql<number>`count(*) filter (where ${leads.createdAt} >= ${new Date(now - 30 * day).toISOString()}::timestamptz)::int`,
      }).from(leads).where(where),
      this.db.select({ key: leads.status, n: sql<number>`count(*)::int` }).from(leads).where(where).groupBy(leads.status),
      this.db.select({ key: leads.source, n: sql<number>`count(*)::int` }).from(leads).where(where).groupBy(leads.source),
    ]);
    const byStatus: Record<string, number> = Object.fromEntries(LEAD_STATUSES.map((s) => [s, 0]));
    for (const s of statuses) byStatus[s.key] = s.n;
    const bySource: Record<string, number> = {};
    for (const s of sources) bySource[s.key ?? 'unknown'] = (bySource[s.key ?? 'unknown'] ?? 0) + s.n;
    const t = totals[0]!;
    return {
      total: t.total,
      byStatus,
      bySource,
      averageScore: Math.round(t.averageScore * 100) / 100,
      createdLast7Days: t.last7,
      createdLast30Days: t.last30,
    };
  }
}
