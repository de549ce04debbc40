import { and, desc, eq, sql } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import { SecretBox } from '../../platform/crypto.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import type { Actor } from '../auth/guard.ts';
import type { EventsService } from '../events/service.ts';
import type { OrgsService } from '../orgs/service.ts';
import { assertCanChange, assertMayMakeOrgWide, visibleTo } from '../orgs/project-scope.ts';
import { connectorFor, type Provider } from './connectors/index.ts';
import { integrations } from './tables.ts';

type Row = typeof integrations.$inferSelect;

export interface IntegrationScope {
  orgId: string;
  /** An API key bound to one project sees that project's integrations and the organization-wide ones. */
  projectId: string | null;
  actor: Actor;
}

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

  private visible(scope: { orgId: string; projectId: string | null }) {
    return and(eq(integrations.orgId, scope.orgId), visibleTo(scope, integrations.projectId, { orgWide: true }));
  }

  async connect(scope: IntegrationScope, input: { provider: Provider; name: string; projectId?: string | null; credentials: Record<string, unknown> }): Promise<Integration> {
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

  async list(scope: IntegrationScope, query: ListQuery & { provider?: string; status?: string }) {
    const page = pageOf(query);
    const where = and(this.visible(scope), query.provider ? eq(integrations.provider, query.provider) : undefined, query.status ? eq(integrations.status, query.status) : undefined);
    const [items, counted] = await Promise.all([
      this.db.select().from(integrations).where(where).orderBy(desc(integrations.id)).limit(page.limit).offset(page.offset),
      this.db.select({ n: sql<number>`count(*)::int` }).from(integrations).where(where),
    ]);
    return envelope(items.map(publicIntegration), counted[0]?.n ?? 0, page);
  }

  async row(scope: { orgId: string; projectId: string | null }, id: string, db: Db = this.db): Promise<Row | undefined> {
    const [row] = await db.select().from(integrations).where(and(this.visible(scope), eq(integrations.id, id)));
    return row;
  }

  async get(scope: IntegrationScope, id: string): Promise<Integration> {
    const row = await this.row(scope, id);
    if (!row) throw notFound('Integration');
    return publicIntegration(row);
  }

  /** Organization-wide integrations are read-only for a key bound to a project (403). */
  async delete(scope: IntegrationScope, id: string): Promise<void> {
    const row = await this.row(scope, id);
    if (!row) throw notFound('Integration');
    assertCanChange(scope, row.projectId, 'This integration');
    const deleted = await this.db.delete(integrations).where(and(this.visible(scope), eq(integrations.id, id))).returning({ id: integrations.id });
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
      .where(and(eq(integrations.orgId, row.orgId), eq(integrations.id, row.id)));
    await this.events.record(tx, { orgId: row.orgId, type: 'integration.error', payload: { integrationId: row.id, provider: row.provider, code: error.code, message: error.message } });
  }

  /** A success proves the credentials work again. */
  async markHealthy(tx: Db, row: Row): Promise<void> {
    if (row.status === 'connected') return;
    await tx.update(integrations).set({ status: 'connected', lastError: null, errorAt: null, updatedAt: this.clock.now() })
      .where(and(eq(integrations.orgId, row.orgId), eq(integrations.id, row.id)));
  }
}
