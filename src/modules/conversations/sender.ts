import { eq, inArray, sql } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { rows, transaction, type Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import type { Channel, Outcome } from './channel-types.ts';
import type { EventsPort, SenderPorts, SendingPort, UnsubscribePort } from './ports.ts';
import { messageSent, publicMessage } from './payloads.ts';
import { contacts, conversations, inboxes, messages } from './tables.ts';

const BATCH = 100;

/** The e-mail thread a message goes out in: the subject it follows up on (null: the conversation's) and the Message-IDs it answers, oldest first. */
interface EmailThread {
  subject: string | null;
  references: string[];
}

type MessageRow = typeof messages.$inferSelect;
/** How long a send the provider accepted may wait for the database to record it (well within the lease). */
const RECORD_WITHIN_MS = 15_000;

/** A send the provider accepted, not recorded yet. */
interface Accepted {
  message: MessageRow;
  externalId: string;
  leadId: string | null;
  channel: string;
  to: string;
}

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
  private readonly conversations: SendingPort;
  private readonly events: EventsPort;
  private readonly unsubscribe: UnsubscribePort;

  constructor(deps: Deps, ports: SenderPorts) {
    this.conversations = ports.conversations;
    this.events = ports.events;
    this.unsubscribe = ports.unsubscribe;
    this.db = deps.db;
    this.clock = deps.clock;
    this.config = deps.config;
  }

  async round(): Promise<boolean> {
    const now = this.clock.now();
    const claimed = await transaction(this.db, async (tx) => {
      const due = await tx
        .select({ id: messages.id })
        .from(messages)
        .where(
          sql`${messages.status} = 'queued' and ${messages.nextAttemptAt} <= ${now.toISOString()}::timestamptz
          and (${messages.lockedUntil} is null or ${messages.lockedUntil} < ${now.toISOString()}::timestamptz)`,
        )
        .orderBy(messages.nextAttemptAt)
        .limit(BATCH)
        .for('update', { skipLocked: true });
      if (due.length === 0) return [];
      return tx
        .update(messages)
        .set({ lockedUntil: new Date(now.getTime() + this.config.outboundLeaseMs), attempts: sql`${messages.attempts} + 1` })
        .where(sql`${messages.id} = any(${sql.param(due.map((d) => d.id))}::text[])`)
        .returning();
    });
    if (claimed.length === 0) return false;
    // What every send needs, read once for the batch: the inbox, the thread, the contact, and for
    // e-mail the thread's earlier Message-IDs.
    const found = new Map(
      (
        await this.db
          .select({ id: messages.id, inbox: inboxes, conversation: conversations, contact: contacts })
          .from(messages)
          .innerJoin(inboxes, eq(inboxes.id, messages.inboxId))
          .innerJoin(conversations, eq(conversations.id, messages.conversationId))
          .innerJoin(contacts, eq(contacts.id, conversations.contactId))
          .where(
            inArray(
              messages.id,
              claimed.map((m) => m.id),
            ),
          )
      ).map((row) => [row.id, row]),
    );
    const threads = await this.emailThreads(claimed.filter((m) => found.get(m.id)?.inbox.channel === 'email'));
    // Each accepted send is recorded as soon as it can be: a write of every success so far starts
    // when one completes and none is under way (a group commit), so the sends and their records
    // overlap, and a crash can repeat only the few the relay accepted since the last write.
    const pending: Accepted[] = [];
    let writing: Promise<void> | null = null;
    const record = () => {
      writing ??= (async () => {
        try {
          while (pending.length) await this.recordSentPersistently(pending.splice(0));
        } finally {
          writing = null;
        }
      })();
      return writing;
    };
    const refusals: { message: MessageRow; channel: string; outcome: Extract<Outcome, { ok: false }> }[] = [];
    await Promise.all(
      claimed.map(async (message) => {
        const context = found.get(message.id);
        if (!context) return;
        const outcome = await this.attempt(message, context, threads.get(message.id)).catch((error: Error): Outcome => ({
          ok: false,
          retry: true,
          error: error.message,
        }));
        if (outcome.ok) {
          pending.push({
            message,
            externalId: outcome.externalId,
            leadId: context.conversation.leadId,
            channel: context.inbox.channel,
            to: context.contact.address,
          });
          await record();
        } else {
          refusals.push({ message, channel: context.inbox.channel, outcome });
        }
      }),
    );
    await writing;
    for (const { message, channel, outcome } of refusals) await this.refused(message, channel, outcome);
    return true;
  }

  /**
   * recordSent, tried again while the database does not answer (a restart: the chaos run's fast
   * shutdown of PostgreSQL), for up to RECORD_WITHIN_MS. A send the provider accepted and the
   * record lost stays claimed until its lease ends and is sent again: every instance's sends of those
   * seconds went out twice. Recording twice is harmless (only `queued` messages become `sent`).
   */
  private async recordSentPersistently(accepted: Accepted[]): Promise<void> {
    const until = Date.now() + RECORD_WITHIN_MS;
    for (let pause = 250; ; pause = Math.min(pause * 2, 2000)) {
      try {
        return await this.recordSent(accepted);
      } catch (error) {
        if (Date.now() + pause > until) throw error;
        await new Promise((r) => setTimeout(r, pause));
      }
    }
  }

  /** Accepted sends, in one transaction: `sent` with the provider's ids, their message.sent, what follows them. */
  private async recordSent(accepted: Accepted[]): Promise<void> {
    await transaction(this.db, async (tx) => {
      const sent = await rows<{ id: string }>(
        tx,
        sql`update ${messages} m set status = 'sent', external_id = v.external_id, error = null, locked_until = null, next_attempt_at = null
        from unnest(${sql.param(accepted.map((a) => a.message.id))}::text[], ${sql.param(accepted.map((a) => a.externalId))}::text[]) as v(id, external_id)
        where m.id = v.id and m.status = 'queued' returning m.id`,
      );
      if (!sent.length) return;
      const rowsSent = await tx
        .select()
        .from(messages)
        .where(
          inArray(
            messages.id,
            sent.map((r) => r.id),
          ),
        );
      const of = new Map(accepted.map((a) => [a.message.id, a]));
      await this.events.record(
        tx,
        rowsSent.map((row) => messageSent(row, of.get(row.id)!)),
      );
      await this.conversations.outboundChanged(tx, rowsSent);
    });
  }

  /** One send through the message's channel. */
  private async attempt(
    message: MessageRow,
    found: { inbox: typeof inboxes.$inferSelect; conversation: typeof conversations.$inferSelect; contact: typeof contacts.$inferSelect },
    thread: EmailThread | undefined,
  ): Promise<Outcome> {
    const adapter = this.conversations.adapters[found.inbox.channel as Channel];
    if (!adapter) return { ok: false, retry: false, error: `the ${found.inbox.channel} channel is not available` };
    return adapter.send({
      orgId: message.orgId,
      projectId: message.projectId,
      inbox: {
        id: found.inbox.id,
        name: found.inbox.name,
        config: found.inbox.config,
        signingSecret: this.conversations.signingSecretOf(found.inbox),
        credentials: this.conversations.credentialsOf(found.inbox),
      },
      message: { ...publicMessage(message), status: 'queued', ...(message.template ? { template: message.template } : {}) },
      ...(message.sender === 'campaign' ? { unsubscribeUrl: this.unsubscribe.url(message.orgId, found.inbox.channel, found.contact.address) } : {}),
      conversation: {
        id: found.conversation.id,
        subject: thread?.subject ?? found.conversation.subject,
        contact: { id: found.contact.id, name: found.contact.name, address: found.contact.address },
        ...(found.inbox.channel === 'email' ? { references: thread?.references ?? [] } : {}),
      },
    });
  }

  /** A refusal: tried again after the back-off (or the provider's Retry-After), or failed for good. */
  private async refused(message: MessageRow, channel: string, outcome: { ok: false; retry: boolean; retryAfterS?: number; error: string }): Promise<void> {
    const delays = this.config.webhookRetryDelaysS;
    if (!outcome.retry || message.attempts > delays.length) {
      await this.fail(message, channel, outcome.error);
      return;
    }
    const backoffS = delays[Math.min(message.attempts - 1, delays.length - 1)] ?? 60;
    const waitS = Math.max(backoffS, outcome.retryAfterS ?? 0);
    await this.settle(message, channel, { error: outcome.error, lockedUntil: null, nextAttemptAt: new Date(this.clock.now().getTime() + waitS * 1000) });
  }

  /** Records a failed attempt (a retry's wait, or the failure) on a still-queued message; the org stream hears of it. */
  private async settle(message: MessageRow, channel: string, set: Partial<MessageRow>): Promise<void> {
    await transaction(this.db, async (tx) => {
      const [row] = await tx
        .update(messages)
        .set(set)
        .where(sql`${messages.id} = ${message.id} and ${messages.status} = 'queued'`)
        .returning();
      if (!row) return;
      await this.conversations.announce(tx, row, channel);
      await this.conversations.outboundChanged(tx, [row]);
    });
  }

  /**
   * E-mail threading, for a batch of messages (CONTRACT §9). A message with its own subject (a
   * campaign step's) starts a thread: sent with that subject and answering nothing. Under the old
   * In-Reply-To, clients that thread by references (Thunderbird, Apple Mail) would file the new
   * topic in the old thread and those that also compare subjects (Gmail) would not: without the
   * headers it is a new thread in every client, as its subject says. Any other message follows up
   * in the thread the newest such message started, or else the conversation's: `Re:` its subject,
   * answering the provider ids (Message-IDs) of the messages since that start that reached or left
   * the provider, oldest first; the first and the latest 49 of a long thread. One statement for the
   * batch.
   */
  private async emailThreads(batch: MessageRow[]): Promise<Map<string, EmailThread>> {
    const out = new Map<string, EmailThread>();
    const followUps = batch.filter((m) => {
      if (m.subject) out.set(m.id, { subject: m.subject, references: [] });
      return !m.subject;
    });
    if (!followUps.length) return out;
    const found = await rows<{ conversation_id: string; id: string; external_id: string; subject: string | null }>(
      this.db,
      sql`
      select conversation_id, id, external_id, subject from (
        select m.conversation_id, m.id, m.external_id, m.subject, m.at,
          row_number() over (partition by m.conversation_id order by m.at, m.id) as first,
          row_number() over (partition by m.conversation_id order by m.at desc, m.id desc) as latest,
          row_number() over (partition by m.conversation_id, m.subject is null order by m.at desc, m.id desc) as newest
        from ${messages} m
        where m.conversation_id = any(${sql.param([...new Set(followUps.map((m) => m.conversationId))])}::text[]) and m.external_id is not null and m.private = false
          and (m.direction = 'in' or m.status in ('sent', 'delivered', 'read'))) t
      where first = 1 or latest <= 50 or (subject is not null and newest = 1)
      order by conversation_id, at, id`,
    );
    for (const message of followUps) {
      const thread = found.filter((r) => r.conversation_id === message.conversationId && r.id !== message.id);
      const start = thread.findLastIndex((r) => r.subject !== null);
      const ids = thread.slice(Math.max(start, 0)).map((r) => r.external_id);
      out.set(message.id, {
        subject: start >= 0 ? thread[start]!.subject : null,
        references: [...new Set(ids.length > 50 ? [ids[0]!, ...ids.slice(-49)] : ids)],
      });
    }
    return out;
  }

  private fail(message: MessageRow, channel: string, error: string): Promise<void> {
    return this.settle(message, channel, { status: 'failed', error: error.slice(0, 1000), lockedUntil: null, nextAttemptAt: null });
  }
}
