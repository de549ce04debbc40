import { and, asc, desc, eq, fillPlaceholders, gte, isNull, lt, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { fixedFragment, rows, type Database, type Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import type { Bus } from '../../platform/bus.ts';
import type { Scope } from '../../platform/context.ts';
import { SecretBox, safeEqual, sha256Hex } from '../../platform/crypto.ts';
import { badRequest, conflict, notFound, unprocessable } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import { inScope, visibleTo } from '../../platform/tenant.ts';
import type { EventsService, NewEvent } from '../events/service.ts';
import { eventRows, outboxCtes, outboxParam } from '../events/outbox.ts';
import type { OrgStream } from '../events/org-stream.ts';
import type { PlansService } from '../plans/service.ts';
import type { LeadsService } from '../leads/service.ts';
import type { NotificationsService } from '../notifications/service.ts';
import type { OrgsService } from '../orgs/service.ts';
import { CHANNELS, channelAdapters, notAvailable, type Channel, type ChannelAdapter, type Prepared } from './channels.ts';
import { conversationsMessagedForLead } from '../events/queries.ts';
import { rangeBound } from '../../platform/range.ts';
import { contacts, conversationReads, conversations, inboxes, messages } from './tables.ts';
import { conversationOpened, leadReplied, messageReceived, publicConversation, publicMessage, streamMessage } from './payloads.ts';
import { widgetSnippet } from './web.ts';

type InboxRow = typeof inboxes.$inferSelect;
type ContactRow = typeof contacts.$inferSelect;
type ConversationRow = typeof conversations.$inferSelect;
type MessageRow = typeof messages.$inferSelect;
/** An outbound message as the watchers of watchOutbound see it. */
export type OutboundMessage = MessageRow;

/** The sender loop is woken through the bus when a commit queued a message. */
export const OUTBOUND_WAKE = 'wake:conversations-outbound';

/** The leads service as this module uses it (a narrow port). */
export type LeadsPort = Pick<LeadsService, 'findOrCreate' | 'get' | 'find'>;
export type NotifyPort = Pick<NotificationsService, 'notify'>;
export type OrgsPort = Pick<OrgsService, 'projectFor' | 'defaultProjectId' | 'roleOf'>;

export interface ConversationPorts {
  bus: Bus; orgStream: OrgStream; events: EventsService; leads: LeadsPort; notifications: NotifyPort; orgs: OrgsPort;
  /** The plan's inboxes limit (CONTRACT §12). */
  plans?: Pick<PlansService, 'enabled' | 'assertRoom'>;
}

export interface InboxInput {
  name: string;
  channel: string;
  projectId?: string;
  config?: Record<string, unknown>;
  credentials?: Record<string, string>;
  bot?: { enabled: boolean; agentId?: string; modelId?: string };
}

/** One inbound message as a channel hands it over (after the channel verified the sender). */
export interface InboundInput {
  contact: { name?: string; address: string };
  text: string;
  /** The provider's id for the message: a retry with the same id is stored once. */
  externalId?: string;
  mediaUrl?: string;
  /** False when the address is not an e-mail or phone number whatever it looks like (a Telegram chat id): no lead is matched or created. */
  linkLead?: boolean;
  /** The thread's subject, kept when this message opens a conversation (e-mail). */
  subject?: string;
  /** An automatic answer (out-of-office, `Auto-Submitted` other than `no`): stored, but it is not a reply. */
  autoReply?: boolean;
  /**
   * Provider ids of the earlier messages this one answers (e-mail `References` and `In-Reply-To`,
   * the one it answers last): when the contact has no open conversation, the closed conversation of
   * the newest of them is reopened instead of a new one being opened.
   */
  threadIds?: string[];
}

/** A provider's pre-approved message (WhatsApp), sent instead of free text outside the channel's window. */
export interface MessageTemplate {
  name: string;
  language: string;
  components?: unknown[];
}

/** What a person sends: text, or a template where the channel needs one. */
export interface OutboundInput {
  text?: string;
  template?: MessageTemplate;
}

/** The text a template message is stored and shown with. */
function templateText(template: MessageTemplate): string {
  return `[template ${template.name} (${template.language})]`;
}

/** Exactly one of text and template. */
function outboundOf(input: OutboundInput): { text: string; template: MessageTemplate | null } {
  if (input.text !== undefined && input.template !== undefined) throw badRequest('Send either text or a template, not both', [{ field: 'body.template', message: 'must not be given with text' }]);
  if (input.template) return { text: templateText(input.template), template: input.template };
  if (input.text === undefined) throw badRequest('A message needs text (or, where the channel needs one, a template)', [{ field: 'body.text', message: 'is required' }]);
  return { text: input.text, template: null };
}

/** Delivery receipts, in the only order they may be applied (a later one never goes back). */
export const RECEIPT_ORDER = ['queued', 'sent', 'delivered', 'read'] as const;
export type Receipt = 'sent' | 'delivered' | 'read' | 'failed';

export interface ConversationQuery extends ListQuery {
  status?: string;
  inboxId?: string;
  channel?: string;
  handledBy?: string;
  assigneeId?: string;
  leadId?: string;
}

/**
 * Whether the lead (`leadId`, an expression) was sent outreach on the inbox's channel before
 * `before` (see wasReachedOut), as an expression: in this conversation's messages (messages_outreach_idx,
 * whose predicate this repeats: one probe however long the thread), else in the lead's `message.sent`
 * events (events_sent_lead_idx). The organization, channel and time may be placeholders of a
 * prepared statement.
 */
function reachedOutSql(orgId: string | Placeholder, channel: string | Placeholder, leadId: SQL, conversationId: SQL, before: Date | Placeholder): SQL {
  const at = before instanceof Date ? before.toISOString() : before;
  return sql`(${leadId} is not null and (exists (select 1 from ${messages} m where m.conversation_id = ${conversationId} and m.direction = 'out'
      and m.sender in ('human', 'campaign') and m.private = false and m.status in ('sent', 'delivered', 'read') and m.at < ${at}::timestamptz)
    or exists (select 1 from ${conversations} c where c.id in (${conversationsMessagedForLead(orgId, leadId, ['human', 'campaign'], at)}) and c.channel = ${channel})))`;
}

/** Whether the thread's lead was reached out to, inside RECEIVE_FAST: its parameters from $18 on. */
const REPLIED = fixedFragment(reachedOutSql(sql.placeholder('orgId'), sql.placeholder('channel'), sql`${sql.placeholder('leadId')}::text`, sql`${sql.placeholder('conversationId')}::text`, sql.placeholder('at')), 18);

/**
 * An inbound message in a thread that is open, in one autocommitted statement of fixed text (prepared
 * once per connection): the conversation's last message time — only while the conversation ($14)
 * and the contact ($15, $16) are the row versions (`xmin`) the caller read, so the events describe
 * them as they are, and while the provider's id is not stored — the message ($2…$10), its events
 * ($11, the events module's CTEs, written only with the message; $17's `lead.replied` only if the lead
 * was reached out to, decided here, REPLIED) and the NOTIFY that tells the other instances'
 * organization streams ($12 channel, $13 payload; none on the embedded store). Nothing stored (0):
 * the caller takes the locked way. Returns the conversation's new version.
 */
const RECEIVE_FAST = `
  with conv as (
    update conversations set last_message_at = $10::timestamptz
    where id = $1::text and status = 'OPEN' and xmin::text = $14::text
      and exists (select 1 from contacts where id = $15::text and xmin::text = $16::text)
      and not exists (select 1 from messages where inbox_id = $5::text and direction = 'in' and external_id = $7::text)
    returning id, xmin::text as version),
  m as (
    insert into messages (id, org_id, project_id, inbox_id, conversation_id, direction, sender, text, status, external_id, media_url, auto_reply, at)
    select $2::text, $3::text, $4::text, $5::text, conv.id, 'in', 'contact', $6::text, 'received', $7::text, $8::text, $9::boolean, $10::timestamptz from conv
    on conflict (inbox_id, direction, external_id) do nothing
    returning id),
  replied as (select 1 from m where not $9::boolean and ${REPLIED.text}),
  ${outboxCtes({ json: '$11', when: 'm', also: { json: '$17', when: 'replied' } })},
  told as (select pg_notify($12::text, $13::text) from m where $12::text is not null)
  select (select count(*) from m)::int as stored, (select version from conv) as version, (select count(*) from told)::int as told`;

/** A contact and its open thread as last read or written here, with the row versions that prove it. */
interface Thread { contact: ContactRow; contactVersion: string; conversation: ConversationRow; version: string }

/**
 * receiveInbound's read — the contact, its open thread, their row versions, whether the provider's
 * id is stored already — prepared once per service (on PostgreSQL a named statement per pooled
 * connection: built, parsed and planned once instead of for every message).
 */
function receiveReadQuery(db: Db) {
  const p = sql.placeholder;
  return db.select({
    contact: contacts, conversation: conversations,
    contactVersion: sql<string>`${contacts}.xmin::text`, version: sql<string | null>`${conversations}.xmin::text`,
    duplicate: sql<string | null>`(select ${messages.id} from ${messages} where ${messages.inboxId} = ${p('inboxId')} and ${messages.direction} = 'in' and ${messages.externalId} = ${p('externalId')}::text)`,
  }).from(contacts).leftJoin(conversations, and(eq(conversations.contactId, contacts.id), eq(conversations.status, 'OPEN')))
    .where(and(eq(contacts.inboxId, p('inboxId')), eq(contacts.address, p('address'))))
    .prepare('conversation_receive_read');
}

/** How many contacts' threads an instance keeps for RECEIVE_FAST without a read (see receiveInbound). */
const THREAD_CACHE_MAX = 10_000;

/** How long the providers' inbound routes keep an inbox found by id (see inboxById), and how many. */
const INBOX_CACHE_MS = 2000;
const INBOX_CACHE_MAX = 1000;

const isEmail = (s: string) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s);
const isPhone = (s: string) => /^\+?[0-9 ().-]{6,20}$/.test(s) && /\d{6,}/.test(s.replace(/\D/g, ''));

/** Conversations: inboxes, contacts, messages, handoff, and the outbound queue's writer. */
export class ConversationsService {
  private readonly db: Db;
  private readonly database: Database;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly bus: Bus;
  private readonly box: SecretBox;
  readonly adapters: Partial<Record<Channel, ChannelAdapter>>;
  private readonly ports: ConversationPorts;
  private receiveRead?: ReturnType<typeof receiveReadQuery>;
  /** Per contact (`inbox id \n address`), the thread RECEIVE_FAST last wrote here. */
  private readonly threads = new Map<string, Thread>();
  private readonly openedCredentials = new Map<string, Record<string, string>>();
  private readonly inboxCache = new Map<string, { row: InboxRow; until: number }>();
  /** PROVIDER_WEBHOOK_RATE_LIMIT_MAX, for the providers' inbound routes. */
  readonly providerRateMax: number;

  constructor(deps: Deps, ports: ConversationPorts) {
    this.ports = ports;
    this.db = deps.db;
    this.database = deps.database;
    this.providerRateMax = deps.config.providerWebhookRateMax;
    this.clock = deps.clock;
    this.config = deps.config;
    this.bus = ports.bus;
    this.box = new SecretBox(deps.config.appSecret);
    this.adapters = channelAdapters({
      allowPrivate: deps.config.webhookAllowPrivate, timeoutMs: deps.config.webhookTimeoutMs, publicUrl: deps.config.publicUrl,
      whatsappApiBaseUrl: deps.config.whatsappApiBaseUrl, telegramApiBaseUrl: deps.config.telegramApiBaseUrl, smtpUrl: deps.config.smtpUrl,
    });
  }

  /** At shutdown: the channels let go of their connections. */
  async closeChannels(): Promise<void> {
    await Promise.all(Object.values(this.adapters).map((adapter) => adapter?.close?.()));
  }

  // ---------------------------------------------------------------- inboxes

  inboundUrl(row: Pick<InboxRow, 'id' | 'orgId' | 'channel'>): string {
    if (row.channel === 'api') return `${this.config.publicUrl}/api/v1/orgs/${row.orgId}/inboxes/${row.id}/messages`;
    if (row.channel === 'web') return `${this.config.publicUrl}/api/v1/widget/${row.id}/messages`;
    return `${this.config.publicUrl}/api/v1/hooks/${row.channel}/${row.id}`;
  }

  publicInbox(row: InboxRow) {
    return {
      id: row.id, name: row.name, channel: row.channel, projectId: row.projectId, config: row.config, bot: row.bot, inboundUrl: this.inboundUrl(row), createdAt: row.createdAt, updatedAt: row.updatedAt,
      ...(row.channel === 'web' ? { widgetSnippet: widgetSnippet(this.config.publicUrl, row.id) } : {}),
    };
  }

  private adapter(channel: string): ChannelAdapter {
    if (!(CHANNELS as readonly string[]).includes(channel)) throw badRequest(`Unknown channel '${channel}'; channels: ${CHANNELS.join(', ')}`, [{ field: 'body.channel', message: `must be one of ${CHANNELS.join(', ')}` }]);
    const adapter = this.adapters[channel as Channel];
    if (!adapter) throw notAvailable(channel);
    return adapter;
  }

  /** The inbound route of one channel named with an inbox of another. */
  wrongChannel(channel: string) {
    return unprocessable('WRONG_CHANNEL', `This route takes messages for api inboxes; this inbox is a ${channel} inbox`);
  }

  signingSecretOf(row: Pick<InboxRow, 'secretSealed'>): string | null {
    return row.secretSealed ? this.box.open(row.secretSealed) : null;
  }

  /** The inbox's provider credentials, opened (never returned by the API). */
  credentialsOf(row: Pick<InboxRow, 'credentialsSealed'>): Record<string, string> | null {
    const sealed = row.credentialsSealed;
    if (!sealed) return null;
    // A provider route opens the same inbox's credentials for every delivery (its signing secret):
    // opened once per sealed value (a changed credential is a new one), at most INBOX_CACHE_MAX kept.
    let opened = this.openedCredentials.get(sealed);
    if (!opened) {
      opened = JSON.parse(this.box.open(sealed)) as Record<string, string>;
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
    const [row] = await this.db.select().from(inboxes).where(eq(inboxes.id, id));
    if (!row) return undefined;
    if (this.inboxCache.size >= INBOX_CACHE_MAX) this.inboxCache.clear();
    this.inboxCache.set(id, { row, until: now + INBOX_CACHE_MS });
    return row;
  }

  /** The columns a prepared config and its secrets are stored in. */
  private preparedColumns(prepared: Prepared): Partial<InboxRow> {
    const out: Partial<InboxRow> = { config: prepared.config };
    if (prepared.signingSecret) out.secretSealed = this.box.seal(prepared.signingSecret);
    if (prepared.inboundSecret) out.secretHash = sha256Hex(prepared.inboundSecret);
    return out;
  }

  async createInbox(scope: Scope, input: InboxInput) {
    const adapter = this.adapter(input.channel);
    const projectId = (await this.ports.orgs.projectFor(scope, input.projectId)) ?? (await this.ports.orgs.defaultProjectId(scope.orgId));
    const id = newId('inbox');
    const inboundUrl = this.inboundUrl({ id, orgId: scope.orgId, channel: input.channel });
    const plans = this.ports.plans?.enabled ? this.ports.plans : null;
    // Checked before the channel is set up (a Telegram webhook is registered then), and again with the insert.
    if (plans) await this.db.transaction((tx) => plans.assertRoom(tx as unknown as Db, scope.orgId, 'inboxes'));
    const prepared = await adapter.prepare(input.config ?? {}, null, { inboxId: id, inboundUrl, credentials: input.credentials ?? null, credentialsChanged: Boolean(input.credentials) });
    const insert = (db: Db) => db.insert(inboxes).values({
      id, orgId: scope.orgId, projectId, name: input.name, channel: input.channel, config: prepared.config,
      bot: input.bot ?? { enabled: false },
      credentialsSealed: input.credentials ? this.box.seal(JSON.stringify(input.credentials)) : null,
      secretSealed: null, secretHash: null,
      ...this.preparedColumns(prepared),
    }).returning();
    const [row] = plans
      ? await this.db.transaction(async (trx) => {
        const tx = trx as unknown as Db;
        await plans.assertRoom(tx, scope.orgId, 'inboxes');
        return insert(tx);
      })
      : await insert(this.db);
    return { ...this.publicInbox(row!), ...(prepared.secrets ? { secrets: prepared.secrets } : {}) };
  }

  async inboxRow(scope: Scope, id: string): Promise<InboxRow> {
    const [row] = await this.db.select().from(inboxes).where(inScope(scope, inboxes, eq(inboxes.id, id)));
    if (!row) throw notFound('Inbox');
    return row;
  }

  async listInboxes(scope: Scope, query: ListQuery & { channel?: string }) {
    const page = pageOf(query);
    const where = inScope(scope, inboxes, query.channel ? eq(inboxes.channel, query.channel) : undefined);
    const [items, counted] = await Promise.all([
      this.db.select().from(inboxes).where(where).orderBy(desc(inboxes.id)).limit(page.limit).offset(page.offset),
      this.db.select({ n: sql<number>`count(*)::int` }).from(inboxes).where(where),
    ]);
    return envelope(items.map((r) => this.publicInbox(r)), counted[0]?.n ?? 0, page);
  }

  async updateInbox(scope: Scope, id: string, patch: Partial<Pick<InboxInput, 'name' | 'config' | 'credentials' | 'bot'>>) {
    const before = await this.inboxRow(scope, id);
    const set: Partial<InboxRow> = { updatedAt: this.clock.now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.bot !== undefined) set.bot = patch.bot;
    if (patch.credentials !== undefined) set.credentialsSealed = this.box.seal(JSON.stringify(patch.credentials));
    if (patch.config !== undefined || patch.credentials !== undefined) {
      // New credentials may need the provider told again (a new bot token re-registers its webhook).
      const prepared = await this.adapter(before.channel).prepare(patch.config ?? {}, before.config, {
        inboxId: before.id, inboundUrl: this.inboundUrl(before), credentials: patch.credentials ?? this.credentialsOf(before), credentialsChanged: patch.credentials !== undefined,
      });
      Object.assign(set, this.preparedColumns(prepared));
    }
    const [row] = await this.db.update(inboxes).set(set).where(inScope(scope, inboxes, eq(inboxes.id, id))).returning();
    this.inboxCache.delete(id);
    if (patch.credentials !== undefined) await this.retire(before.channel, this.credentialsOf(before), patch.credentials);
    return this.publicInbox(row!);
  }

  async deleteInbox(scope: Scope, id: string): Promise<void> {
    const row = await this.inboxRow(scope, id);
    await this.db.delete(inboxes).where(inScope(scope, inboxes, eq(inboxes.id, id)));
    this.inboxCache.delete(id);
    await this.retire(row.channel, this.credentialsOf(row));
  }

  /** The provider forgets an inbox's old account (best effort, after the change committed). */
  private async retire(channel: string, credentials: Record<string, string> | null, replacement?: Record<string, string>): Promise<void> {
    await this.adapters[channel as Channel]?.retire?.(credentials, replacement).catch(() => {});
  }

  // ---------------------------------------------------------------- inbound

  /**
   * Web widget and Telegram: an anonymous contact who gave an e-mail address or a phone number is linked to the
   * lead those stand for (matched, or created with source = the channel), and so is its open
   * conversation. A contact already linked keeps its lead. Returns the contact's lead, if any.
   */
  async identifyContact(inbox: InboxRow, contactId: string, who: { name?: string; email?: string; phone?: string }): Promise<string | null> {
    const [contact] = await this.db.select().from(contacts).where(and(eq(contacts.id, contactId), eq(contacts.inboxId, inbox.id)));
    if (!contact) return null;
    if (contact.leadId) return contact.leadId;
    const scope: Scope = { orgId: inbox.orgId, projectId: inbox.projectId, actor: { type: 'system', id: `inbox:${inbox.id}` } };
    const leadId = (who.email ? await this.leadFor(scope, inbox, who.email, who.name) : null) ?? (who.phone ? await this.leadFor(scope, inbox, who.phone, who.name) : null);
    if (!leadId) return null;
    await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      await tx.update(contacts).set({ leadId, ...(who.name && !contact.name ? { name: who.name } : {}) }).where(and(eq(contacts.id, contact.id), sql`${contacts.leadId} is null`));
      await tx.update(conversations).set({ leadId }).where(and(eq(conversations.contactId, contact.id), eq(conversations.status, 'OPEN'), sql`${conversations.leadId} is null`));
    });
    return leadId;
  }

  /** identifyContact for the contact of an inbox with that address (a Telegram chat id), if there is one. */
  async identifyAddress(inbox: InboxRow, address: string, who: { name?: string; email?: string; phone?: string }): Promise<string | null> {
    const [contact] = await this.db.select({ id: contacts.id }).from(contacts).where(and(eq(contacts.inboxId, inbox.id), eq(contacts.address, address)));
    return contact ? this.identifyContact(inbox, contact.id, who) : null;
  }

  /** The lead a contact address stands for: matched by e-mail or phone, or created with source = channel. */
  private async leadFor(scope: Scope, inbox: InboxRow, address: string, name: string | undefined, created?: Set<string>): Promise<string | null> {
    const keys = isEmail(address) ? { email: address } : isPhone(address) ? { phone: address } : null;
    if (!keys) return null;
    try {
      const found = await this.ports.leads.findOrCreate({ ...scope, projectId: inbox.projectId }, { projectId: inbox.projectId, ...keys, ...(name ? { name } : {}), source: inbox.channel });
      if (found.created) created?.add(found.lead.id);
      return found.lead.id;
    } catch {
      // An address the leads module refuses (an impossible phone number) stays a contact.
      return null;
    }
  }

  /**
   * Stores one inbound message and, in the same transaction, the conversation it opens and its
   * events; the org stream hears of it at commit. A provider's retry (same externalId) changes
   * nothing and answers the stored message.
   */
  async receive(scope: Scope, inboxId: string, input: InboundInput) {
    return this.receiveInbound(await this.inboundInbox(scope, inboxId), input);
  }

  /** An inbox of the scope for its inbound messages, as inboxById keeps it (a busy api inbox is read once per INBOX_CACHE_MS). */
  async inboundInbox(scope: Scope, id: string): Promise<InboxRow> {
    const row = await this.inboxById(id);
    if (!row || !visibleTo(scope, row)) throw notFound('Inbox');
    return row;
  }

  /**
   * One inbound message from any channel, once the channel verified where it comes from: stored (with
   * its contact, lead and conversation) before the caller answers the provider.
   */
  async receiveInbound(inbox: InboxRow, input: InboundInput) {
    const scope: Scope = { orgId: inbox.orgId, projectId: inbox.projectId, actor: { type: 'system', id: `inbox:${inbox.id}` } };
    const address = input.contact.address.trim();
    // The common case, a known contact writing in an open thread, is one statement: RECEIVE_FAST,
    // from the thread this instance last wrote for the contact (its row versions prove it unchanged)
    // or else from one read.
    const key = `${inbox.id}\n${address}`;
    const fastWay = (thread: Thread) => (input.contact.name === undefined || input.contact.name === thread.contact.name)
      && (!thread.contact.leadId || thread.conversation.leadId === thread.contact.leadId) && !input.threadIds?.length;
    const hot = this.threads.get(key);
    if (hot) {
      const fast = fastWay(hot) ? await this.receiveFast(inbox, hot, input, key) : null;
      if (fast) return fast;
      this.threads.delete(key);
    }
    const [known] = await (this.receiveRead ??= receiveReadQuery(this.db)).execute({ inboxId: inbox.id, address, externalId: input.externalId ?? null });
    // A new contact has no stored message, unless its first message was stored a moment ago.
    const duplicate = known ? (known.duplicate ? await this.messageRow(known.duplicate) : undefined) : input.externalId ? await this.byExternalId(inbox.id, input.externalId) : undefined;
    if (duplicate) return { message: publicMessage(duplicate), duplicate: true };
    const existing = known?.contact;
    if (known?.conversation && known.version) {
      const thread: Thread = { contact: known.contact, contactVersion: known.contactVersion, conversation: known.conversation, version: known.version };
      const fast = fastWay(thread) ? await this.receiveFast(inbox, thread, input, key) : null;
      if (fast) return fast;
    }
    const newLeads = new Set<string>();
    const leadId = existing?.leadId ?? (input.linkLead === false ? null : await this.leadFor(scope, inbox, address, input.contact.name, newLeads));
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.store(inbox, address, input, leadId, leadId !== null && newLeads.has(leadId));
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        // A concurrent retry of the same provider message committed first: answer it.
        if (input.externalId) {
          const stored = await this.byExternalId(inbox.id, input.externalId);
          if (stored) return { message: publicMessage(stored), duplicate: true };
        }
        // A concurrent first message of the same contact opened the thread: join it.
        if (attempt >= 3) throw error;
      }
    }
  }

  /**
   * RECEIVE_FAST; null when it stored nothing (a retry, or the thread or contact changed since
   * `thread` was read: closed, taken over, another message). Keeps the thread as written for the
   * contact's next message.
   */
  private async receiveFast(inbox: InboxRow, thread: Thread, input: InboundInput, key: string) {
    const { contact, conversation } = thread;
    const now = this.clock.now();
    const message: MessageRow = {
      id: newId('message', now.getTime()), orgId: inbox.orgId, projectId: inbox.projectId, inboxId: inbox.id, conversationId: conversation.id,
      direction: 'in', sender: 'contact', authorId: null, text: input.text, subject: null, mediaUrl: input.mediaUrl ?? null, template: null, private: false,
      autoReply: input.autoReply ?? false, status: 'received', externalId: input.externalId ?? null, error: null, attempts: 0, nextAttemptAt: null, lockedUntil: null, at: now,
      streamSeq: null,
    };
    const written = { ...conversation, lastMessageAt: now };
    const received: NewEvent[] = [messageReceived(message, written, contact)];
    // `lead.replied` carries the lead as it is (SPEC); the statement decides whether it is written.
    const lead = contact.leadId && !message.autoReply ? await this.ports.leads.find(this.db, inbox.orgId, contact.leadId) : null;
    const replied: NewEvent[] = lead ? [leadReplied(lead, message, inbox.channel)] : [];
    const heard = streamMessage(message, inbox.channel, { row: written, contact });
    const others = this.ports.orgStream.notifyOthersParams(inbox.orgId, [heard]);
    if (others === false) return null;
    const replyParams = fillPlaceholders(REPLIED.params, { orgId: inbox.orgId, channel: inbox.channel, leadId: contact.leadId, conversationId: conversation.id, at: now.toISOString() });
    const [result] = await this.database.prepared<{ stored: number; version: string | null }>('conversation_receive_fast', RECEIVE_FAST, [
      conversation.id, message.id, inbox.orgId, inbox.projectId, inbox.id, message.text, message.externalId, message.mediaUrl, message.autoReply,
      now.toISOString(), outboxParam(eventRows(received, now)), others?.channel ?? null, others?.payload ?? null, thread.version, contact.id, thread.contactVersion,
      outboxParam(eventRows(replied, now)), ...replyParams,
    ]);
    if (result?.stored !== 1 || !result.version) return null;
    if (this.threads.size >= THREAD_CACHE_MAX) this.threads.clear();
    this.threads.set(key, { ...thread, conversation: written, version: result.version });
    this.ports.events.wakeLocal();
    this.ports.orgStream.emitLocal(inbox.orgId, [heard]);
    return { message: publicMessage(message), duplicate: false };
  }

  private async messageRow(id: string): Promise<MessageRow | undefined> {
    const [row] = await this.db.select().from(messages).where(eq(messages.id, id));
    return row;
  }

  private async store(inbox: InboxRow, address: string, input: InboundInput, leadId: string | null, newLead = false) {
    const now = this.clock.now();
    const result = await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const contact = await this.upsertContact(tx, inbox, address, input.contact.name ?? null, leadId);
      const events: NewEvent[] = [];
      let conversation = await this.openConversation(tx, contact.id, input.threadIds?.length ? { inboxId: inbox.id, ids: input.threadIds } : undefined);
      if (!conversation) {
        [conversation] = await tx.insert(conversations).values({
          id: newId('conversation', now.getTime()), orgId: inbox.orgId, projectId: inbox.projectId, inboxId: inbox.id, channel: inbox.channel,
          contactId: contact.id, leadId: contact.leadId, subject: input.subject ?? null, status: 'OPEN', handledBy: inbox.bot.enabled ? 'bot' : 'human', lastMessageAt: now, openedAt: now,
        }).returning();
        events.push(conversationOpened(conversation!, contact));
      } else {
        [conversation] = await tx.update(conversations).set({ lastMessageAt: now, ...(contact.leadId && !conversation.leadId ? { leadId: contact.leadId } : {}) })
          .where(eq(conversations.id, conversation.id)).returning();
      }
      const [message] = await tx.insert(messages).values({
        id: newId('message', now.getTime()), orgId: inbox.orgId, projectId: inbox.projectId, inboxId: inbox.id, conversationId: conversation!.id,
        direction: 'in', sender: 'contact', text: input.text, status: 'received', externalId: input.externalId ?? null, mediaUrl: input.mediaUrl ?? null, autoReply: input.autoReply ?? false, at: now,
      }).returning();
      events.push(messageReceived(message!, conversation!, contact));
      if (contact.leadId && !input.autoReply && !newLead && (await this.wasReachedOut(tx, inbox, contact.leadId, conversation!.id, now))) {
        const lead = await this.ports.leads.find(tx, inbox.orgId, contact.leadId);
        if (lead) events.push(leadReplied(lead, message!, inbox.channel));
      }
      await this.ports.events.record(tx, events);
      await this.ports.orgStream.publishInTx(tx, inbox.orgId, streamMessage(message!, inbox.channel, { row: conversation!, contact }));
      return message!;
    });
    return { message: publicMessage(result), duplicate: false };
  }

  /**
   * Whether the lead was sent outreach on this inbox's channel before `before`: a message a person or
   * an automation (`human`, `campaign`: campaigns and workflows) sent and the provider accepted (not a
   * private note, not the bot's answer), in this conversation or in another of the lead's on the same
   * channel. Then an inbound message of the lead is a reply (`lead.replied`). One statement: this
   * conversation's messages (their index), else the lead's `message.sent` events (events_lead_idx,
   * whose expression and predicate this repeats).
   */
  private async wasReachedOut(tx: Db, inbox: Pick<InboxRow, 'orgId' | 'channel'>, leadId: string, conversationId: string, before: Date): Promise<boolean> {
    const result = await tx.execute(sql`select ${reachedOutSql(inbox.orgId, inbox.channel, sql`${leadId}::text`, sql`${conversationId}::text`, before)} as reached`) as unknown as { rows: { reached: boolean }[] };
    return result.rows[0]?.reached === true;
  }

  /**
   * A provider's delivery receipt for an outbound message (by the provider's id): applied only
   * forward (sent → delivered → read; `failed` only before delivery), so a late or repeated receipt
   * changes nothing. The organization stream hears of a change. Returns whether anything changed.
   */
  async applyReceipt(inbox: Pick<InboxRow, 'id' | 'orgId' | 'channel'>, externalId: string, status: Receipt, error?: string): Promise<boolean> {
    const rank = (s: string) => RECEIPT_ORDER.indexOf(s as (typeof RECEIPT_ORDER)[number]);
    const allowedFrom = status === 'failed' ? ['queued', 'sent'] : RECEIPT_ORDER.filter((s) => rank(s) < rank(status));
    return this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const [row] = await tx.update(messages).set({ status, ...(status === 'failed' ? { error: (error ?? 'the provider reported a failure').slice(0, 1000), nextAttemptAt: null, lockedUntil: null } : {}) })
        .where(and(eq(messages.inboxId, inbox.id), eq(messages.direction, 'out'), eq(messages.externalId, externalId), sql`${messages.status} = any(${sql.param(allowedFrom)}::text[])`))
        .returning();
      if (!row) return false;
      await this.announce(tx, row, inbox.channel);
      await this.outboundChanged(tx, [row]);
      return true;
    });
  }

  /** Tells the organization stream (at commit) that a message of a conversation on `channel` was written or changed: a reply, a note, a failure. */
  announce(tx: Db, row: MessageRow, channel: string): Promise<void> {
    return this.ports.orgStream.publishInTx(tx, row.orgId, streamMessage(row, channel));
  }

  private async byExternalId(inboxId: string, externalId: string): Promise<MessageRow | undefined> {
    const [row] = await this.db.select().from(messages).where(and(eq(messages.inboxId, inboxId), eq(messages.direction, 'in'), eq(messages.externalId, externalId)));
    return row;
  }

  private async contactRow(inboxId: string, address: string): Promise<ContactRow | undefined> {
    const [row] = await this.db.select().from(contacts).where(and(eq(contacts.inboxId, inboxId), eq(contacts.address, address)));
    return row;
  }

  private async upsertContact(tx: Db, inbox: InboxRow, address: string, name: string | null, leadId: string | null): Promise<ContactRow> {
    const [row] = await tx.insert(contacts).values({ id: newId('contact'), orgId: inbox.orgId, projectId: inbox.projectId, inboxId: inbox.id, address, name, leadId })
      .onConflictDoUpdate({
        target: [contacts.inboxId, contacts.address],
        set: { name: sql`coalesce(excluded.name, ${contacts.name})`, leadId: sql`coalesce(${contacts.leadId}, excluded.lead_id)` },
      }).returning();
    return row!;
  }

  /**
   * The contact's open conversation. Else, for a message answering earlier ones (`thread`: the
   * provider ids it names), the conversation of the newest of them that is this contact's, reopened
   * (as Chatwoot does with a reply to a resolved e-mail thread); a concurrent open of another thread
   * fails the unique index and the caller's retry joins that one.
   */
  private async openConversation(tx: Db, contactId: string, thread?: { inboxId: string; ids: string[] }): Promise<ConversationRow | undefined> {
    const [row] = await tx.select().from(conversations).where(and(eq(conversations.contactId, contactId), eq(conversations.status, 'OPEN'))).for('update');
    if (row || !thread) return row;
    const [earlier] = await tx.select({ conversationId: messages.conversationId }).from(messages)
      .innerJoin(conversations, eq(conversations.id, messages.conversationId))
      // Both directions named, so the (inbox, direction, external id) index finds the ids.
      .where(and(eq(messages.inboxId, thread.inboxId), sql`${messages.direction} in ('in', 'out')`, sql`${messages.externalId} = any(${sql.param(thread.ids)}::text[])`, eq(conversations.contactId, contactId)))
      .orderBy(desc(messages.at), desc(messages.id)).limit(1);
    if (!earlier) return undefined;
    const [reopened] = await tx.update(conversations).set({ status: 'OPEN', closedAt: null, resolvedBy: null })
      .where(and(eq(conversations.id, earlier.conversationId), eq(conversations.status, 'CLOSED'))).returning();
    return reopened;
  }

  // ---------------------------------------------------------------- conversations

  private readerOf(scope: Scope): string {
    return scope.actor.id;
  }

  private unreadSql(scope: Scope): SQL<number> {
    return sql<number>`(select count(*)::int from ${messages} m where m.conversation_id = ${conversations.id} and m.direction = 'in'
      and m.at > coalesce((select r.read_at from ${conversationReads} r where r.conversation_id = ${conversations.id} and r.reader_id = ${this.readerOf(scope)}), '-infinity'::timestamptz))`;
  }

  private async view(scope: Scope, id: string) {
    const [row] = await this.db.select({ c: conversations, contact: contacts, unread: this.unreadSql(scope) })
      .from(conversations).innerJoin(contacts, eq(contacts.id, conversations.contactId))
      .where(inScope(scope, conversations, eq(conversations.id, id)));
    if (!row) throw notFound('Conversation');
    return { row: row.c, contact: row.contact, out: publicConversation(row.c, row.contact, row.unread) };
  }

  async get(scope: Scope, id: string) {
    return (await this.view(scope, id)).out;
  }

  async list(scope: Scope, query: ConversationQuery) {
    const page = pageOf(query);
    const conditions: (SQL | undefined)[] = [
      query.status ? eq(conversations.status, query.status) : undefined,
      query.inboxId ? eq(conversations.inboxId, query.inboxId) : undefined,
      query.channel ? eq(conversations.channel, query.channel) : undefined,
      query.handledBy ? eq(conversations.handledBy, query.handledBy) : undefined,
      query.assigneeId === 'none' ? isNull(conversations.assigneeId) : query.assigneeId ? eq(conversations.assigneeId, query.assigneeId) : undefined,
      query.leadId ? eq(conversations.leadId, query.leadId) : undefined,
    ];
    const q = query.q?.trim();
    if (q) {
      const like = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      conditions.push(sql`exists (select 1 from ${messages} m where m.conversation_id = ${conversations.id} and m.text ilike ${like})`);
    }
    const where = inScope(scope, conversations, ...conditions);
    const order = orderBy(query.sort, { lastMessageAt: conversations.lastMessageAt, openedAt: conversations.openedAt }, '-lastMessageAt', conversations.id);
    const [items, counted] = await Promise.all([
      this.db.select({ c: conversations, contact: contacts, unread: this.unreadSql(scope) }).from(conversations)
        .innerJoin(contacts, eq(contacts.id, conversations.contactId)).where(where).orderBy(...order).limit(page.limit).offset(page.offset),
      this.db.select({ n: sql<number>`count(*)::int` }).from(conversations).where(where),
    ]);
    return envelope(items.map((r) => publicConversation(r.c, r.contact, r.unread)), counted[0]?.n ?? 0, page);
  }

  async listMessages(scope: Scope, id: string, query: ListQuery) {
    await this.view(scope, id);
    const page = pageOf(query);
    const where = and(eq(messages.orgId, scope.orgId), eq(messages.conversationId, id));
    const [items, counted] = await Promise.all([
      this.db.select().from(messages).where(where).orderBy(asc(messages.at), asc(messages.id)).limit(page.limit).offset(page.offset),
      this.db.select({ n: sql<number>`count(*)::int` }).from(messages).where(where),
    ]);
    return envelope(items.map(publicMessage), counted[0]?.n ?? 0, page);
  }

  /**
   * The channel's own rules for a send about to be queued (WhatsApp's 24-hour window, Telegram's
   * no-first-message): throws the channel's 422.
   */
  private async checkSend(tx: Db, channel: string, contactId: string | null, template: boolean, now: Date): Promise<void> {
    const adapter = this.adapters[channel as Channel];
    if (!adapter?.checkSend) return;
    // The contact's last word on this inbox, in any of its threads: WhatsApp's window and
    // Telegram's "the contact wrote first" are the contact's, not one conversation's.
    let lastInboundAt: Date | null = null;
    if (contactId) {
      const [last] = await tx.select({ at: sql<Date | null>`max(${messages.at})` }).from(messages)
        .where(and(sql`${messages.conversationId} in (select ${conversations.id} from ${conversations} where ${conversations.contactId} = ${contactId})`, eq(messages.direction, 'in')));
      lastInboundAt = last?.at ? new Date(last.at) : null;
    }
    adapter.checkSend({ starting: lastInboundAt === null, lastInboundAt, template, now });
  }


  /** An outbound message, queued for the sender loop in the caller's transaction (woken at commit). */
  private async queue(tx: Db, conversation: ConversationRow, text: string, sender: 'human' | 'bot' | 'campaign', authorId: string | null, now: Date, template: MessageTemplate | null = null, id?: string, subject: string | null = null): Promise<MessageRow> {
    const [message] = await tx.insert(messages).values({
      id: id ?? newId('message', now.getTime()), orgId: conversation.orgId, projectId: conversation.projectId, inboxId: conversation.inboxId,
      conversationId: conversation.id, direction: 'out', sender, authorId, text, subject, template, status: 'queued', nextAttemptAt: now, at: now,
    }).returning();
    await this.bus.publishInTx(tx, OUTBOUND_WAKE, null);
    return message!;
  }

  private handoffEvent(row: ConversationRow, reason: string, by: 'bot' | 'human', assignedToId: string | null): NewEvent {
    return { orgId: row.orgId, projectId: row.projectId, type: 'conversation.handoff', payload: { conversationId: row.id, reason, by, ...(assignedToId ? { assignedToId } : {}), ...(row.leadId ? { leadId: row.leadId } : {}) } };
  }

  /** A human reply (queued for sending) or a private note (never sent). A reply in a bot-handled thread is a takeover. */
  async reply(scope: Scope, id: string, input: OutboundInput & { private?: boolean }) {
    const out = outboundOf(input);
    const now = this.clock.now();
    const authorId = scope.actor.id;
    const message = await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const [row] = await tx.select().from(conversations).where(inScope(scope, conversations, eq(conversations.id, id))).for('update');
      if (!row) throw notFound('Conversation');
      if (input.private) {
        const [note] = await tx.insert(messages).values({
          id: newId('message', now.getTime()), orgId: row.orgId, projectId: row.projectId, inboxId: row.inboxId, conversationId: row.id,
          direction: 'out', sender: 'human', authorId, text: out.text, private: true, status: 'sent', at: now,
        }).returning();
        await this.announce(tx, note!, row.channel);
        return note!;
      }
      if (row.status !== 'OPEN') throw conflict('This conversation is closed: reopen it before replying');
      await this.checkSend(tx, row.channel, row.contactId, out.template !== null, now);
      const set: Partial<ConversationRow> = { lastMessageAt: now };
      if (!row.firstReplyAt) set.firstReplyAt = now;
      if (row.handledBy === 'bot') {
        set.handledBy = 'human';
        set.handoffReason = 'takeover';
        set.handoffAt = now;
        if (scope.actor.type === 'user' && !row.assigneeId) set.assigneeId = scope.actor.id;
        await this.ports.events.record(tx, this.handoffEvent(row, 'takeover', 'human', set.assigneeId ?? row.assigneeId));
      }
      await tx.update(conversations).set(set).where(eq(conversations.id, row.id));
      const queued = await this.queue(tx, row, out.text, 'human', authorId, now, out.template);
      await this.announce(tx, queued, row.channel);
      return queued;
    });
    return publicMessage(message);
  }

  /**
   * The bot's answer (a CHATBOT turn's `reply` tool), queued only if, in the same transaction (the
   * conversation's row locked), the conversation is open and still handled by the bot: a person who
   * took over mid-turn means the reply is dropped, never sent.
   */
  async botReply(scope: Scope, id: string, text: string): Promise<{ message: ReturnType<typeof publicMessage> } | { dropped: string }> {
    const now = this.clock.now();
    return this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const [row] = await tx.select().from(conversations).where(inScope(scope, conversations, eq(conversations.id, id))).for('update');
      if (!row) throw notFound('Conversation');
      if (row.status !== 'OPEN') return { dropped: 'the conversation is closed' };
      if (row.handledBy !== 'bot') return { dropped: 'a person handles this conversation' };
      await this.checkSend(tx, row.channel, row.contactId, false, now);
      await tx.update(conversations).set({ lastMessageAt: now }).where(eq(conversations.id, row.id));
      const queued = await this.queue(tx, row, text, 'bot', null, now);
      await this.announce(tx, queued, row.channel);
      return { message: publicMessage(queued) };
    });
  }

  /** An outbound start: a conversation with a lead through an inbox, its first message queued. */
  async start(scope: Scope, input: OutboundInput & { inboxId: string; leadId: string; subject?: string }) {
    const out = outboundOf(input);
    const inbox = await this.inboxRow(scope, input.inboxId);
    const lead = await this.ports.leads.get(scope, input.leadId);
    if (lead.projectId !== inbox.projectId) throw badRequest('The lead and the inbox belong to different projects', [{ field: 'body.leadId', message: 'must be a lead of the inbox\'s project' }]);
    // E-mail reaches an address, WhatsApp a phone number, an api receiver whichever the lead has.
    const address = inbox.channel === 'email' ? lead.email : inbox.channel === 'whatsapp' ? lead.phone : (lead.email ?? lead.phone);
    const needs = inbox.channel === 'email' ? 'an e-mail address' : inbox.channel === 'whatsapp' ? 'a phone number' : 'an e-mail address or a phone number';
    if (!address) throw badRequest(`The lead has no address this channel can reach (${needs})`, [{ field: 'body.leadId', message: `has no ${needs}` }]);
    const now = this.clock.now();
    const id = await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const contact = await this.upsertContact(tx, inbox, address, lead.name ?? null, lead.id);
      let row = await this.openConversation(tx, contact.id);
      await this.checkSend(tx, inbox.channel, contact.id, out.template !== null, now);
      if (!row) {
        [row] = await tx.insert(conversations).values({
          id: newId('conversation', now.getTime()), orgId: inbox.orgId, projectId: inbox.projectId, inboxId: inbox.id, channel: inbox.channel,
          contactId: contact.id, leadId: lead.id, subject: input.subject ?? null, status: 'OPEN', handledBy: 'human',
          assigneeId: scope.actor.type === 'user' ? scope.actor.id : null, lastMessageAt: now, openedAt: now, firstReplyAt: now,
        }).returning();
        await this.ports.events.record(tx, conversationOpened(row!, contact));
      } else {
        await tx.update(conversations).set({ lastMessageAt: now }).where(eq(conversations.id, row.id));
      }
      const queued = await this.queue(tx, row!, out.text, 'human', scope.actor.id, now, out.template);
      await this.announce(tx, queued, inbox.channel);
      return row!.id;
    });
    return this.get(scope, id);
  }

  /**
   * A workflow's `messaging.send` through an inbox: to a lead (`leadId`, reached at the address the
   * channel needs) or an address (`to`), in the contact's open conversation or a new one, the message
   * queued with sender `campaign` (organization-initiated, automated outreach: not a person, who
   * would take the thread over, and not the bot, which only answers). The channel's rules apply (its
   * 422s). `messageId` is derived from (run, node, item): a step executed again after a retry or a
   * crash finds its message instead of queueing another. `dryRun` (test mode) writes nothing and
   * answers what would be sent, after the same checks.
   */
  async sendFromWorkflow(scope: Scope, input: OutboundInput & { inboxId: string; to?: string; leadId?: string; messageId: string; workflowId: string; dryRun?: boolean }) {
    const out = outboundOf(input);
    const to = input.to?.trim() || undefined;
    if ((to === undefined) === (input.leadId === undefined)) throw badRequest('Give either to (an address) or leadId', [{ field: 'params.to', message: 'exactly one of to and leadId is required' }]);
    const inbox = await this.inboxRow(scope, input.inboxId);
    const [done] = await this.db.select().from(messages).where(and(eq(messages.orgId, scope.orgId), eq(messages.id, input.messageId)));
    if (done) return { messageId: done.id, conversationId: done.conversationId, inboxId: done.inboxId, channel: inbox.channel, status: done.status, duplicate: true };
    let address: string;
    let lead: { id: string; name: string | null } | null = null;
    if (input.leadId !== undefined) {
      const found = await this.ports.leads.get(scope, input.leadId);
      if (found.projectId !== inbox.projectId) throw badRequest('The lead and the inbox belong to different projects', [{ field: 'params.leadId', message: 'must be a lead of the inbox\'s project' }]);
      // The lead's contact on this inbox when it has one (a Telegram chat), else the address the channel needs.
      const [known] = await this.db.select({ address: contacts.address }).from(contacts).where(and(eq(contacts.inboxId, inbox.id), eq(contacts.leadId, found.id))).orderBy(desc(contacts.createdAt)).limit(1);
      const reach = known?.address ?? (inbox.channel === 'email' ? found.email : inbox.channel === 'whatsapp' ? found.phone : inbox.channel === 'telegram' ? null : (found.email ?? found.phone));
      // No thread and no address: a channel that cannot start one says so (its 422).
      if (!reach) await this.checkSend(this.db, inbox.channel, null, input.template !== undefined, this.clock.now());
      if (!reach) throw badRequest(`The lead has no address the ${inbox.channel} channel can reach`, [{ field: 'params.leadId', message: `has no address for the ${inbox.channel} channel` }]);
      address = reach;
      lead = { id: found.id, name: found.name ?? null };
    } else {
      address = to!;
      if (address.length > 320) throw badRequest('to is too long', [{ field: 'params.to', message: 'must be at most 320 characters' }]);
      if (inbox.channel === 'email' && !isEmail(address)) throw badRequest('The e-mail channel sends to an e-mail address', [{ field: 'params.to', message: 'must be an e-mail address' }]);
      if (inbox.channel === 'whatsapp' && !isPhone(address)) throw badRequest('The WhatsApp channel sends to a phone number', [{ field: 'params.to', message: 'must be a phone number' }]);
    }
    const now = this.clock.now();
    const existing = await this.contactRow(inbox.id, address);
    // The channel's rules before anything is written (and again in the transaction that queues).
    const [open] = existing ? await this.db.select().from(conversations).where(and(eq(conversations.contactId, existing.id), eq(conversations.status, 'OPEN'))) : [];
    await this.checkSend(this.db, inbox.channel, existing?.id ?? null, out.template !== null, now);
    if (input.dryRun) {
      const leadId = lead?.id ?? existing?.leadId ?? null;
      return {
        dryRun: true, inboxId: inbox.id, channel: inbox.channel, to: address, text: out.text, conversationId: open?.id ?? null,
        ...(leadId ? { leadId } : {}), ...(out.template ? { template: out.template } : {}),
      };
    }
    // An address becomes a lead as an inbound contact does (not a Telegram chat id).
    const leadId = lead?.id ?? existing?.leadId ?? (inbox.channel === 'telegram' ? null : await this.leadFor({ ...scope, projectId: inbox.projectId }, inbox, address, undefined));
    for (let attempt = 1; ; attempt++) {
      try {
        const message = await this.db.transaction((trx) => this.queueOutreach(trx as unknown as Db, inbox, {
          address, name: lead?.name ?? null, leadId, subject: null, text: out.text, template: out.template, authorId: input.workflowId, messageId: input.messageId,
        }, now));
        return { messageId: message.id, conversationId: message.conversationId, inboxId: inbox.id, channel: inbox.channel, status: message.status, duplicate: false };
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= 3) throw error;
        // The same step's other execution queued it first, or a concurrent message opened the thread: look again.
        const [raced] = await this.db.select().from(messages).where(and(eq(messages.orgId, scope.orgId), eq(messages.id, input.messageId)));
        if (raced) return { messageId: raced.id, conversationId: raced.conversationId, inboxId: raced.inboxId, channel: inbox.channel, status: raced.status, duplicate: true };
      }
    }
  }

  /**
   * Organization-initiated outreach (a workflow's messaging.send, a campaign's step) queued in the
   * caller's transaction: to `address` as the contact of `leadId`, in the contact's open thread or
   * a new one (with `subject`), sender `campaign`, under the channel's rules (their 422 thrown, the
   * transaction's writes then the caller's to undo). An e-mail's `subject` is the message's own too:
   * it goes with that subject, as a new thread (CONTRACT §9). `messageId` is the caller's, derived
   * from what is sent, so that a second attempt at the same send finds the first (a unique violation).
   */
  async queueOutreach(tx: Db, inbox: InboxRow, input: { address: string; name: string | null; leadId: string | null; subject: string | null; text: string; template: MessageTemplate | null; authorId: string; messageId: string }, now: Date): Promise<MessageRow> {
    const contact = await this.upsertContact(tx, inbox, input.address, input.name, input.leadId);
    let row = await this.openConversation(tx, contact.id);
    await this.checkSend(tx, inbox.channel, contact.id, input.template !== null, now);
    if (!row) {
      [row] = await tx.insert(conversations).values({
        id: newId('conversation', now.getTime()), orgId: inbox.orgId, projectId: inbox.projectId, inboxId: inbox.id, channel: inbox.channel,
        contactId: contact.id, leadId: contact.leadId, subject: input.subject, status: 'OPEN', handledBy: inbox.bot.enabled ? 'bot' : 'human',
        lastMessageAt: now, openedAt: now, firstReplyAt: now,
      }).returning();
      await this.ports.events.record(tx, conversationOpened(row!, contact));
    } else {
      await tx.update(conversations).set({ lastMessageAt: now }).where(eq(conversations.id, row.id));
    }
    const queued = await this.queue(tx, row!, input.text, 'campaign', input.authorId, now, input.template, input.messageId, inbox.channel === 'email' ? input.subject : null);
    await this.announce(tx, queued, inbox.channel);
    return queued;
  }

  /** Whether a channel has send rules of its own (a window, no first message): then outreach is queued one by one (queueOutreach). */
  hasSendRules(channel: string): boolean {
    return Boolean(this.adapters[channel as Channel]?.checkSend);
  }

  /**
   * Many outreach messages through one inbox of a channel without send rules (e-mail), queued in the
   * caller's transaction in a few statements whatever their number: the contacts upserted, their
   * open threads found (locked) or opened, the messages inserted, one wake-up for the sender loop
   * and one announcement per batch. Distinct addresses only (a campaign's recipients are).
   */
  async queueOutreachMany(tx: Db, inbox: InboxRow, items: { address: string; name: string | null; leadId: string | null; subject: string | null; text: string; authorId: string; messageId: string }[], now: Date): Promise<void> {
    if (this.hasSendRules(inbox.channel)) throw new Error(`queueOutreachMany: the ${inbox.channel} channel has send rules; queue one by one`);
    if (!items.length) return;
    const list = <K extends keyof (typeof items)[number]>(key: K) => sql.param(items.map((i) => i[key]));
    const people = await rows<{ id: string; address: string; name: string | null; lead_id: string | null; created_at: Date }>(tx, sql`
      insert into ${contacts} (id, org_id, project_id, inbox_id, address, name, lead_id)
      select c.id, ${inbox.orgId}, ${inbox.projectId}, ${inbox.id}, c.address, c.name, c.lead_id
      from unnest(${sql.param(items.map(() => newId('contact', now.getTime())))}::text[], ${list('address')}::text[], ${list('name')}::text[], ${list('leadId')}::text[]) as c(id, address, name, lead_id)
      on conflict (inbox_id, address) do update set name = coalesce(excluded.name, ${contacts}.name), lead_id = coalesce(${contacts}.lead_id, excluded.lead_id)
      returning id, address, name, lead_id, created_at`);
    const contactOf = new Map(people.map((c) => [c.address, c]));
    const open = await tx.select().from(conversations)
      .where(and(sql`${conversations.contactId} = any(${sql.param(people.map((c) => c.id))}::text[])`, eq(conversations.status, 'OPEN'))).for('update');
    const threadOf = new Map(open.map((c) => [c.contactId, c]));
    const fresh = items.filter((i) => !threadOf.has(contactOf.get(i.address)!.id)).map((i) => {
      const contact = contactOf.get(i.address)!;
      return {
        id: newId('conversation', now.getTime()), orgId: inbox.orgId, projectId: inbox.projectId, inboxId: inbox.id, channel: inbox.channel,
        contactId: contact.id, leadId: contact.lead_id, subject: i.subject, status: 'OPEN', handledBy: inbox.bot.enabled ? 'bot' : 'human',
        lastMessageAt: now, openedAt: now, firstReplyAt: now,
      };
    });
    if (fresh.length) {
      const opened = await tx.insert(conversations).values(fresh).returning();
      for (const row of opened) threadOf.set(row.contactId, row);
      const byId = new Map(people.map((p) => [p.id, p]));
      await this.ports.events.record(tx, opened.map((row) => conversationOpened(row, byId.get(row.contactId)!)));
    }
    if (open.length) await tx.update(conversations).set({ lastMessageAt: now }).where(sql`${conversations.id} = any(${sql.param(open.map((c) => c.id))}::text[])`);
    const queued = await tx.insert(messages).values(items.map((i) => {
      const thread = threadOf.get(contactOf.get(i.address)!.id)!;
      return {
        id: i.messageId, orgId: inbox.orgId, projectId: inbox.projectId, inboxId: inbox.id, conversationId: thread.id,
        direction: 'out', sender: 'campaign', authorId: i.authorId, text: i.text, subject: inbox.channel === 'email' ? i.subject : null, template: null, status: 'queued', nextAttemptAt: now, at: now,
      };
    })).returning();
    await this.bus.publishInTx(tx, OUTBOUND_WAKE, null);
    await this.ports.orgStream.publishManyInTx(tx, inbox.orgId, queued.map((row) => streamMessage(row, inbox.channel)));
  }

  /** Who follows outbound messages: told in the transaction of every status change of ones sent by an automation (sender `campaign`). */
  private readonly outboundWatchers: ((tx: Db, rows: MessageRow[]) => Promise<void>)[] = [];

  watchOutbound(fn: (tx: Db, rows: MessageRow[]) => Promise<void>): void {
    this.outboundWatchers.push(fn);
  }

  /** Status changes of outbound messages (sent, delivered, read, failed), in their transaction. */
  async outboundChanged(tx: Db, changed: MessageRow[]): Promise<void> {
    const automated = changed.filter((row) => row.sender === 'campaign');
    if (!automated.length) return;
    for (const fn of this.outboundWatchers) await fn(tx, automated);
  }

  /** The one-click unsubscribe URL of an address (campaigns set it); outreach e-mail carries it (RFC 8058). */
  unsubscribeUrl: ((orgId: string, channel: string, address: string) => string) | null = null;

  private async change(scope: Scope, id: string, fn: (tx: Db, row: ConversationRow, now: Date) => Promise<void>) {
    const now = this.clock.now();
    await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const [row] = await tx.select().from(conversations).where(inScope(scope, conversations, eq(conversations.id, id))).for('update');
      if (!row) throw notFound('Conversation');
      await fn(tx, row, now);
    });
    return this.get(scope, id);
  }

  private async assertMember(orgId: string, userId: string): Promise<void> {
    if (!(await this.ports.orgs.roleOf(orgId, userId))) throw badRequest('The assignee is not a member of this organization', [{ field: 'body.assigneeId', message: 'must be a member of the organization' }]);
  }

  /** A hand-off to people: `handledBy: human`, the event, and a notification to the organization. */
  async handoff(scope: Scope, id: string, input: { reason: string; assigneeId?: string }) {
    if (input.assigneeId) await this.assertMember(scope.orgId, input.assigneeId);
    return this.change(scope, id, async (tx, row, now) => {
      // The bot (an agent run) hands off only what it handles.
      if (scope.actor.type === 'agent' && row.handledBy !== 'bot') throw conflict('A person already handles this conversation');
      if (scope.actor.type === 'agent' && row.status !== 'OPEN') throw conflict('This conversation is closed');
      const assigneeId = input.assigneeId ?? row.assigneeId;
      await tx.update(conversations).set({ handledBy: 'human', handoffReason: input.reason, handoffAt: now, assigneeId }).where(eq(conversations.id, row.id));
      await this.ports.events.record(tx, this.handoffEvent(row, input.reason, scope.actor.type === 'agent' ? 'bot' : 'human', assigneeId));
      await this.ports.notifications.notify({
        orgId: row.orgId, projectId: row.projectId, userId: null, kind: 'conversation.handoff',
        title: 'A conversation needs a person', body: `Handed off: ${input.reason}`, link: `/conversations/${row.id}`,
      }, tx);
    });
  }

  async assign(scope: Scope, id: string, assigneeId: string | null) {
    if (assigneeId) await this.assertMember(scope.orgId, assigneeId);
    return this.change(scope, id, async (tx, row) => {
      await tx.update(conversations).set({ assigneeId }).where(eq(conversations.id, row.id));
    });
  }

  async read(scope: Scope, id: string) {
    return this.change(scope, id, async (tx, row, now) => {
      await tx.insert(conversationReads).values({ conversationId: row.id, readerId: this.readerOf(scope), readAt: now })
        .onConflictDoUpdate({ target: [conversationReads.conversationId, conversationReads.readerId], set: { readAt: now } });
    });
  }

  async close(scope: Scope, id: string) {
    return this.change(scope, id, async (tx, row, now) => {
      if (row.status === 'CLOSED') return;
      if (scope.actor.type === 'agent' && row.handledBy !== 'bot') throw conflict('A person handles this conversation');
      const resolvedBy = scope.actor.type === 'agent' ? 'bot' : 'human';
      await tx.update(conversations).set({ status: 'CLOSED', closedAt: now, resolvedBy }).where(eq(conversations.id, row.id));
      const durationSec = Math.max(0, Math.round((now.getTime() - row.openedAt.getTime()) / 1000));
      await this.ports.events.record(tx, { orgId: row.orgId, projectId: row.projectId, type: 'conversation.closed', payload: { conversationId: row.id, resolvedBy, durationSec, ...(row.leadId ? { leadId: row.leadId } : {}) } });
    });
  }

  async reopen(scope: Scope, id: string) {
    return this.change(scope, id, async (tx, row) => {
      if (row.status === 'OPEN') return;
      const [other] = await tx.select({ id: conversations.id }).from(conversations).where(and(eq(conversations.contactId, row.contactId), eq(conversations.status, 'OPEN')));
      if (other) throw conflict(`The contact has another open conversation (${other.id})`);
      await tx.update(conversations).set({ status: 'OPEN', closedAt: null, resolvedBy: null }).where(eq(conversations.id, row.id));
    });
  }

  async stats(scope: Scope, query: { from?: string; to?: string; inboxId?: string }) {
    // CONTRACT §6: a date is that whole day (UTC), `to` included; a timestamp `to` is exclusive.
    const to = query.to ? rangeBound(query.to, 'to', 'UTC', 'querystring.to') : this.clock.now();
    const from = query.from ? rangeBound(query.from, 'from', 'UTC', 'querystring.from') : new Date(to.getTime() - 30 * 86_400_000);
    if (from >= to) throw badRequest('from must be before to', [{ field: 'querystring.from', message: 'must be before to' }]);
    const inbox = query.inboxId ? eq(conversations.inboxId, query.inboxId) : undefined;
    const inRange = (column: typeof conversations.openedAt | typeof conversations.closedAt) => and(gte(column, from), lt(column, to));
    const [[opened], [closed], reasons] = await Promise.all([
      this.db.select({
        n: sql<number>`count(*)::int`,
        firstReply: sql<number | null>`percentile_cont(0.5) within group (order by extract(epoch from (${conversations.firstReplyAt} - ${conversations.openedAt})))`,
        handoff: sql<number | null>`percentile_cont(0.5) within group (order by extract(epoch from (${conversations.handoffAt} - ${conversations.openedAt})))`,
      }).from(conversations).where(inScope(scope, conversations, inbox, inRange(conversations.openedAt))),
      this.db.select({ n: sql<number>`count(*)::int`, byBot: sql<number>`(count(*) filter (where ${conversations.resolvedBy} = 'bot'))::int` })
        .from(conversations).where(inScope(scope, conversations, inbox, inRange(conversations.closedAt))),
      this.db.select({ reason: conversations.handoffReason, n: sql<number>`count(*)::int` }).from(conversations)
        .where(inScope(scope, conversations, inbox, inRange(conversations.handoffAt))).groupBy(conversations.handoffReason),
    ]);
    const handoffReasons: Record<string, number> = {};
    for (const r of reasons) handoffReasons[r.reason ?? 'unknown'] = r.n;
    const round = (v: number | string | null | undefined) => (v === null || v === undefined ? null : Math.round(Number(v)));
    return {
      opened: opened?.n ?? 0, closed: closed?.n ?? 0, closedByBot: closed?.byBot ?? 0,
      handoffs: reasons.reduce((sum, r) => sum + r.n, 0), handoffReasons,
      medianFirstReplySec: round(opened?.firstReply), medianHandoffSec: round(opened?.handoff),
    };
  }
}

export function isUniqueViolation(error: unknown): boolean {
  for (let e = error as { code?: string; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) if (e.code === '23505') return true;
  return false;
}
