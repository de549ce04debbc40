import { desc, eq, sql } from 'drizzle-orm';
import { transaction, type Db } from '../../platform/db.ts';
import type { Scope } from '../../platform/context.ts';
import { safeEqual, sha256Hex } from '../../platform/crypto.ts';
import { badRequest, notFound, unprocessable } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import { inScope, visibleTo } from '../../platform/tenant.ts';
import { CHANNELS, type Channel, type ChannelAdapter, type Prepared } from './channel-types.ts';
import { notAvailable } from './channels.ts';
import type { ConversationsContext, InboxRow } from './context.ts';
import { inboxes } from './tables.ts';
import { widgetSnippet } from './web.ts';

export type { InboxRow };

export interface InboxInput {
  name: string;
  channel: string;
  projectId?: string;
  config?: Record<string, unknown>;
  credentials?: Record<string, string>;
  bot?: { enabled: boolean; agentId?: string; modelId?: string };
}

/** How long the providers' inbound routes keep an inbox found by id (see inboxById), and how many. */
const INBOX_CACHE_MS = 2000;
const INBOX_CACHE_MAX = 1000;

/** Inboxes: their CRUD, their channel's setup, their secrets and credentials, where their inbound messages go. */
export class Inboxes {
  private readonly ctx: ConversationsContext;
  private readonly openedCredentials = new Map<string, Record<string, string>>();
  private readonly inboxCache = new Map<string, { row: InboxRow; until: number }>();

  constructor(ctx: ConversationsContext) {
    this.ctx = ctx;
  }

  /** At shutdown: the channels let go of their connections. */
  async closeChannels(): Promise<void> {
    await Promise.all(Object.values(this.ctx.adapters).map((adapter) => adapter?.close?.()));
  }

  inboundUrl(row: Pick<InboxRow, 'id' | 'orgId' | 'channel'>): string {
    const { publicUrl } = this.ctx.config;
    if (row.channel === 'api') return `${publicUrl}/api/v1/orgs/${row.orgId}/inboxes/${row.id}/messages`;
    if (row.channel === 'web') return `${publicUrl}/api/v1/widget/${row.id}/messages`;
    return `${publicUrl}/api/v1/hooks/${row.channel}/${row.id}`;
  }

  publicInbox(row: InboxRow) {
    return {
      id: row.id,
      name: row.name,
      channel: row.channel,
      projectId: row.projectId,
      config: row.config,
      bot: row.bot,
      inboundUrl: this.inboundUrl(row),
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      ...(row.channel === 'web' ? { widgetSnippet: widgetSnippet(this.ctx.config.publicUrl, row.id) } : {}),
    };
  }

  private adapter(channel: string): ChannelAdapter {
    if (!(CHANNELS as readonly string[]).includes(channel))
      throw badRequest(`Unknown channel '${channel}'; channels: ${CHANNELS.join(', ')}`, [
        { field: 'body.channel', message: `must be one of ${CHANNELS.join(', ')}` },
      ]);
    const adapter = this.ctx.adapters[channel as Channel];
    if (!adapter) throw notAvailable(channel);
    return adapter;
  }

  /** The inbound route of one channel named with an inbox of another. */
  wrongChannel(channel: string) {
    return unprocessable('WRONG_CHANNEL', `This route takes messages for api inboxes; this inbox is a ${channel} inbox`);
  }

  signingSecretOf(row: Pick<InboxRow, 'secretSealed'>): string | null {
    return row.secretSealed ? this.ctx.box.open(row.secretSealed) : null;
  }

  /** The inbox's provider credentials, opened (never returned by the API). */
  credentialsOf(row: Pick<InboxRow, 'credentialsSealed'>): Record<string, string> | null {
    const sealed = row.credentialsSealed;
    if (!sealed) return null;
    // A provider route opens the same inbox's credentials for every delivery (its signing secret):
    // opened once per sealed value (a changed credential is a new one), at most INBOX_CACHE_MAX kept.
    let opened = this.openedCredentials.get(sealed);
    if (!opened) {
      opened = JSON.parse(this.ctx.box.open(sealed)) as Record<string, string>;
      if (this.openedCredentials.size >= INBOX_CACHE_MAX) this.openedCredentials.clear();
      this.openedCredentials.set(sealed, opened);
    }
    return { ...opened };
  }

  /** Whether a presented inbound token is the inbox's (compared as hashes, in constant time); fails closed. */
  inboundSecretMatches(row: Pick<InboxRow, 'secretHash'>, presented: string | undefined | null): boolean {
    if (!row.secretHash || typeof presented !== 'string' || presented === '') return false;
    return safeEqual(sha256Hex(presented), row.secretHash);
  }

  /**
   * An inbox by id alone, for the providers' public inbound routes (which have no organization
   * scope). A provider delivers many messages a second to one inbox, so a found inbox is kept for
   * INBOX_CACHE_MS: a change made here is seen at once, one made on another instance (new
   * credentials, a delete) within that time.
   */
  async inboxById(id: string): Promise<InboxRow | undefined> {
    const now = Date.now();
    const cached = this.inboxCache.get(id);
    if (cached && cached.until > now) return cached.row;
    const [row] = await this.ctx.db.select().from(inboxes).where(eq(inboxes.id, id));
    if (!row) return undefined;
    if (this.inboxCache.size >= INBOX_CACHE_MAX) this.inboxCache.clear();
    this.inboxCache.set(id, { row, until: now + INBOX_CACHE_MS });
    return row;
  }

