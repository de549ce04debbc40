import { and, eq, fillPlaceholders, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { fixedFragment, rows, transaction, type Db } from '../../platform/db.ts';
import type { Scope } from '../../platform/context.ts';
import { newId } from '../../platform/ids.ts';
import type { NewEvent } from '../events/index.ts';
import { eventRows, outboxCtes, outboxParam } from '../events/index.ts';
import { conversationsMessagedForLead } from '../events/index.ts';
import type { InboundInput, Receipt } from './channel-types.ts';
import { leadFor, upsertContact } from './contacts.ts';
import { isUniqueViolation, type ContactRow, type ConversationRow, type ConversationsContext, type InboxRow, type MessageRow } from './context.ts';
import type { Inboxes } from './inboxes.ts';
import type { Outbound } from './outbound.ts';
import { leadReplied, messageReceived, publicMessage, streamMessage } from './payloads.ts';
import type { Threads } from './threads.ts';
import { contacts, conversations, messages } from './tables.ts';

/** Delivery receipts, in the only order they may be applied (a later one never goes back). */
export const RECEIPT_ORDER = ['queued', 'sent', 'delivered', 'read'] as const;

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
const REPLIED = fixedFragment(
  reachedOutSql(
    sql.placeholder('orgId'),
    sql.placeholder('channel'),
    sql`${sql.placeholder('leadId')}::text`,
    sql`${sql.placeholder('conversationId')}::text`,
    sql.placeholder('at'),
  ),
  18,
);

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
interface Thread {
  contact: ContactRow;
  contactVersion: string;
  conversation: ConversationRow;
  version: string;
}

/**
 * receiveInbound's read — the contact, its open thread, their row versions, whether the provider's
 * id is stored already — prepared once per service (on PostgreSQL a named statement per pooled
 * connection: built, parsed and planned once instead of for every message).
 */
function receiveReadQuery(db: Db) {
  const p = sql.placeholder;
  return db
    .select({
      contact: contacts,
      conversation: conversations,
      contactVersion: sql<string>`${contacts}.xmin::text`,
      version: sql<string | null>`${conversations}.xmin::text`,
      duplicate: sql<
        string | null
      >`(select ${messages.id} from ${messages} where ${messages.inboxId} = ${p('inboxId')} and ${messages.direction} = 'in' and ${messages.externalId} = ${p('externalId')}::text)`,
    })
    .from(contacts)
    .leftJoin(conversations, and(eq(conversations.contactId, contacts.id), eq(conversations.status, 'OPEN')))
    .where(and(eq(contacts.inboxId, p('inboxId')), eq(contacts.address, p('address'))))
    .prepare('conversation_receive_read');
}

/** How many contacts' threads an instance keeps for RECEIVE_FAST without a read (see receiveInbound). */
const THREAD_CACHE_MAX = 10_000;

/**
 * Inbound: a message from any channel stored with its contact, lead and conversation (one
 * statement for a known contact writing in an open thread), an anonymous contact linked to its
 * lead, and the providers' delivery receipts.
 */
export class Inbound {
  private readonly ctx: ConversationsContext;
  private readonly inboxes: Pick<Inboxes, 'inboundInbox'>;
  private readonly threads: Threads;
  private readonly outbound: Pick<Outbound, 'outboundChanged'>;
  private receiveRead?: ReturnType<typeof receiveReadQuery>;
  /** Per contact (`inbox id \n address`), the thread RECEIVE_FAST last wrote here. */
  private readonly recent = new Map<string, Thread>();

  constructor(ctx: ConversationsContext, parts: { inboxes: Pick<Inboxes, 'inboundInbox'>; threads: Threads; outbound: Pick<Outbound, 'outboundChanged'> }) {
    this.ctx = ctx;
    this.inboxes = parts.inboxes;
    this.threads = parts.threads;
    this.outbound = parts.outbound;
  }

  /**
   * Web widget and Telegram: an anonymous contact who gave an e-mail address or a phone number is linked to the
   * lead those stand for (matched, or created with source = the channel), and so is its open
   * conversation. A contact already linked keeps its lead. Returns the contact's lead, if any.
   */
  async identifyContact(inbox: InboxRow, contactId: string, who: { name?: string; email?: string; phone?: string }): Promise<string | null> {
    const [contact] = await this.ctx.db
      .select()
      .from(contacts)
      .where(and(eq(contacts.id, contactId), eq(contacts.inboxId, inbox.id)));
    if (!contact) return null;
    if (contact.leadId) return contact.leadId;
    const scope: Scope = { orgId: inbox.orgId, projectId: inbox.projectId, actor: { type: 'system', id: `inbox:${inbox.id}` } };
    const leadId =
      (who.email ? await leadFor(this.ctx.ports.leads, scope, inbox, who.email, who.name) : null) ??
      (who.phone ? await leadFor(this.ctx.ports.leads, scope, inbox, who.phone, who.name) : null);
    if (!leadId) return null;
    await transaction(this.ctx.db, async (tx) => {
      await tx
        .update(contacts)
        .set({ leadId, ...(who.name && !contact.name ? { name: who.name } : {}) })
        .where(and(eq(contacts.id, contact.id), sql`${contacts.leadId} is null`));
      await tx
        .update(conversations)
        .set({ leadId })
        .where(and(eq(conversations.contactId, contact.id), eq(conversations.status, 'OPEN'), sql`${conversations.leadId} is null`));
    });
    return leadId;
  }

  /** identifyContact for the contact of an inbox with that address (a Telegram chat id), if there is one. */
  async identifyAddress(inbox: InboxRow, address: string, who: { name?: string; email?: string; phone?: string }): Promise<string | null> {
    const [contact] = await this.ctx.db
      .select({ id: contacts.id })
      .from(contacts)
      .where(and(eq(contacts.inboxId, inbox.id), eq(contacts.address, address)));
    return contact ? this.identifyContact(inbox, contact.id, who) : null;
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
    const fastWay = (thread: Thread) =>
      (input.contact.name === undefined || input.contact.name === thread.contact.name) &&
      (!thread.contact.leadId || thread.conversation.leadId === thread.contact.leadId) &&
      !input.threadIds?.length;
    const hot = this.recent.get(key);
    if (hot) {
      const fast = fastWay(hot) ? await this.receiveFast(inbox, hot, input, key) : null;
      if (fast) return fast;
      this.recent.delete(key);
    }
    const [known] = await (this.receiveRead ??= receiveReadQuery(this.ctx.db)).execute({ inboxId: inbox.id, address, externalId: input.externalId ?? null });
    // A new contact has no stored message, unless its first message was stored a moment ago.
    const duplicate = known
      ? known.duplicate
        ? await this.messageRow(known.duplicate)
        : undefined
      : input.externalId
        ? await this.byExternalId(inbox.id, input.externalId)
        : undefined;
    if (duplicate) return { message: publicMessage(duplicate), duplicate: true };
    const existing = known?.contact;
    if (known?.conversation && known.version) {
      const thread: Thread = { contact: known.contact, contactVersion: known.contactVersion, conversation: known.conversation, version: known.version };
      const fast = fastWay(thread) ? await this.receiveFast(inbox, thread, input, key) : null;
      if (fast) return fast;
    }
    const newLeads = new Set<string>();
    const leadId =
      existing?.leadId ?? (input.linkLead === false ? null : await leadFor(this.ctx.ports.leads, scope, inbox, address, input.contact.name, newLeads));
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
    const now = this.ctx.clock.now();
    const message: MessageRow = {
      id: newId('message', now.getTime()),
      orgId: inbox.orgId,
      projectId: inbox.projectId,
      inboxId: inbox.id,
      conversationId: conversation.id,
      direction: 'in',
      sender: 'contact',
      authorId: null,
      text: input.text,
      subject: null,
      mediaUrl: input.mediaUrl ?? null,
      template: null,
      private: false,
      autoReply: input.autoReply ?? false,
      status: 'received',
      externalId: input.externalId ?? null,
      error: null,
      attempts: 0,
      nextAttemptAt: null,
      lockedUntil: null,
      at: now,
      streamSeq: null,
    };
    const written = { ...conversation, lastMessageAt: now };
    const received: NewEvent[] = [messageReceived(message, written, contact)];
    // `lead.replied` carries the lead as it is (SPEC); the statement decides whether it is written.
    const lead = contact.leadId && !message.autoReply ? await this.ctx.ports.leads.find(this.ctx.db, inbox.orgId, contact.leadId) : null;
    const replied: NewEvent[] = lead ? [leadReplied(lead, message, inbox.channel)] : [];
    const heard = streamMessage(message, inbox.channel, { row: written, contact });
    const others = this.ctx.ports.orgStream.notifyOthersParams(inbox.orgId, [heard]);
    if (others === false) return null;
    const replyParams = fillPlaceholders(REPLIED.params, {
      orgId: inbox.orgId,
      channel: inbox.channel,
      leadId: contact.leadId,
      conversationId: conversation.id,
      at: now.toISOString(),
    });
    const [result] = await this.ctx.database.prepared<{ stored: number; version: string | null }>('conversation_receive_fast', RECEIVE_FAST, [
      conversation.id,
      message.id,
      inbox.orgId,
      inbox.projectId,
      inbox.id,
      message.text,
      message.externalId,
      message.mediaUrl,
      message.autoReply,
      now.toISOString(),
      outboxParam(eventRows(received, now)),
      others?.channel ?? null,
      others?.payload ?? null,
      thread.version,
      contact.id,
      thread.contactVersion,
      outboxParam(eventRows(replied, now)),
      ...replyParams,
    ]);
    if (result?.stored !== 1 || !result.version) return null;
    if (this.recent.size >= THREAD_CACHE_MAX) this.recent.clear();
    this.recent.set(key, { ...thread, conversation: written, version: result.version });
    this.ctx.ports.events.wakeLocal();
    this.ctx.ports.orgStream.emitLocal(inbox.orgId, [heard]);
    return { message: publicMessage(message), duplicate: false };
  }

  private async messageRow(id: string): Promise<MessageRow | undefined> {
    const [row] = await this.ctx.db.select().from(messages).where(eq(messages.id, id));
    return row;
  }

  private async store(inbox: InboxRow, address: string, input: InboundInput, leadId: string | null, newLead = false) {
    const now = this.ctx.clock.now();
    const result = await transaction(this.ctx.db, async (tx) => {
      const contact = await upsertContact(tx, inbox, address, input.contact.name ?? null, leadId);
      const events: NewEvent[] = [];
      let conversation = await this.threads.contactThread(tx, contact.id, input.threadIds?.length ? { inboxId: inbox.id, ids: input.threadIds } : undefined);
      if (!conversation) {
        [conversation] = await this.threads.openThread(
          tx,
          inbox,
          [
            {
              contact,
              leadId: contact.leadId,
              subject: input.subject ?? null,
              handledBy: inbox.bot.enabled ? 'bot' : 'human',
            },
          ],
          now,
          events,
        );
      } else {
        [conversation] = await tx
          .update(conversations)
          .set({ lastMessageAt: now, ...(contact.leadId && !conversation.leadId ? { leadId: contact.leadId } : {}) })
          .where(eq(conversations.id, conversation.id))
          .returning();
      }
      const [message] = await tx
        .insert(messages)
        .values({
          id: newId('message', now.getTime()),
          orgId: inbox.orgId,
          projectId: inbox.projectId,
          inboxId: inbox.id,
          conversationId: conversation!.id,
          direction: 'in',
          sender: 'contact',
          text: input.text,
          status: 'received',
          externalId: input.externalId ?? null,
          mediaUrl: input.mediaUrl ?? null,
          autoReply: input.autoReply ?? false,
          at: now,
        })
        .returning();
      events.push(messageReceived(message!, conversation!, contact));
      if (contact.leadId && !input.autoReply && !newLead && (await this.wasReachedOut(tx, inbox, contact.leadId, conversation!.id, now))) {
        const lead = await this.ctx.ports.leads.find(tx, inbox.orgId, contact.leadId);
        if (lead) events.push(leadReplied(lead, message!, inbox.channel));
      }
      await this.ctx.ports.events.record(tx, events);
      await this.ctx.ports.orgStream.publishInTx(tx, inbox.orgId, streamMessage(message!, inbox.channel, { row: conversation!, contact }));
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
    const [found] = await rows<{ reached: boolean }>(
      tx,
      sql`select ${reachedOutSql(inbox.orgId, inbox.channel, sql`${leadId}::text`, sql`${conversationId}::text`, before)} as reached`,
    );
    return found?.reached === true;
  }

  /**
   * A provider's delivery receipt for an outbound message (by the provider's id): applied only
   * forward (sent → delivered → read; `failed` only before delivery), so a late or repeated receipt
   * changes nothing. The organization stream hears of a change. Returns whether anything changed.
   */
  async applyReceipt(inbox: Pick<InboxRow, 'id' | 'orgId' | 'channel'>, externalId: string, status: Receipt, error?: string): Promise<boolean> {
    const rank = (s: string) => RECEIPT_ORDER.indexOf(s as (typeof RECEIPT_ORDER)[number]);
    const allowedFrom = status === 'failed' ? ['queued', 'sent'] : RECEIPT_ORDER.filter((s) => rank(s) < rank(status));
    return transaction(this.ctx.db, async (tx) => {
      const [row] = await tx
        .update(messages)
        .set({
          status,
          ...(status === 'failed' ? { error: (error ?? 'the provider reported a failure').slice(0, 1000), nextAttemptAt: null, lockedUntil: null } : {}),
        })
        .where(
          and(
            eq(messages.inboxId, inbox.id),
            eq(messages.direction, 'out'),
            eq(messages.externalId, externalId),
            sql`${messages.status} = any(${sql.param(allowedFrom)}::text[])`,
          ),
        )
        .returning();
      if (!row) return false;
      await this.threads.announce(tx, row, inbox.channel);
      await this.outbound.outboundChanged(tx, [row]);
      return true;
    });
  }

  private async byExternalId(inboxId: string, externalId: string): Promise<MessageRow | undefined> {
    const [row] = await this.ctx.db
      .select()
      .from(messages)
      .where(and(eq(messages.inboxId, inboxId), eq(messages.direction, 'in'), eq(messages.externalId, externalId)));
    return row;
  }
}
