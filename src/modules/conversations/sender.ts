import { and, asc, desc, eq, isNotNull, ne, sql } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import type { EventsService } from '../events/service.ts';
import type { Channel } from './channels.ts';
import { publicMessage, type ConversationsService } from './service.ts';
import { contacts, conversations, inboxes, messages } from './tables.ts';

const BATCH = 100;
const LEASE_MS = 60_000;

type MessageRow = typeof messages.$inferSelect;

/**
 * The outbound queue's loop: claims due `queued` messages with SKIP LOCKED (leased, so a crashed
 * instance's claim is taken again after the lease), hands each to its channel, and records the
 * outcome: `sent` with the provider's id and `message.sent`; a retry after the back-off (or the
 * provider's Retry-After) on 5xx/429/network errors; `failed` with the provider's error on a 4xx or
 * once the retries are spent.
 */
export class OutboundSender {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly config: Config;
  private readonly conversations: ConversationsService;
  private readonly events: EventsService;

  constructor(deps: Deps, conversations: ConversationsService, events: EventsService) {
    this.conversations = conversations;
    this.events = events;
    this.db = deps.db;
    this.clock = deps.clock;
    this.config = deps.config;
  }

  async round(): Promise<boolean> {
    const now = this.clock.now();
    const claimed = await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const due = await tx.select({ id: messages.id }).from(messages)
        .where(sql`${messages.status} = 'queued' and ${messages.nextAttemptAt} <= ${now.toISOString()}::timestamptz
          and (${messages.lockedUntil} is null or ${messages.lockedUntil} < ${now.toISOString()}::timestamptz)`)
        .orderBy(messages.nextAttemptAt).limit(BATCH).for('update', { skipLocked: true });
      if (due.length === 0) return [];
      return tx.update(messages).set({ lockedUntil: new Date(now.getTime() + LEASE_MS), attempts: sql`${messages.attempts} + 1` })
        .where(sql`${messages.id} = any(${sql.param(due.map((d) => d.id))}::text[])`).returning();
    });
    await Promise.all(claimed.map((m) => this.deliver(m).catch(() => {})));
    return claimed.length > 0;
  }

  private async deliver(message: MessageRow): Promise<void> {
    const [found] = await this.db.select({ inbox: inboxes, conversation: conversations, contact: contacts }).from(messages)
      .innerJoin(inboxes, eq(inboxes.id, messages.inboxId))
      .innerJoin(conversations, eq(conversations.id, messages.conversationId))
      .innerJoin(contacts, eq(contacts.id, conversations.contactId))
      .where(eq(messages.id, message.id));
    if (!found) return;
    const adapter = this.conversations.adapters[found.inbox.channel as Channel];
    if (!adapter) {
      await this.fail(message, `the ${found.inbox.channel} channel is not available`);
      return;
    }
    const outcome = await adapter.send({
      orgId: message.orgId, projectId: message.projectId,
      inbox: { id: found.inbox.id, name: found.inbox.name, config: found.inbox.config, signingSecret: this.conversations.signingSecretOf(found.inbox), credentials: this.conversations.credentialsOf(found.inbox) },
      message: { ...publicMessage(message), status: 'queued', ...(message.template ? { template: message.template } : {}) },
      ...(message.sender === 'campaign' && this.conversations.unsubscribeUrl ? { unsubscribeUrl: this.conversations.unsubscribeUrl(message.orgId, found.inbox.channel, found.contact.address) } : {}),
      conversation: {
        id: found.conversation.id, subject: found.conversation.subject, contact: { id: found.contact.id, name: found.contact.name, address: found.contact.address },
        ...(found.inbox.channel === 'email' ? { references: await this.threadIds(found.conversation.id, message.id) } : {}),
      },
    });
    if (outcome.ok) {
      await this.db.transaction(async (trx) => {
        const tx = trx as unknown as Db;
        const [sent] = await tx.update(messages).set({ status: 'sent', externalId: outcome.externalId, error: null, lockedUntil: null, nextAttemptAt: null })
          .where(sql`${messages.id} = ${message.id} and ${messages.status} = 'queued'`).returning();
        if (!sent) return;
        await this.events.record(tx, {
          orgId: sent.orgId, projectId: sent.projectId, type: 'message.sent',
          payload: { message: publicMessage(sent), sender: sent.sender, conversationId: sent.conversationId, ...(found.conversation.leadId ? { leadId: found.conversation.leadId } : {}) },
        });
        await this.conversations.outboundChanged(tx, sent);
      });
      return;
    }
    const delays = this.config.webhookRetryDelaysS;
    if (!outcome.retry || message.attempts > delays.length) {
      await this.fail(message, outcome.error);
      return;
    }
    const backoffS = delays[Math.min(message.attempts - 1, delays.length - 1)] ?? 60;
    const waitS = Math.max(backoffS, outcome.retryAfterS ?? 0);
    await this.settle(message, { error: outcome.error, lockedUntil: null, nextAttemptAt: new Date(this.clock.now().getTime() + waitS * 1000) });
  }

  /** Records a failed attempt (a retry's wait, or the failure) on a still-queued message; the org stream hears of it. */
  private async settle(message: MessageRow, set: Partial<MessageRow>): Promise<void> {
    await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const [row] = await tx.update(messages).set(set).where(sql`${messages.id} = ${message.id} and ${messages.status} = 'queued'`).returning();
      if (!row) return;
      await this.conversations.announce(tx, row);
      await this.conversations.outboundChanged(tx, row);
    });
  }

  /**
   * E-mail threading: the provider ids (Message-IDs) of the conversation's other messages that
   * reached or left the provider, oldest first; the first and the latest 49 of a long thread.
   */
  private async threadIds(conversationId: string, exceptId: string): Promise<string[]> {
    const where = and(eq(messages.conversationId, conversationId), ne(messages.id, exceptId), isNotNull(messages.externalId), eq(messages.private, false),
      sql`(${messages.direction} = 'in' or ${messages.status} in ('sent', 'delivered', 'read'))`);
    const [first, latest] = await Promise.all([
      this.db.select({ id: messages.externalId }).from(messages).where(where).orderBy(asc(messages.at), asc(messages.id)).limit(1),
      this.db.select({ id: messages.externalId }).from(messages).where(where).orderBy(desc(messages.at), desc(messages.id)).limit(49),
    ]);
    return [...new Set([...first, ...latest.reverse()].map((r) => r.id!))];
  }

  private fail(message: MessageRow, error: string): Promise<void> {
    return this.settle(message, { status: 'failed', error: error.slice(0, 1000), lockedUntil: null, nextAttemptAt: null });
  }
}
