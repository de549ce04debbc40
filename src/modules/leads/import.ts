import { inArray, or } from 'drizzle-orm';
import { Value } from 'typebox/value';
import { parse } from 'csv-parse/sync';
import type { Db } from '../../platform/db.ts';
import { AppError, badRequest } from '../../platform/errors.ts';
import { explainErrors } from '../../platform/http/validation.ts';
import type { OrgsPort } from './ports.ts';
import { normalizeEmail, normalizeWebsite, phoneE164, type MatchKind } from './normalize.ts';
import type { Static } from 'typebox';
import { LeadCreateBody } from './schemas.ts';
import type { Scope } from '../../platform/context.ts';
import { inScope } from '../../platform/tenant.ts';
import { leads } from './tables.ts';

type LeadInput = Static<typeof LeadCreateBody>;

/** Runs a piece of work when its turn comes (a limit on how many run at once). */
export type Turn = <T>(work: () => Promise<T>) => Promise<T>;

/** The one thing an import needs of the leads service (declared here, so the two files do not import each other). */
export interface LeadCreator {
  /** `lockedWay`: how the create's transaction (a merge, or a new person under a leads limit) waits for its turn. */
  create(scope: Scope, input: LeadInput, options?: { lockedWay?: Turn }): Promise<{ created: boolean }>;
}

export const IMPORT_MAX_ROWS = 10_000;
/**
 * Rows imported between two turns of the event loop: the import waits for a chunk's last row, then
 * lets other work in before the next chunk. A chunk's new people are one statement of the
 * new-people writer, which on the embedded store holds the one connection and the event loop until
 * it ends, and each of another request's statements waits for about one of the import's (a lead
 * list is a few statements one after another). Measured (bench/import, 2,000 new people,
 * embedded store, workers running, a quiet machine): chunks of 25 → 1,230-1,580 rows/s and another
 * organization's list at p50 20-29 ms during the import; 50 → 1,000-1,450 rows/s, p50 49-68 ms;
 * (100 under load: p50 twice 50's). Alone the list takes 4-12 ms.
 */
export const IMPORT_CHUNK = 25;
/**
 * Transactions of an import at once (merges; and new people under a leads limit, which go the
 * locked way). Each holds a pooled connection on PostgreSQL (ten by default) until it ends: four,
 * as the new-people writer's statements in flight, leaves the rest of the pool to other requests.
 * The embedded store's one connection takes them one after another whatever the number, and those
 * waiting are queued ahead of other requests' statements: one (2,000 merges, bench/import: 51 rows/s
 * and another organization's list at p50 28 ms with one at once; 52 rows/s and 53 ms with two).
 */
const LOCKED = { postgres: 4, pglite: 1 } as const;

export interface ImportResult {
  created: number;
  merged: number;
  /** `row` counts from 1: the first element of `rows`, or the first line under a CSV's header. */
  rejected: { row: number; error: string }[];
}

const KNOWN_COLUMNS = new Set(['projectid', 'name', 'email', 'phone', 'company', 'website', 'source', 'tags']);
const COLUMN_NAMES: Record<string, keyof LeadInput> = { projectid: 'projectId' };

/**
 * A CSV with a header row → lead objects. Known columns (any case) become lead fields, `tags` is
 * split on `;`, `,` or `|`, a `custom.x` column or any other column goes to `custom`. Empty cells
 * are left out, so a row never clears a field of the lead it merges into. A row of empty cells (a
 * spreadsheet's trailing `,,,`) is null: skipped, and still counted so row numbers match the file.
 */
export function csvRows(text: string): (Record<string, unknown> | null)[] {
  let records: string[][];
  try {
    records = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true, trim: true, to_line: IMPORT_MAX_ROWS + 2 }) as string[][];
  } catch (error) {
    throw badRequest(`The CSV could not be read: ${(error as Error).message}`, [{ field: 'body', message: 'must be CSV with a header row' }]);
  }
  const [header, ...lines] = records;
  if (!header || header.every((h) => h === ''))
    throw badRequest('The CSV needs a header row naming its columns (name, email, phone, company, website, source, tags, custom.<key>)');
  if (lines.length > IMPORT_MAX_ROWS)
    throw badRequest(`An import holds at most ${IMPORT_MAX_ROWS} rows`, [{ field: 'body', message: `must have at most ${IMPORT_MAX_ROWS} rows` }]);
  const columns = header.map((h) => h.trim());
  return lines.map((cells) => {
    if (cells.every((cell) => cell === '')) return null;
    const row: Record<string, unknown> = {};
    const custom: Record<string, string> = {};
    columns.forEach((column, i) => {
      const value = cells[i];
      if (value === undefined || value === '' || column === '') return;
      const lower = column.toLowerCase();
      if (lower === 'tags')
        row.tags = value
          .split(/[;,|]/)
          .map((t) => t.trim())
          .filter(Boolean);
      else if (KNOWN_COLUMNS.has(lower)) row[COLUMN_NAMES[lower] ?? lower] = value;
      else custom[lower.startsWith('custom.') ? column.slice('custom.'.length) : column] = value;
    });
    if (Object.keys(custom).length) row.custom = custom;
    return row;
  });
}

