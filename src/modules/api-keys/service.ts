import { and, desc, eq } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import { notFound } from '../../platform/errors.ts';
import { randomToken, sha256Hex } from '../../platform/crypto.ts';
import { newId } from '../../platform/ids.ts';
import { apiKeys } from './tables.ts';
import type { ApiKeysPorts, BusPort } from './ports.ts';
import type { ApiKeyPrincipal } from '../../platform/context.ts';

export const SCOPES = [
  'leads:read',
  'leads:write',
  'workflows:read',
  'workflows:write',
  'agents:read',
  'agents:write',
  'reports:read',
  'reports:write',
  'content:read',
  'content:write',
  'media:write',
  'usage:read',
  'conversations:read',
  'conversations:write',
  'campaigns:read',
  'campaigns:write',
  'analytics:read',
  'analytics:write',
  'webhooks:read',
  'webhooks:write',
  '*',
] as const;

const KEY_PREFIX = 'svc_';
const KEY_REVOKED = 'api-key:revoked';
const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 10_000;

function publicKey(row: typeof apiKeys.$inferSelect) {
  return { id: row.id, name: row.name, scopes: row.scopes, prefix: row.prefix, projectId: row.projectId, lastUsedAt: row.lastUsedAt, createdAt: row.createdAt };
}

export class ApiKeysService {
  private readonly db: Db;
  private readonly clock: Clock;
  /** last-used stamps are written at most once a minute per key, off the request path. */
  private readonly lastStamp = new Map<string, number>();
  /**
   * Recently seen keys by hash, so a request does not pay a query for its credential. A revoked
   * key is dropped from every instance's cache through the bus the moment it is deleted; the TTL
   * only bounds how long an entry lives.
   */
  private readonly cache = new Map<string, { principal: ApiKeyPrincipal; until: number }>();
  private readonly bus: BusPort;

  constructor(deps: Deps, ports: ApiKeysPorts) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.bus = ports.bus;
    this.bus.subscribe(KEY_REVOKED, (keyId) => this.forget(keyId as string));
  }

  private forget(keyId: string): void {
    for (const [hash, entry] of this.cache) if (entry.principal.keyId === keyId) this.cache.delete(hash);
  }

  /** The key itself is returned once, here; only its SHA-256 is stored. */
  async create(orgId: string, input: { name: string; scopes: string[]; projectId?: string | null; createdBy?: string }) {
    const key = KEY_PREFIX + randomToken(32);
    const [row] = await this.db
      .insert(apiKeys)
      .values({
        id: newId('apiKey'),
        orgId,
        projectId: input.projectId ?? null,
        name: input.name,
        scopes: [...new Set(input.scopes)],
        prefix: key.slice(0, KEY_PREFIX.length + 8),
        keyHash: sha256Hex(key),
        createdBy: input.createdBy ?? null,
      })
      .returning();
    return { ...publicKey(row!), key };
  }

  async list(orgId: string) {
    const rows = await this.db.select().from(apiKeys).where(eq(apiKeys.orgId, orgId)).orderBy(desc(apiKeys.id));
    return rows.map(publicKey);
  }

  async delete(orgId: string, id: string): Promise<void> {
    const deleted = await this.db
      .delete(apiKeys)
      .where(and(eq(apiKeys.orgId, orgId), eq(apiKeys.id, id)))
      .returning({ id: apiKeys.id });
    if (deleted.length === 0) throw notFound('API key');
    this.forget(id);
    await this.bus.publish(KEY_REVOKED, id);
  }

  async authenticate(key: string): Promise<ApiKeyPrincipal | null> {
    if (!key.startsWith(KEY_PREFIX) || key.length > 200) return null;
    const hash = sha256Hex(key);
    const now = this.clock.now().getTime();
    const cached = this.cache.get(hash);
    if (cached && cached.until > now) {
      this.stampUse(cached.principal.keyId);
      return cached.principal;
    }
    const [row] = await this.db
      .select({ id: apiKeys.id, orgId: apiKeys.orgId, projectId: apiKeys.projectId, scopes: apiKeys.scopes })
      .from(apiKeys)
      .where(eq(apiKeys.keyHash, hash));
    if (!row) return null;
    this.stampUse(row.id);
    const principal: ApiKeyPrincipal = { kind: 'apiKey', keyId: row.id, orgId: row.orgId, projectId: row.projectId, scopes: row.scopes };
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(hash, { principal, until: now + CACHE_TTL_MS });
    return principal;
  }

  private stampUse(id: string): void {
    const now = this.clock.now();
    const last = this.lastStamp.get(id) ?? 0;
    if (now.getTime() - last < 60_000) return;
    this.lastStamp.set(id, now.getTime());
    this.db
      .update(apiKeys)
      .set({ lastUsedAt: now })
      .where(eq(apiKeys.id, id))
      .catch(() => {});
  }
}
