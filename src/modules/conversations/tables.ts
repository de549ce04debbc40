import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, ts, updatedAt } from '../../platform/columns.ts';

/** One channel account. Credentials and the secrets we must sign with are sealed (AES-GCM, APP_SECRET). */
export const inboxes = pgTable(
  'inboxes',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id').notNull(),
    name: text('name').notNull(),
    channel: text('channel').notNull(),
    config: jsonb('config').$type<Record<string, unknown>>().notNull().default({}),
    bot: jsonb('bot').$type<{ enabled: boolean; agentId?: string; modelId?: string }>().notNull().default({ enabled: false }),
    /** The provider credentials, sealed; never returned. */
    credentialsSealed: text('credentials_sealed'),
    /** A secret the service signs with (the api channel's signing secret), sealed. */
    secretSealed: text('secret_sealed'),
    /** A secret the service only compares (an inbound token), as sha256 hex. */
    secretHash: text('secret_hash'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('inboxes_org_idx').on(t.orgId, t.id)],
);

/** A person on one inbox, by the channel's address; linked to a lead when one is known. */
export const contacts = pgTable(
  'contacts',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id').notNull(),
    inboxId: text('inbox_id')
      .notNull()
      .references(() => inboxes.id, { onDelete: 'cascade' }),
    address: text('address').notNull(),
    name: text('name'),
    leadId: text('lead_id'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('contacts_inbox_address_idx').on(t.inboxId, t.address)],
);

export const conversations = pgTable(
  'conversations',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id').notNull(),
    inboxId: text('inbox_id')
      .notNull()
      .references(() => inboxes.id, { onDelete: 'cascade' }),
    channel: text('channel').notNull(),
    contactId: text('contact_id')
      .notNull()
      .references(() => contacts.id, { onDelete: 'cascade' }),
    leadId: text('lead_id'),
    subject: text('subject'),
    status: text('status').notNull(),
    handledBy: text('handled_by').notNull(),
    assigneeId: text('assignee_id'),
    handoffReason: text('handoff_reason'),
    handoffAt: ts('handoff_at'),
    firstReplyAt: ts('first_reply_at'),
    lastMessageAt: ts('last_message_at').notNull(),
    openedAt: ts('opened_at').notNull(),
    closedAt: ts('closed_at'),
    resolvedBy: text('resolved_by'),
  },
  (t) => [
    // At most one open thread per contact: the inbound path relies on it.
    uniqueIndex('conversations_open_contact_idx')
      .on(t.contactId)
      .where(sql`status = 'OPEN'`),
    // A contact's threads, open or closed (a channel's window is the contact's last word in any of them).
    index('conversations_contact_idx').on(t.contactId),
    index('conversations_org_last_idx').on(t.orgId, t.lastMessageAt),
    index('conversations_org_opened_idx').on(t.orgId, t.openedAt),
  ],
);

/**
 * Messages, and the outbound queue: an outbound message is `queued` until the channel accepted it,
 * claimed with SKIP LOCKED by the sender loop (attempts, next_attempt_at, locked_until).
 */
export const messages = pgTable(
  'messages',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id').notNull(),
    inboxId: text('inbox_id')
      .notNull()
      .references(() => inboxes.id, { onDelete: 'cascade' }),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    direction: text('direction').notNull(),
    sender: text('sender').notNull(),
    /** The user or key that wrote a human message. */
    authorId: text('author_id'),
    text: text('text').notNull(),
    /**
     * Outbound e-mail: the message's own subject (a campaign step's), sent as it is and starting a
     * new thread under it; null follows up in the thread (`Re: …`, sender.ts).
     */
    subject: text('subject'),
    mediaUrl: text('media_url'),
    /** A provider template sent instead of free text (WhatsApp outside its 24-hour window). */
    template: jsonb('template').$type<{ name: string; language: string; components?: unknown[] }>(),
    private: boolean('private').notNull().default(false),
    /** An inbound automatic answer (out-of-office): not a reply, never answered by the bot. */
    autoReply: boolean('auto_reply').notNull().default(false),
    status: text('status').notNull(),
    externalId: text('external_id'),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at'),
    lockedUntil: ts('locked_until'),
    at: ts('at').notNull(),
    /**
     * The message's place in its web visitor's widget stream, set by the database on every insert and
     * status change of a message of a web conversation that is not private (trigger
     * `messages_widget_position`, migration 0030): the contact's next position from widget_positions.
     * Null on other channels.
     */
    streamSeq: bigint('stream_seq', { mode: 'number' }),
  },
  (t) => [
    // The provider's id de-duplicates its retries.
    uniqueIndex('messages_inbox_external_idx').on(t.inboxId, t.direction, t.externalId),
    index('messages_conversation_idx').on(t.conversationId, t.at),
    index('messages_queue_idx')
      .on(t.nextAttemptAt)
      .where(sql`status = 'queued'`),
    // A widget stream's replay after `since` (web conversations only).
    index('messages_stream_idx')
      .on(t.conversationId, t.streamSeq)
      .where(sql`stream_seq is not null`),
    // Whether a thread had outreach (reachedOutSql, whose predicate this repeats): one probe, however
    // many messages the thread holds.
    index('messages_outreach_idx')
      .on(t.conversationId, t.at)
      .where(sql`direction = 'out' and sender in ('human', 'campaign') and private = false and status in ('sent', 'delivered', 'read')`),
  ],
);

/**
 * The last widget stream position given to each web contact (CONTRACT §8: the widget stream's `id:`
 * is an increasing sequence number of that stream). Written only by the trigger on `messages`: an
 * upsert of this row hands out the next position, and its row lock makes positions commit in their
 * order, so a stream that has read position n has every change before it. A table of its own, not a
 * column of `contacts`: the inbound fast path holds the contact's row version, which a counter there
 * would change at every message.
 */
export const widgetPositions = pgTable('widget_positions', {
  contactId: text('contact_id')
    .primaryKey()
    .references(() => contacts.id, { onDelete: 'cascade' }),
  seq: bigint('seq', { mode: 'number' }).notNull(),
});

/** Per reader (a user or an API key): messages after read_at are unread. */
export const conversationReads = pgTable(
  'conversation_reads',
  {
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    readerId: text('reader_id').notNull(),
    readAt: ts('read_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.readerId] })],
);

/**
 * A web widget visitor's session: an anonymous contact of a web inbox, known by a random token the
 * widget keeps (stored here only as its SHA-256). Sliding expiry: each use moves it forward.
 */
export const widgetSessions = pgTable(
  'widget_sessions',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    inboxId: text('inbox_id')
      .notNull()
      .references(() => inboxes.id, { onDelete: 'cascade' }),
    contactId: text('contact_id')
      .notNull()
      .references(() => contacts.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    createdAt: createdAt(),
    lastSeenAt: ts('last_seen_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [uniqueIndex('widget_sessions_token_idx').on(t.tokenHash), index('widget_sessions_inbox_idx').on(t.inboxId)],
);