  /** The columns a prepared config and its secrets are stored in. */
  private preparedColumns(prepared: Prepared): Partial<InboxRow> {
    const out: Partial<InboxRow> = { config: prepared.config };
    if (prepared.signingSecret) out.secretSealed = this.ctx.box.seal(prepared.signingSecret);
    if (prepared.inboundSecret) out.secretHash = sha256Hex(prepared.inboundSecret);
    return out;
  }

  async createInbox(scope: Scope, input: InboxInput) {
    const adapter = this.adapter(input.channel);
    const projectId = (await this.ctx.ports.orgs.projectFor(scope, input.projectId)) ?? (await this.ctx.ports.orgs.defaultProjectId(scope.orgId));
    const id = newId('inbox');
    const inboundUrl = this.inboundUrl({ id, orgId: scope.orgId, channel: input.channel });
    const plans = this.ctx.ports.plans?.enabled ? this.ctx.ports.plans : null;
    // Checked before the channel is set up (a Telegram webhook is registered then), and again with the insert.
    if (plans) await transaction(this.ctx.db, (tx) => plans.assertRoom(tx, scope.orgId, 'inboxes'));
    const prepared = await adapter.prepare(input.config ?? {}, null, {
      inboxId: id,
      inboundUrl,
      credentials: input.credentials ?? null,
      credentialsChanged: Boolean(input.credentials),
    });
    const insert = (db: Db) =>
      db
        .insert(inboxes)
        .values({
          id,
          orgId: scope.orgId,
          projectId,
          name: input.name,
          channel: input.channel,
          config: prepared.config,
          bot: input.bot ?? { enabled: false },
          credentialsSealed: input.credentials ? this.ctx.box.seal(JSON.stringify(input.credentials)) : null,
          secretSealed: null,
          secretHash: null,
          ...this.preparedColumns(prepared),
        })
        .returning();
    const [row] = plans
      ? await transaction(this.ctx.db, async (tx) => {
          await plans.assertRoom(tx, scope.orgId, 'inboxes');
          return insert(tx);
        })
      : await insert(this.ctx.db);
    return { ...this.publicInbox(row!), ...(prepared.secrets ? { secrets: prepared.secrets } : {}) };
  }

  async inboxRow(scope: Scope, id: string): Promise<InboxRow> {
    const [row] = await this.ctx.db
      .select()
      .from(inboxes)
      .where(inScope(scope, inboxes, eq(inboxes.id, id)));
    if (!row) throw notFound('Inbox');
    return row;
  }

  async listInboxes(scope: Scope, query: ListQuery & { channel?: string }) {
    const page = pageOf(query);
    const where = inScope(scope, inboxes, query.channel ? eq(inboxes.channel, query.channel) : undefined);
    const [items, counted] = await Promise.all([
      this.ctx.db.select().from(inboxes).where(where).orderBy(desc(inboxes.id)).limit(page.limit).offset(page.offset),
      this.ctx.db
        .select({ n: sql<number>`count(*)::int` })
        .from(inboxes)
        .where(where),
    ]);
    return envelope(
      items.map((r) => this.publicInbox(r)),
      counted[0]?.n ?? 0,
      page,
    );
  }

  async updateInbox(scope: Scope, id: string, patch: Partial<Pick<InboxInput, 'name' | 'config' | 'credentials' | 'bot'>>) {
    const before = await this.inboxRow(scope, id);
    const set: Partial<InboxRow> = { updatedAt: this.ctx.clock.now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.bot !== undefined) set.bot = patch.bot;
    if (patch.credentials !== undefined) set.credentialsSealed = this.ctx.box.seal(JSON.stringify(patch.credentials));
    if (patch.config !== undefined || patch.credentials !== undefined) {
      // New credentials may need the provider told again (a new bot token re-registers its webhook).
      const prepared = await this.adapter(before.channel).prepare(patch.config ?? {}, before.config, {
        inboxId: before.id,
        inboundUrl: this.inboundUrl(before),
        credentials: patch.credentials ?? this.credentialsOf(before),
        credentialsChanged: patch.credentials !== undefined,
      });
      Object.assign(set, this.preparedColumns(prepared));
    }
    const [row] = await this.ctx.db
      .update(inboxes)
      .set(set)
      .where(inScope(scope, inboxes, eq(inboxes.id, id)))
      .returning();
    this.inboxCache.delete(id);
    if (patch.credentials !== undefined) await this.retire(before.channel, this.credentialsOf(before), patch.credentials);
    return this.publicInbox(row!);
  }

  async deleteInbox(scope: Scope, id: string): Promise<void> {
    const row = await this.inboxRow(scope, id);
    await this.ctx.db.delete(inboxes).where(inScope(scope, inboxes, eq(inboxes.id, id)));
    this.inboxCache.delete(id);
    await this.retire(row.channel, this.credentialsOf(row));
  }

  /** The provider forgets an inbox's old account (best effort, after the change committed). */
  private async retire(channel: string, credentials: Record<string, string> | null, replacement?: Record<string, string>): Promise<void> {
    await this.ctx.adapters[channel as Channel]?.retire?.(credentials, replacement).catch(() => {});
  }

  /** An inbox of the scope for its inbound messages, as inboxById keeps it (a busy api inbox is read once per INBOX_CACHE_MS). */
  async inboundInbox(scope: Scope, id: string): Promise<InboxRow> {
    const row = await this.inboxById(id);
    if (!row || !visibleTo(scope, row)) throw notFound('Inbox');
    return row;
  }
}
