import { and, eq, sql } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import type { SecretBox } from '../../platform/crypto.ts';
import { transaction, type Db } from '../../platform/db.ts';
import { badRequest, notFound, unprocessable } from '../../platform/errors.ts';
import { envelope, orderBy, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import { SECRET_MASK } from './secrets.ts';
import { orgSecrets } from './tables.ts';

/** Names usable as `$secrets.NAME` in JSONata without quoting, like environment variables. */
export const SECRET_NAME = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';
export const MAX_SECRETS_PER_ORG = 200;
/** Shorter values are not redacted from outputs: masking every "1" or "ok" would garble them. */
const MIN_REDACTED_LENGTH = 4;

/** `{ name, createdAt, updatedAt }`: a secret as the API shows it (never its value). */
export type SecretRecord = { name: string; createdAt: Date; updatedAt: Date };

/**
 * The organization's named secrets for workflows (`{{ $secrets.NAME }}` in node params). Values are
 * sealed with the SecretBox (AES-256-GCM under APP_SECRET) and opened only by the run driver while
 * it executes a node; no route returns them.
 */
export class OrgSecretsService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly box: SecretBox;

  constructor(db: Db, clock: Clock, box: SecretBox) {
    this.db = db;
    this.clock = clock;
    this.box = box;
  }

  async list(orgId: string, query: ListQuery) {
    const page = pageOf(query);
    const order = orderBy(query.sort, { name: orgSecrets.name, createdAt: orgSecrets.createdAt, updatedAt: orgSecrets.updatedAt }, 'name', orgSecrets.name);
    const where = eq(orgSecrets.orgId, orgId);
    const [items, [counted]] = await Promise.all([
      this.db
        .select({ name: orgSecrets.name, createdAt: orgSecrets.createdAt, updatedAt: orgSecrets.updatedAt })
        .from(orgSecrets)
        .where(where)
        .orderBy(...order)
        .limit(page.limit)
        .offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(orgSecrets)
        .where(where),
    ]);
    return envelope(items, counted?.n ?? 0, page);
  }

  /** Creates or replaces a secret; `created` tells which. */
  async put(orgId: string, name: string, value: string): Promise<{ secret: SecretRecord; created: boolean }> {
    // The mask is what reads of sealed params show; storing it as a value is surely a mistake.
    if (value === SECRET_MASK) throw badRequest('The value is the mask "********", not a secret', [{ field: 'body.value', message: 'must not be the mask' }]);
    const now = this.clock.now();
    const sealed = this.box.seal(value);
    return transaction(this.db, async (tx) => {
      const [existing] = await tx
        .select({ name: orgSecrets.name })
        .from(orgSecrets)
        .where(and(eq(orgSecrets.orgId, orgId), eq(orgSecrets.name, name)));
      if (!existing) {
        const [counted] = await tx
          .select({ n: sql<number>`count(*)::int` })
          .from(orgSecrets)
          .where(eq(orgSecrets.orgId, orgId));
        if ((counted?.n ?? 0) >= MAX_SECRETS_PER_ORG) {
          throw unprocessable('LIMIT_REACHED', `An organization can hold at most ${MAX_SECRETS_PER_ORG} secrets`, { limit: MAX_SECRETS_PER_ORG });
        }
      }
      const [row] = await tx
        .insert(orgSecrets)
        .values({ orgId, name, value: sealed, createdAt: now, updatedAt: now })
        .onConflictDoUpdate({ target: [orgSecrets.orgId, orgSecrets.name], set: { value: sealed, updatedAt: now } })
        .returning({ name: orgSecrets.name, createdAt: orgSecrets.createdAt, updatedAt: orgSecrets.updatedAt });
      return { secret: row!, created: !existing };
    });
  }

  async delete(orgId: string, name: string): Promise<void> {
    const deleted = await this.db
      .delete(orgSecrets)
      .where(and(eq(orgSecrets.orgId, orgId), eq(orgSecrets.name, name)))
      .returning({ name: orgSecrets.name });
    if (deleted.length === 0) throw notFound('Secret');
  }

  /** Every secret of the organization, opened: for the run driver only. */
  async values(orgId: string): Promise<Record<string, string>> {
    const rows = await this.db.select({ name: orgSecrets.name, value: orgSecrets.value }).from(orgSecrets).where(eq(orgSecrets.orgId, orgId));
    const out: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const row of rows) out[row.name] = this.box.open(row.value);
    return out;
  }

  /**
   * What one node execution may see of the secrets: loaded once, on the first `$secrets` an
   * expression evaluates. Once loaded, every secret value is replaced by the mask in what the node
   * reports — its items and its error — so a run record does not show one, even when a response
   * echoes it or a `data.set` copies it.
   */
  forExecution(orgId: string): SecretsInUse {
    let loading: Promise<Record<string, string>> | null = null;
    const used: string[] = [];
    const redactText = (text: string): string => {
      let out = text;
      for (const secret of used) if (secret.length >= MIN_REDACTED_LENGTH && out.includes(secret)) out = out.split(secret).join(SECRET_MASK);
      return out;
    };
    const redact = <T>(value: T): T => {
      if (typeof value === 'string') return redactText(value) as T;
      if (Array.isArray(value)) return value.map(redact) as T;
      if (value && typeof value === 'object' && !(value instanceof Date)) {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [redactText(k), redact(v)])) as T;
      }
      return value;
    };
    return {
      load: () => {
        loading ??= this.values(orgId).then((values) => {
          used.push(...Object.values(values));
          return values;
        });
        return loading;
      },
      redact: (value) => (used.length ? redact(value) : value),
      redactError: (error) => {
        if (used.length && error instanceof Error) error.message = redactText(error.message);
        return error;
      },
    };
  }
}

export interface SecretsInUse {
  /** The organization's secrets (opened), loaded at most once. */
  load(): Promise<Record<string, string>>;
  /** A copy of the value with every secret handed out replaced by the mask. */
  redact<T>(value: T): T;
  /** The same error, its message redacted. */
  redactError(error: unknown): unknown;
}
