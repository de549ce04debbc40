import { asc, desc, eq, gte, inArray, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { rows, withoutBitmapScans, type Db } from '../../platform/db.ts';
import { envelope, orderBy, pageOf, statusesOf, type ListQuery } from '../../platform/http/pagination.ts';
import type { Scope } from '../../platform/context.ts';
import { inScope } from '../../platform/tenant.ts';
import { LEAD_STATUSES } from '../../shared/leads.ts';
import type { LeadRow } from './new-people.ts';
import { uniq } from './normalize.ts';
import { leads } from './tables.ts';

/** Lists count their matches exactly up to this many; above it `total` is an estimate (CONTRACT §3). */
const EXACT_TOTAL = 10_000;
/**
 * Above this estimate a capped count scans in order instead of building a bitmap of every match:
 * a scan reads about leads × EXACT_TOTAL / matches rows, a bitmap every match, and at a million
 * leads the two cost the same at a few hundred thousand matches.
 */
const SCAN_OVER = 200_000;

export interface LeadListQuery extends ListQuery {
  status?: string;
  minScore?: number;
  tags?: string;
  projectId?: string;
  source?: string;
}

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
  const indexed = sql.join(
    long.map((w) => sql`${leads.search} like ${like(w)}`),
    sql` and `,
  );
  return { indexed: sql`(${indexed})`, recheck: sql`(${leads.search} || '') like ${like(pattern)}` };
}

/**
 * The lead list's planner: a list query (status, score, tags, project and source filters, a `q`
 * search, a sort, a page) made into the statements that answer it at a million leads, and its total
 * counted exactly up to EXACT_TOTAL (docs/architecture.md, "Lead lists at a million leads").
 */
export class LeadListPlanner {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /** A page of the list as `present` shows each lead, with its total (an estimate above EXACT_TOTAL). */
  async list<T>(scope: Scope, query: LeadListQuery, present: (row: LeadRow) => T) {
    const page = pageOf(query);
    const conditions: (SQL | undefined)[] = [];
    if (query.status) {
      conditions.push(inArray(leads.status, statusesOf(query.status, LEAD_STATUSES)));
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
      if (matched <= EXACT_TOTAL)
        return envelope(
          ranked.flatMap((r) => (r.lead ? [present(r.lead)] : [])),
          matched,
          page,
        );
      above = true;
    }
    // Filters in an index's order, and broad searches: the page comes from the matches in order (an
    // index on the sort column stops after a page) beside a count that stops at EXACT_TOTAL + 1 (the
    // filters' indexes count without reading the rows); above that the total is the planner's
    // estimate: an exact count would read every match on every page (CONTRACT §3).
    const approximately = await estimate();
    const [items, counted] = await Promise.all([
      this.db
        .select()
        .from(leads)
        .where(where)
        .orderBy(...order)
        .limit(page.limit)
        .offset(page.offset),
      above ? EXACT_TOTAL + 1 : this.cappedCount(where, approximately),
    ]);
    if (counted <= EXACT_TOTAL) return envelope(items.map(present), counted, page);
    return { ...envelope(items.map(present), Math.max(EXACT_TOTAL + 1, approximately), page), totalIsEstimate: true };
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
    const matches = this.db
      .select({ id: leads.id, createdAt: sql`${leads.createdAt}`.as('created_key'), key: sql`${SORTABLE[field]}`.as('sort_key') })
      .from(leads)
      .where(where)
      .limit(EXACT_TOTAL + 1)
      .as('m');
    const [created, key] = [matches.createdAt, matches.key] as unknown as [AnyColumn, AnyColumn];
    const keys = { createdAt: created, updatedAt: key, name: key, email: key, company: key, score: key, status: key, id: matches.id };
    const ordered = sql`(array_agg(${matches.id} order by ${sql.join(leadOrder(sort, keys), sql`, `)}))[${page.offset + 1}:${page.offset + page.limit}]`;
    const ranked = this.db
      .select({ matched: sql<number>`count(*)::int`.as('matched'), ids: sql<string[] | null>`${ordered}`.as('page_ids') })
      .from(matches)
      .as('r');
    // The page's rows in the same order (its keys end with the id: one order however they compare).
    return this.db
      .select({ lead: leads, matched: ranked.matched })
      .from(ranked)
      .leftJoin(leads, sql`${leads.id} = any(${ranked.ids})`)
      .orderBy(...leadOrder(sort, leads));
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
    const capped = (db: Db) =>
      db.select({ n: sql<number>`count(*)::int` }).from(
        db
          .select({ one: sql`1` })
          .from(leads)
          .where(where)
          .limit(EXACT_TOTAL + 1)
          .as('capped'),
      );
    if (estimated <= SCAN_OVER) return (await capped(this.db))[0]!.n;
    return (await withoutBitmapScans(this.db, capped))[0]!.n;
  }

  /** The planner's estimate of the matches (a plan, no execution). */
  private async estimate(where: SQL): Promise<number> {
    const matches = this.db
      .select({ one: sql`1` })
      .from(leads)
      .where(where);
    const plan = await rows<{ 'QUERY PLAN': unknown }>(this.db, sql`explain (format json) ${matches}`);
    const output = plan[0]!['QUERY PLAN'];
    const [top] = (typeof output === 'string' ? JSON.parse(output) : output) as { Plan: { 'Plan Rows': number } }[];
    return Math.round(top!.Plan['Plan Rows']);
  }
}
