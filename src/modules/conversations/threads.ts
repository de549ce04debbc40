import { and, asc, desc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import { transaction, type Db } from '../../platform/db.ts';
import type { Scope } from '../../platform/context.ts';
import { badRequest, conflict, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import { inScope } from '../../platform/tenant.ts';
import type { NewEvent } from '../events/index.ts';
import type { Channel } from './channel-types.ts';
import { upsertContact } from './contacts.ts';
import type { ContactRow, ConversationRow, ConversationsContext, InboxRow, MessageRow } from './context.ts';
import type { Inboxes } from './inboxes.ts';
import { conversationOpened, publicConversation, publicMessage, streamMessage } from './payloads.ts';
import { contacts, conversationReads, conversations, messages } from './tables.ts';

/** The sender loop is woken through the bus when a commit queued a message. */
export const OUTBOUND_WAKE = 'wake:conversations-outbound';

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
export function outboundOf(input: OutboundInput): { text: string; template: MessageTemplate | null } {
  if (input.text !== undefined && input.template !== undefined)
    throw badRequest('Send either text or a template, not both', [{ field: 'body.template', message: 'must not be given with text' }]);
  if (input.template) return { text: templateText(input.template), template: input.template };
  if (input.text === undefined)
    throw badRequest('A message needs text (or, where the channel needs one, a template)', [{ field: 'body.text', message: 'is required' }]);
  return { text: input.text, template: null };
}

export interface ConversationQuery extends ListQuery {
  status?: string;
  inboxId?: string;
  channel?: string;
  handledBy?: string;
  assigneeId?: string;
  leadId?: string;
}

/** A conversation to open (see Threads.openThread). */
export interface NewThread {
  contact: Pick<ContactRow, 'id' | 'name' | 'address'>;
  leadId: string | null;
  subject: string | null;
  handledBy: 'bot' | 'human';
  assigneeId?: string | null;
  /** An outbound start counts as the first reply. */
  firstReplyAt?: Date | null;
}

/**
 * Conversations and their messages as people see and handle them (list, read, reply, start,
 * hand-off, assign, close, reopen), and the writes every path into a thread shares: the one way a
 * conversation is opened, the channel's send rules, the queue of outbound messages, the
 * organization stream's announcement.
 */
export class Threads {
  private readonly ctx: ConversationsContext;
  private readonly inboxes: Pick<Inboxes, 'inboxRow'>;

  constructor(ctx: ConversationsContext, inboxes: Pick<Inboxes, 'inboxRow'>) {
    this.ctx = ctx;
    this.inboxes = inboxes;
  }

  /**
   * Opens conversations in the caller's transaction. Every path that opens one comes here (an
   * inbound message, a person's start, a workflow's or a campaign's outreach, one by one or a
   * batch): each is inserted the same way and told as one `conversation.opened` (payloads.ts).
   * `into`: the events go there, for a caller that records them with its own in one write (the
   * inbound path, with `message.received`); else they are recorded here.
   */
  async openThread(
    tx: Db,
    inbox: Pick<InboxRow, 'id' | 'orgId' | 'projectId' | 'channel'>,
    list: NewThread[],
    now: Date,
    into?: NewEvent[],
  ): Promise<ConversationRow[]> {
    if (!list.length) return [];
    const opened = await tx
      .insert(conversations)
      .values(
        list.map((t) => ({
          id: newId('conversation', now.getTime()),
          orgId: inbox.orgId,
          projectId: inbox.projectId,
          inboxId: inbox.id,
          channel: inbox.channel,
          contactId: t.contact.id,
          leadId: t.leadId,
          subject: t.subject,
          status: 'OPEN',
          handledBy: t.handledBy,
          assigneeId: t.assigneeId ?? null,
          lastMessageAt: now,
          openedAt: now,
          firstReplyAt: t.firstReplyAt ?? null,
        })),
      )
      .returning();
    const contactOf = new Map(list.map((t) => [t.contact.id, t.contact]));
    const events = opened.map((row) => conversationOpened(row, contactOf.get(row.contactId)!));
    if (into) into.push(...events);
    else await this.ctx.ports.events.record(tx, events);
    return opened;
  }

  /**
   * The contact's open conversation. Else, for a message answering earlier ones (`thread`: the
   * provider ids it names), the conversation of the newest of them that is this contact's, reopened
   * (as Chatwoot does with a reply to a resolved e-mail thread); a concurrent open of another thread
   * fails the unique index and the caller's retry joins that one.
   */
  async contactThread(tx: Db, contactId: string, thread?: { inboxId: string; ids: string[] }): Promise<ConversationRow | undefined> {
    const [row] = await tx
      .select()
      .from(conversations)
      .where(and(eq(conversations.contactId, contactId), eq(conversations.status, 'OPEN')))
      .for('update');
    if (row || !thread) return row;
    const [earlier] = await tx
      .select({ conversationId: messages.conversationId })
      .from(messages)
      .innerJoin(conversations, eq(conversations.id, messages.conversationId))
      // Both directions named, so the (inbox, direction, external id) index finds the ids.
      .where(
        and(
          eq(messages.inboxId, thread.inboxId),
          sql`${messages.direction} in ('in', 'out')`,
          sql`${messages.externalId} = any(${sql.param(thread.ids)}::text[])`,
          eq(conversations.contactId, contactId),
        ),
      )
      .orderBy(desc(messages.at), desc(messages.id))
      .limit(1);
    if (!earlier) return undefined;
    const [reopened] = await tx
      .update(conversations)
      .set({ status: 'OPEN', closedAt: null, resolvedBy: null })
      .where(and(eq(conversations.id, earlier.conversationId), eq(conversations.status, 'CLOSED')))
      .returning();
    return reopened;
  }

  /** Tells the organization stream (at commit) that a message of a conversation on `channel` was written or changed: a reply, a note, a failure. */
  announce(tx: Db, row: MessageRow, channel: string): Promise<void> {
    return this.ctx.ports.orgStream.publishInTx(tx, row.orgId, streamMessage(row, channel));
  }

  private readerOf(scope: Scope): string {
    return scope.actor.id;
  }

  private unreadSql(scope: Scope): SQL<number> {
    return sql<number>`(select count(*)::int from ${messages} m where m.conversation_id = ${conversations.id} and m.direction = 'in'
      and m.at > coalesce((select r.read_at from ${conversationReads} r where r.conversation_id = ${conversations.id} and r.reader_id = ${this.readerOf(scope)}), '-infinity'::timestamptz))`;
  }

  private async view(scope: Scope, id: string) {
    const [row] = await this.ctx.db
      .select({ c: conversations, contact: contacts, unread: this.unreadSql(scope) })
      .from(conversations)
      .innerJoin(contacts, eq(contacts.id, conversations.contactId))
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
      this.ctx.db
        .select({ c: conversations, contact: contacts, unread: this.unreadSql(scope) })
        .from(conversations)
        .innerJoin(contacts, eq(contacts.id, conversations.contactId))
        .where(where)
        .orderBy(...order)
        .limit(page.limit)
        .offset(page.offset),
      this.ctx.db
        .select({ n: sql<number>`count(*)::int` })
        .from(conversations)
        .where(where),
    ]);
    return envelope(
      items.map((r) => publicConversation(r.c, r.contact, r.unread)),
      counted[0]?.n ?? 0,
      page,
    );
  }

  async listMessages(scope: Scope, id: string, query: ListQuery) {
    await this.view(scope, id);
    const page = pageOf(query);
    const where = and(eq(messages.orgId, scope.orgId), eq(messages.conversationId, id));
    const [items, counted] = await Promise.all([
      this.ctx.db.select().from(messages).where(where).orderBy(asc(messages.at), asc(messages.id)).limit(page.limit).offset(page.offset),
      this.ctx.db
        .select({ n: sql<number>`count(*)::int` })
        .from(messages)
        .where(where),
    ]);
    return envelope(items.map(publicMessage), counted[0]?.n ?? 0, page);
  }

  /**
   * The channel's own rules for a send about to be queued (WhatsApp's 24-hour window, Telegram's
   * no-first-message): throws the channel's 422.
   */
  async checkSend(tx: Db, channel: string, contactId: string | null, template: boolean, now: Date): Promise<void> {
    const adapter = this.ctx.adapters[channel as Channel];
    if (!adapter?.checkSend) return;
    // The contact's last word on this inbox, in any of its threads: WhatsApp's window and
    // Telegram's "the contact wrote first" are the contact's, not one conversation's.
    let lastInboundAt: Date | null = null;
    if (contactId) {
      const [last] = await tx
        .select({ at: sql<Date | null>`max(${messages.at})` })
        .from(messages)
        .where(
          and(
            sql`${messages.conversationId} in (select ${conversations.id} from ${conversations} where ${conversations.contactId} = ${contactId})`,
            eq(messages.direction, 'in'),
          ),
        );
      lastInboundAt = last?.at ? new Date(last.at) : null;
    }
    adapter.checkSend({ starting: lastInboundAt === null, lastInboundAt, template, now });
  }

  /** An outbound message, queued for the sender loop in the caller's transaction (woken at commit). */
  async queue(
    tx: Db,
    conversation: ConversationRow,
    text: string,
    sender: 'human' | 'bot' | 'campaign',
    authorId: string | null,
    now: Date,
    template: MessageTemplate | null = null,
    id?: string,
    subject: string | null = null,
  ): Promise<MessageRow> {
    const [message] = await tx
      .insert(messages)
      .values({
        id: id ?? newId('message', now.getTime()),
        orgId: conversation.orgId,
        projectId: conversation.projectId,
        inboxId: conversation.inboxId,
        conversationId: conversation.id,
        direction: 'out',
        sender,
        authorId,
        text,
        subject,
        template,
        status: 'queued',
        nextAttemptAt: now,
        at: now,
      })
      .returning();
    await this.ctx.ports.bus.publishInTx(tx, OUTBOUND_WAKE, null);
    return message!;
  }

  private handoffEvent(row: ConversationRow, reason: string, by: 'bot' | 'human', assignedToId: string | null): NewEvent {
    return {
      orgId: row.orgId,
      projectId: row.projectId,
      type: 'conversation.handoff',
      payload: { conversationId: row.id, reason, by, ...(assignedToId ? { assignedToId } : {}), ...(row.leadId ? { leadId: row.leadId } : {}) },
    };
  }

  /** A human reply (queued for sending) or a private note (never sent). A reply in a bot-handled thread is a takeover. */
  async reply(scope: Scope, id: string, input: OutboundInput & { private?: boolean }) {
    const out = outboundOf(input);
    const now = this.ctx.clock.now();
    const authorId = scope.actor.id;
    const message = await transaction(this.ctx.db, async (tx) => {
      const [row] = await tx
        .select()
        .from(conversations)
        .where(inScope(scope, conversations, eq(conversations.id, id)))
        .for('update');
      if (!row) throw notFound('Conversation');
      if (input.private) {
        const [note] = await tx
          .insert(messages)
          .values({
            id: newId('message', now.getTime()),
            orgId: row.orgId,
            projectId: row.projectId,
            inboxId: row.inboxId,
            conversationId: row.id,
            direction: 'out',
            sender: 'human',
            authorId,
            text: out.text,
            private: true,
            status: 'sent',
            at: now,
          })
          .returning();
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
        await this.ctx.ports.events.record(tx, this.handoffEvent(row, 'takeover', 'human', set.assigneeId ?? row.assigneeId));
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
    const now = this.ctx.clock.now();
    return transaction(this.ctx.db, async (tx) => {
      const [row] = await tx
        .select()
        .from(conversations)
        .where(inScope(scope, conversations, eq(conversations.id, id)))
        .for('update');
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
    const inbox = await this.inboxes.inboxRow(scope, input.inboxId);
    const lead = await this.ctx.ports.leads.get(scope, input.leadId);
    if (lead.projectId !== inbox.projectId)
      throw badRequest('The lead and the inbox belong to different projects', [{ field: 'body.leadId', message: "must be a lead of the inbox's project" }]);
    // E-mail reaches an address, WhatsApp a phone number, an api receiver whichever the lead has.
    const address = inbox.channel === 'email' ? lead.email : inbox.channel === 'whatsapp' ? lead.phone : (lead.email ?? lead.phone);
    const needs = inbox.channel === 'email' ? 'an e-mail address' : inbox.channel === 'whatsapp' ? 'a phone number' : 'an e-mail address or a phone number';
    if (!address) throw badRequest(`The lead has no address this channel can reach (${needs})`, [{ field: 'body.leadId', message: `has no ${needs}` }]);
    const now = this.ctx.clock.now();
    const id = await transaction(this.ctx.db, async (tx) => {
      const contact = await upsertContact(tx, inbox, address, lead.name ?? null, lead.id);
      let row = await this.contactThread(tx, contact.id);
      await this.checkSend(tx, inbox.channel, contact.id, out.template !== null, now);
      if (!row) {
        [row] = await this.openThread(
          tx,
          inbox,
          [
            {
              contact,
              leadId: lead.id,
              subject: input.subject ?? null,
              handledBy: 'human',
              assigneeId: scope.actor.type === 'user' ? scope.actor.id : null,
              firstReplyAt: now,
            },
          ],
          now,
        );
      } else {
        await tx.update(conversations).set({ lastMessageAt: now }).where(eq(conversations.id, row.id));
      }
      const queued = await this.queue(tx, row!, out.text, 'human', scope.actor.id, now, out.template);
      await this.announce(tx, queued, inbox.channel);
      return row!.id;
    });
    return this.get(scope, id);
  }

  private async change(scope: Scope, id: string, fn: (tx: Db, row: ConversationRow, now: Date) => Promise<void>) {
    const now = this.ctx.clock.now();
    await transaction(this.ctx.db, async (tx) => {
      const [row] = await tx
        .select()
        .from(conversations)
        .where(inScope(scope, conversations, eq(conversations.id, id)))
        .for('update');
      if (!row) throw notFound('Conversation');
      await fn(tx, row, now);
    });
    return this.get(scope, id);
  }

  private async assertMember(orgId: string, userId: string): Promise<void> {
    if (!(await this.ctx.ports.orgs.roleOf(orgId, userId)))
      throw badRequest('The assignee is not a member of this organization', [{ field: 'body.assigneeId', message: 'must be a member of the organization' }]);
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
      await this.ctx.ports.events.record(tx, this.handoffEvent(row, input.reason, scope.actor.type === 'agent' ? 'bot' : 'human', assigneeId));
      await this.ctx.ports.notifications.notify(
        {
          orgId: row.orgId,
          projectId: row.projectId,
          userId: null,
          kind: 'conversation.handoff',
          title: 'A conversation needs a person',
          body: `Handed off: ${input.reason}`,
          link: `/conversations/${row.id}`,
        },
        tx,
      );
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
      await tx
        .insert(conversationReads)
        .values({ conversationId: row.id, readerId: this.readerOf(scope), readAt: now })
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
      await this.ctx.ports.events.record(tx, {
        orgId: row.orgId,
        projectId: row.projectId,
        type: 'conversation.closed',
        payload: { conversationId: row.id, resolvedBy, durationSec, ...(row.leadId ? { leadId: row.leadId } : {}) },
      });
    });
  }

  async reopen(scope: Scope, id: string) {
    return this.change(scope, id, async (tx, row) => {
      if (row.status === 'OPEN') return;
      const [other] = await tx
        .select({ id: conversations.id })
        .from(conversations)
        .where(and(eq(conversations.contactId, row.contactId), eq(conversations.status, 'OPEN')));
      if (other) throw conflict(`The contact has another open conversation (${other.id})`);
      await tx.update(conversations).set({ status: 'OPEN', closedAt: null, resolvedBy: null }).where(eq(conversations.id, row.id));
    });
  }
}
