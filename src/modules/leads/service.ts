import { createHash } from 'node:crypto';
import { eq, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { transaction, type Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import { agentRunOf, type Scope } from '../../platform/context.ts';
import { inScope } from '../../platform/tenant.ts';
import type { NewEvent } from '../events/index.ts';
import { eventRows, type EventRow } from '../events/index.ts';
import { LEAD_STATUSES, type LeadStatus } from '../../shared/leads.ts';
import { normalizeEmail, normalizeWebsite, phoneE164, uniq, type MatchKind } from './normalize.ts';
import { LeadListPlanner, type LeadListQuery } from './list-planner.ts';
import { leads } from './tables.ts';
import { eventsAboutLead } from '../events/index.ts';
import { LeadImporter, type ImportResult, type Turn } from './import.ts';
import { lockOrder, NewPeopleWriter, type LeadRow } from './new-people.ts';
import type { EventsPort, LeadsPorts, OrgsPort, PlansPort } from './ports.ts';

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

/** A 64-bit advisory lock key for one de-duplication key inside a project. */
function lockKey(projectId: string, kind: MatchKind, value: string): bigint {
  return createHash('sha256').update(`${projectId}\u0000${kind}\u0000${value}`).digest().readBigInt64BE(0);
}

/** The advisory lock ids of a project's keys. */
function locksOf(projectId: string, keys: { kind: MatchKind; key: string }[]): bigint[] {
  return keys.map(({ kind, key }) => lockKey(projectId, kind, key));
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
  private readonly events: EventsPort;
  private readonly orgs: OrgsPort;
  private readonly importer: LeadImporter;
  private readonly newPeople: NewPeopleWriter;
  private readonly lists: LeadListPlanner;
  /** The plan's leads limit (CONTRACT §12). */
  private readonly plans: PlansPort | null;

  constructor(deps: Deps, ports: LeadsPorts) {
    this.plans = ports.plans ?? null;
    this.db = deps.db;
    this.clock = deps.clock;
    this.events = ports.events;
    this.orgs = ports.orgs;
    this.importer = new LeadImporter(deps.db, this, ports.orgs, deps.database.kind);
    this.newPeople = new NewPeopleWriter(deps.database);
    this.lists = new LeadListPlanner(deps.db);
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
    if (values.length)
      await tx.execute(sql`insert into lead_keys (project_id, kind, key, org_id, lead_id) values ${sql.join(values, sql`, `)} on conflict do nothing`);
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
      id: newId('lead', now.getTime()),
      orgId: scope.orgId,
      projectId,
      name: input.name ?? null,
      email: null,
      phone: null,
      company: input.company ?? null,
      website: null,
      source: input.source ?? null,
      status: 'NEW',
      score: 0,
      scoreReason: null,
      tags: uniq(input.tags ?? []),
      custom: input.custom ?? {},
      emailKey: null,
      phoneKey: null,
      websiteKey: null,
      createdAt: now,
      updatedAt: now,
      ...contact,
    };
    const created: NewEvent = { orgId: scope.orgId, projectId, type: 'lead.created', payload: { lead: publicLead(fresh), actor: scope.actor } };
    // Under a leads limit, a new person is counted under the organization's lock (assertRoom): the locked way.
    const limited = this.plans?.enabled === true && (await this.plans.limitOf(scope.orgId, 'leads')) !== null;
    if (!limited && (await this.createNew(fresh, keys, created))) return { lead: publicLead(fresh), created: true };
    const locked = () =>
      this.write(async (tx) => {
        // Holding the keys' locks, this sees every lead a concurrent create of the same person committed.
        await this.lockKeys(tx, projectId, keys);
        const match = await this.findMatch(tx, scope.orgId, projectId, keys);
        if (!match) {
          // The claim outlived its lead's value (changed or deleted), or none was tried: a new person.
          await this.plans?.assertRoom(tx, scope.orgId, 'leads');
          const [row] = await tx.insert(leads).values(fresh).returning();
          await this.claimKeys(tx, row!, keys);
          await this.events.record(
            tx,
            { orgId: scope.orgId, projectId, type: 'lead.created', payload: { lead: publicLead(row!), actor: scope.actor } },
            CALLER_WAKES,
          );
          return { lead: publicLead(row!), created: true };
        }
        const before = match.row;
        const next: Partial<LeadRow> = { ...contact };
        for (const field of ['name', 'company', 'source'] as const) if (input[field] !== undefined) next[field] = input[field];
        if (input.tags) next.tags = uniq([...before.tags, ...input.tags]);
        if (input.custom) next.custom = { ...before.custom, ...input.custom };
        const changes = diff(before, next);
        if (Object.keys(changes).length === 0) return { lead: publicLead(before), created: false, matchedOn: match.matchedOn };
        const [after] = await tx
          .update(leads)
          .set({ ...next, updatedAt: now })
          .where(inScope(scope, leads, eq(leads.id, before.id)))
          .returning();
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
    const match = await this.findMatch(this.db, scope.orgId, projectId, {
      emailKey: contact.emailKey,
      phoneKey: contact.phoneKey,
      websiteKey: contact.websiteKey,
    });
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
    const [row] = await this.db
      .select()
      .from(leads)
      .where(inScope(scope, leads, eq(leads.id, id)));
    if (!row) throw notFound('Lead');
    return publicLead(row);
  }

  /**
   * A lead of the organization read through `db` — the caller's transaction, where the store must
   * not be read through the pool — or null: for an event that carries the lead as it is (`lead.replied`).
   */
  async find(db: Db, orgId: string, id: string): Promise<Lead | null> {
    const [row] = await db
      .select()
      .from(leads)
      .where(inScope({ orgId, projectId: null }, leads, eq(leads.id, id)));
    return row ? publicLead(row) : null;
  }

  async update(scope: Scope, id: string, patch: LeadPatch): Promise<Lead> {
    const contact = this.normalizedContact(patch);
    const targetProject = patch.projectId === undefined ? undefined : await this.resolveProject(scope, patch.projectId);
    return this.write(async (tx) => {
      const [before] = await tx
        .select()
        .from(leads)
        .where(inScope(scope, leads, eq(leads.id, id)))
        .for('update');
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
      const [after] = await tx
        .update(leads)
        .set({ ...next, updatedAt: this.clock.now() })
        .where(inScope(scope, leads, eq(leads.id, id)))
        .returning();
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
    const gone = await tx
      .delete(leads)
      .where(where)
      .returning({ projectId: leads.projectId, emailKey: leads.emailKey, phoneKey: leads.phoneKey, websiteKey: leads.websiteKey });
    const keys = gone.flatMap((row) => presentKeys(row).map(({ kind, key }) => ({ projectId: row.projectId, kind, key })));
    if (keys.length) {
      const list = (kind: MatchKind) => keys.filter((k) => k.kind === kind);
      const carriers = (['email', 'phone', 'website'] as const)
        .filter((kind) => list(kind).length)
        .map(
          (kind) => sql`(
        select distinct on (l.project_id, l.${sql.raw(`${kind}_key`)}) l.project_id, ${kind}::text, l.${sql.raw(`${kind}_key`)}, l.org_id, l.id
        from leads l join unnest(${sql.param(list(kind).map((k) => k.projectId))}::text[], ${sql.param(list(kind).map((k) => k.key))}::text[]) as k(project_id, key)
          on l.project_id = k.project_id and l.${sql.raw(`${kind}_key`)} = k.key
        order by l.project_id, l.${sql.raw(`${kind}_key`)}, l.id)`,
        );
      await tx.execute(sql`insert into lead_keys (project_id, kind, key, org_id, lead_id) ${sql.join(carriers, sql` union all `)} on conflict do nothing`);
    }
    return gone.length;
  }

  /** A page of leads: the list planner's statements (list-planner.ts). */
  list(scope: Scope, query: LeadListQuery) {
    return this.lists.list(scope, query, publicLead);
  }

  async bulk(scope: Scope, input: { ids: string[]; action: BulkAction; value?: unknown }) {
    const ids = [...new Set(input.ids)];
    const { action } = input;
    let tagValues: string[] = [];
    let status: LeadStatus | undefined;
    if (action === 'tag' || action === 'untag') {
      const v = input.value;
      tagValues = uniq(typeof v === 'string' ? [v] : Array.isArray(v) && v.every((t) => typeof t === 'string') ? (v as string[]) : []);
      if (tagValues.length === 0)
        throw badRequest(`${action} needs value: a tag or an array of tags`, [
          { field: 'body.value', message: 'must be a non-empty string or array of strings' },
        ]);
      if (tagValues.some((t) => t.length > 100))
        throw badRequest('A tag is at most 100 characters', [{ field: 'body.value', message: 'tag longer than 100 characters' }]);
    } else if (action === 'setStatus') {
      if (typeof input.value !== 'string' || !(LEAD_STATUSES as readonly string[]).includes(input.value)) {
        throw badRequest(`setStatus needs value: one of ${LEAD_STATUSES.join(', ')}`, [
          { field: 'body.value', message: `must be one of ${LEAD_STATUSES.join(', ')}` },
        ]);
      }
      status = input.value as LeadStatus;
    }
    return this.write(async (tx) => {
      if (action === 'delete') {
        const deleted = await this.deleteLeads(tx, inScope(scope, leads, inArray(leads.id, ids)));
        return { action, matched: deleted, updated: deleted };
      }
      const rows = await tx
        .select()
        .from(leads)
        .where(inScope(scope, leads, inArray(leads.id, ids)))
        .orderBy(leads.id)
        .for('update');
      const now = this.clock.now();
      const pending: NewEvent[] = [];
      let updated = 0;
      for (const before of rows) {
        const next: Partial<LeadRow> =
          action === 'tag'
            ? { tags: uniq([...before.tags, ...tagValues]) }
            : action === 'untag'
              ? { tags: before.tags.filter((t) => !tagValues.includes(t)) }
              : { status };
        const changes = diff(before, next);
        if (Object.keys(changes).length === 0) continue;
        const [after] = await tx
          .update(leads)
          .set({ ...next, updatedAt: now })
          .where(inScope(scope, leads, eq(leads.id, before.id)))
          .returning();
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
      this.db
        .select({
          total: sql<number>`count(*)::int`,
          averageScore: sql<number>`coalesce(avg(${leads.score}), 0)::float8`,
          last7: sql<number>`count(*) filter (where ${leads.createdAt} >= ${new Date(now - 7 * day).toISOString()}::timestamptz)::int`,
          last30: sql<number>`count(*) filter (where ${leads.createdAt} >= ${new Date(now - 30 * day).toISOString()}::timestamptz)::int`,
        })
        .from(leads)
        .where(where),
      this.db
        .select({ key: leads.status, n: sql<number>`count(*)::int` })
        .from(leads)
        .where(where)
        .groupBy(leads.status),
      this.db
        .select({ key: leads.source, n: sql<number>`count(*)::int` })
        .from(leads)
        .where(where)
        .groupBy(leads.source),
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