/** Why a row is not a valid lead body, in the words of the API's own validation. */
function rowError(row: unknown): string | null {
  if (Value.Check(LeadCreateBody, row)) return null;
  return explainErrors([...Value.Errors(LeadCreateBody, row)], '', LeadCreateBody).message;
}

/** The matching keys of a row, as create computes them (throws the same 400 for a malformed e-mail, phone or website). */
function rowKeys(input: LeadInput): { kind: MatchKind; key: string }[] {
  const keys: { kind: MatchKind; key: string }[] = [];
  if (input.email) keys.push({ kind: 'email', key: normalizeEmail(input.email).key });
  if (input.phone) keys.push({ kind: 'phone', key: phoneE164(input.phone) });
  if (input.website) keys.push({ kind: 'website', key: normalizeWebsite(input.website).host });
  return keys;
}

function errorText(error: unknown): string {
  if (error instanceof AppError) return error.message;
  throw error;
}

/** A row that passed validation: its index in the import, its project and its keys (`project\0kind\0key`). */
interface Valid {
  index: number;
  input: LeadInput;
  project: string;
  keys: string[];
}

/** A turn for at most `size` pieces of work at once, given in the order they ask. */
function limit(size: number): Turn {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    if (running >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await work();
    } finally {
      // The turn passes straight to the next in line (running stays the same), or is given back.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** Union-find over row indexes: rows that share a key (in one project) end in one group. */
function groupsOf(count: number, keysOf: (i: number) => string[]): number[][] {
  const parent = Array.from({ length: count }, (_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const owner = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    for (const key of keysOf(i)) {
      const first = owner.get(key);
      if (first === undefined) owner.set(key, i);
      else parent[find(i)] = find(first);
    }
  }
  const groups = new Map<number, number[]>();
  for (let i = 0; i < count; i++) {
    const root = find(i);
    const group = groups.get(root);
    if (group) group.push(i);
    else groups.set(root, [i]);
  }
  return [...groups.values()];
}

/**
 * Imports rows as single creates, so each one is de-duplicated exactly as `POST /leads` would do
 * it. Rows that could be the same person (a shared e-mail, phone or website in one project) run
 * one after another in their order; unrelated rows run side by side. Rows go in chunks, with a turn
 * of the event loop between two, so that other requests get the store in between.
 */
export class LeadImporter {
  private readonly db: Db;
  private readonly leads: LeadCreator;
  private readonly orgs: OrgsPort;
  /** Transactions at once (LOCKED). */
  private readonly locked: number;

  constructor(db: Db, leads: LeadCreator, orgs: OrgsPort, store: keyof typeof LOCKED) {
    this.db = db;
    this.leads = leads;
    this.orgs = orgs;
    this.locked = LOCKED[store];
  }

  /**
   * Imports the rows a chunk at a time, yielding to other work between chunks. When `signal` aborts
   * (the client left) it stops before the next chunk: the rows done so far stay imported (each is
   * its own create), and `stoppedAfter` says how many rows were done.
   */
  async import(scope: Scope, rows: unknown[], dryRun: boolean, signal?: AbortSignal): Promise<ImportResult & { stoppedAfter?: number }> {
    if (rows.length > IMPORT_MAX_ROWS) throw badRequest(`An import holds at most ${IMPORT_MAX_ROWS} rows`);
    const rejected = new Map<number, string>();
    const projects = new Map<string, Promise<string>>();
    const projectOf = (requested: string | undefined) => {
      const id = requested ?? '';
      if (!projects.has(id)) {
        const resolved = this.orgs.projectFor(scope, requested).then((p) => p ?? this.orgs.defaultProjectId(scope.orgId));
        resolved.catch(() => {});
        projects.set(id, resolved);
      }
      return projects.get(id)!;
    };
    const counts = { created: 0, merged: 0 };
    // dryRun: the keys of the rows counted so far.
    const earlier = new Set<string>();
    const lockedWay = limit(this.locked);
    let stoppedAfter: number | undefined;
    for (let from = 0; from < rows.length; from += IMPORT_CHUNK) {
      if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      if (signal?.aborted) {
        stoppedAfter = from;
        break;
      }
      const valid = await this.validate(rows, from, Math.min(rows.length, from + IMPORT_CHUNK), projectOf, rejected);
      if (dryRun) await this.preview(scope, valid, earlier, counts);
      else await this.run(scope, valid, rejected, counts, lockedWay);
    }
    const list = [...rejected.entries()].sort((a, b) => a[0] - b[0]).map(([index, error]) => ({ row: index + 1, error }));
    return { ...counts, rejected: list, ...(stoppedAfter === undefined ? {} : { stoppedAfter }) };
  }

  /** The valid rows among rows[from, to), with their project and keys; the others go to `rejected`. */
  private async validate(
    rows: unknown[],
    from: number,
    to: number,
    projectOf: (requested: string | undefined) => Promise<string>,
    rejected: Map<number, string>,
  ) {
    const valid: Valid[] = [];
    for (let index = from; index < to; index++) {
      const row = rows[index];
      if (row === null) continue;
      const invalid = rowError(row);
      if (invalid) {
        rejected.set(index, invalid);
        continue;
      }
      const input = row as LeadInput;
      if (![input.name, input.email, input.phone, input.website].some((v) => typeof v === 'string' && v.trim() !== '')) {
        rejected.set(index, 'A lead needs at least one of name, email, phone or website');
        continue;
      }
      try {
        const project = await projectOf(input.projectId);
        valid.push({ index, input, project, keys: rowKeys(input).map((k) => `${project}\u0000${k.kind}\u0000${k.key}`) });
      } catch (error) {
        rejected.set(index, errorText(error));
      }
    }
    return valid;
  }

  /**
   * One chunk's rows, each a single create. Rows that could be the same person (a shared key) are a
   * group, created one after another in their order; the chunk ends when all are done, so a later
   * chunk's row comes after an earlier one's. The first row of every group whose keys no lead
   * carries yet is a new person: these all go at once, so the new-people writer puts them in one
   * statement (they share no key). The rest merge, each in a transaction: a few groups at a time,
   * so the import holds a bounded number of connections. (A row with one key a lead carries and one
   * free would also make the new-people statement it shared fail, and be redone person by person.)
   */
  private async run(scope: Scope, valid: Valid[], rejected: Map<number, string>, counts: { created: number; merged: number }, lockedWay: Turn) {
    const create = async (i: number) => {
      const { index, input } = valid[i]!;
      try {
        const result = await this.leads.create(scope, input, { lockedWay });
        counts[result.created ? 'created' : 'merged']++;
      } catch (error) {
        rejected.set(index, errorText(error));
      }
    };
    const carried = await this.carried(scope, valid);
    const groups = groupsOf(valid.length, (i) => valid[i]!.keys);
    const fresh = groups.filter((group) => !valid[group[0]!]!.keys.some((k) => carried.has(k)));
    await Promise.all(fresh.map((group) => create(group.shift()!)));
    const rest = groups.filter((group) => group.length > 0);
    let next = 0;
    const worker = async () => {
      while (next < rest.length) {
        for (const i of rest[next++]!) await create(i);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.locked, rest.length) }, worker));
  }

  /** The keys of `valid` that a stored lead carries already. */
  private async carried(scope: Scope, valid: Valid[]): Promise<Set<string>> {
    const seen = new Set<string>();
    const byProject = new Map<string, Record<MatchKind, string[]>>();
    for (const { project, keys } of valid) {
      const wanted = byProject.get(project) ?? { email: [], phone: [], website: [] };
      byProject.set(project, wanted);
      for (const key of keys) {
        const [, kind, value] = key.split('\u0000') as [string, MatchKind, string];
        wanted[kind].push(value);
      }
    }
    for (const [project, wanted] of byProject) {
      const matches = [
        wanted.email.length ? inArray(leads.emailKey, wanted.email) : undefined,
        wanted.phone.length ? inArray(leads.phoneKey, wanted.phone) : undefined,
        wanted.website.length ? inArray(leads.websiteKey, wanted.website) : undefined,
      ].filter((m) => m !== undefined);
      if (!matches.length) continue;
      const existing = await this.db
        .select({ email: leads.emailKey, phone: leads.phoneKey, website: leads.websiteKey })
        .from(leads)
        .where(inScope({ orgId: scope.orgId, projectId: project }, leads, or(...matches)));
      for (const row of existing) {
        for (const kind of ['email', 'phone', 'website'] as const) if (row[kind]) seen.add(`${project}\u0000${kind}\u0000${row[kind]}`);
      }
    }
    return seen;
  }

  /** What the import would do: a row merges when a lead or an earlier row already carries one of its keys. */
  private async preview(scope: Scope, valid: Valid[], earlier: Set<string>, counts: { created: number; merged: number }) {
    const carried = await this.carried(scope, valid);
    for (const { keys } of valid) {
      counts[keys.some((k) => carried.has(k) || earlier.has(k)) ? 'merged' : 'created']++;
      for (const key of keys) earlier.add(key);
    }
  }
}
