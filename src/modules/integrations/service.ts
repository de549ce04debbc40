import { desc, eq, sql } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import { SecretBox } from '../../platform/crypto.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import type { Scope } from '../../platform/context.ts';
import type { EventsService } from '../events/service.ts';
import type { OrgsService } from '../orgs/service.ts';
import { assertCanChange, assertMayMakeOrgWide, inScope, inScopeOrgWide, type Tenant } from '../../platform/tenant.ts';
import { connectorFor, type Provider } from './connectors/index.ts';
import { integrations } from './tables.ts';

type Row = typeof integrations.$inferSelect;

export function publicIntegration(row: Row) {
  return {
    id: row.id,
    provider: row.provider,
    name: row.name,
    projectId: row.projectId,
    status: row.status,
    lastError: row.lastError ?? null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
export type Integration = ReturnType<typeof publicIntegration>;

export class IntegrationsService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly box: SecretBox;
  private readonly events: EventsService;
  private readonly orgs: OrgsService;

  constructor(deps: Deps, events: EventsService, orgs: OrgsService) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.box = new SecretBox(deps.config.appSecret);
    this.events = events;
    this.orgs = orgs;
  }

  async connect(scope: Scope, input: { provider: Provider; name: string; projectId?: string | null; credentials: Record<string, unknown> }): Promise<Integration> {
    const connector = connectorFor(input.provider);
    if (!connector) throw badRequest(`Unknown provider ${input.provider}`, [{ field: 'body.provider', message: 'must be linkedin or x' }]);
    const problem = connector.checkCredentials(input.credentials);
    if (problem) throw badRequest(problem, [{ field: 'body.credentials', message: problem }]);
    assertMayMakeOrgWide(scope, input.projectId, 'integration');
    const projectId = await this.orgs.projectFor(scope, input.projectId);
    const credentials: Record<string, string> = {};
    for (const [k, v] of Object.entries(input.credentials)) if (typeof v === 'string') credentials[k] = v;
    const now = this.clock.now();
    return this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const [row] = await tx.insert(integrations).values({
        id: newId('integration', now.getTime()),
        orgId: scope.orgId,
        projectId,
        provider: input.provider,
        name: input.name,
        credentialsSealed: this.box.seal(JSON.stringify(credentials)),
        status: 'connected',
        createdAt: now,
        updatedAt: now,
      }).returning();
      const payload: Record<string, unknown> = { integrationId: row!.id, provider: row!.provider, name: row!.name };
      if (projectId) payload.projectId = projectId;
      // integration.* events carry no envelope projectId (SPEC: no project context).
      await this.events.record(tx, { orgId: scope.orgId, type: 'integration.connected', payload });
      return publicIntegration(row!);
    });
  }

  async list(scope: Scope, query: ListQuery & { provider?: string; status?: string }) {
    const page = pageOf(query);
    const where = inScopeOrgWide(scope, integrations, query.provider ? eq(integrations.provider, query.provider) : undefined, query.status ? eq(integrations.status, query.status) : undefined);
    const [items, counted] = await Promise.all([
      this.db.select().from(integrations).where(where).orderBy(desc(integrations.id)).limit(page.limit).offset(page.offset),
      this.db.select({ n: sql<number>`count(*)::int` }).from(integrations).where(where),
    ]);
    return envelope(items.map(publicIntegration), counted[0]?.n ?? 0, page);
  }

  /** An integration the scope can see: its project's or an organization-wide one (content checks a post's project this way). */
  async row(scope: Tenant, id: string, db: Db = this.db): Promise<Row | undefined> {
    const [row] = await db.select().from(integrations).where(inScopeOrgWide(scope, integrations, eq(integrations.id, id)));
    return row;
  }

  async get(scope: Scope, id: string): Promise<Integration> {
    const row = await this.row(scope, id);
    if (!row) throw notFound('Integration');
    return publicIntegration(row);
  }

  /** Organization-wide integrations are read-only for a key bound to a project (403). */
  async delete(scope: Scope, id: string): Promise<void> {
    const row = await this.row(scope, id);
    if (!row) throw notFound('Integration');
    assertCanChange(scope, row.projectId, 'This integration');
    const deleted = await this.db.delete(integrations).where(inScope(scope, integrations, eq(integrations.id, id))).returning({ id: integrations.id });
    if (deleted.length === 0) throw notFound('Integration');
  }

  /** The decrypted credentials: only connectors see them. */
  credentialsOf(row: Row): Record<string, string> {
    return JSON.parse(this.box.open(row.credentialsSealed)) as Record<string, string>;
  }

  /** Marks the integration in error (re-authorization needed) and emits integration.error, in the caller's transaction. */
  async markError(tx: Db, row: Row, error: { code: string; message: string }): Promise<void> {
    const now = this.clock.now();
    await tx.update(integrations)
      .set({ status: 'error', lastError: { ...error, at: now.toISOString() }, errorAt: now, updatedAt: now })
      .where(inScope({ orgId: row.orgId, projectId: null }, integrations, eq(integrations.id, row.id)));
    await this.events.record(tx, { orgId: row.orgId, type: 'integration.error', payload: { integrationId: row.id, provider: row.provider, code: error.code, message: error.message } });
  }

  /** A success proves the credentials work again. */
  async markHealthy(tx: Db, row: Row): Promise<void> {
    if (row.status === 'connected') return;
    await tx.update(integrations).set({ status: 'connected', lastError: null, errorAt: null, updatedAt: this.clock.now() })
      .where(inScope({ orgId: row.orgId, projectId: null }, integrations, eq(integrations.id, row.id)));
  }
}
