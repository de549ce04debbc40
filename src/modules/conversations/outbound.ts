import { and, desc, eq, sql } from 'drizzle-orm';
import { rows, transaction, type Db } from '../../platform/db.ts';
import type { Scope } from '../../platform/context.ts';
import { badRequest } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Channel } from './channel-types.ts';
import { contactRow, isEmail, isPhone, leadFor, upsertContact } from './contacts.ts';
import { isUniqueViolation, type ConversationsContext, type InboxRow, type MessageRow } from './context.ts';
import type { Inboxes } from './inboxes.ts';
import { streamMessage } from './payloads.ts';
import { OUTBOUND_WAKE, outboundOf, type MessageTemplate, type NewThread, type OutboundInput, type Threads } from './threads.ts';
import { contacts, conversations, messages } from './tables.ts';

/** An outbound message as the watchers of watchOutbound see it. */
export type OutboundMessage = MessageRow;

/**
 * Organization-initiated outreach (a workflow's messaging.send, a campaign's steps, one by one or
 * in a batch) queued for the sender loop, and the status changes of automated outbound messages
 * told to who follows them (campaigns, wired in services.ts).
 */
export class Outbound {
  private readonly ctx: ConversationsContext;
  private readonly inboxes: Pick<Inboxes, 'inboxRow'>;
  private readonly threads: Threads;
  /** Who follows outbound messages: told in the transaction of every status change of ones sent by an automation (sender `campaign`). */
  private readonly outboundWatchers: ((tx: Db, rows: MessageRow[]) => Promise<void>)[] = [];

  constructor(ctx: ConversationsContext, parts: { inboxes: Pick<Inboxes, 'inboxRow'>; threads: Threads }) {
    this.ctx = ctx;
    this.inboxes = parts.inboxes;
    this.threads = parts.threads;
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
  async sendFromWorkflow(
    scope: Scope,
    input: OutboundInput & { inboxId: string; to?: string; leadId?: string; messageId: string; workflowId: string; dryRun?: boolean },
  ) {
    const out = outboundOf(input);
    const to = input.to?.trim() || undefined;
    if ((to === undefined) === (input.leadId === undefined))
      throw badRequest('Give either to (an address) or leadId', [{ field: 'params.to', message: 'exactly one of to and leadId is required' }]);
    const inbox = await this.inboxes.inboxRow(scope, input.inboxId);
    const [done] = await this.ctx.db
      .select()
      .from(messages)
      .where(and(eq(messages.orgId, scope.orgId), eq(messages.id, input.messageId)));
    if (done)
      return { messageId: done.id, conversationId: done.conversationId, inboxId: done.inboxId, channel: inbox.channel, status: done.status, duplicate: true };
    let address: string;
    let lead: { id: string; name: string | null } | null = null;
    if (input.leadId !== undefined) {
      const found = await this.ctx.ports.leads.get(scope, input.leadId);
      if (found.projectId !== inbox.projectId)
        throw badRequest('The lead and the inbox belong to different projects', [{ field: 'params.leadId', message: "must be a lead of the inbox's project" }]);
      // The lead's contact on this inbox when it has one (a Telegram chat), else the address the channel needs.
      const [known] = await this.ctx.db
        .select({ address: contacts.address })
        .from(contacts)
        .where(and(eq(contacts.inboxId, inbox.id), eq(contacts.leadId, found.id)))
        .orderBy(desc(contacts.createdAt))
        .limit(1);
      const reach =
        known?.address ??
        (inbox.channel === 'email'
          ? found.email
          : inbox.channel === 'whatsapp'
            ? found.phone
            : inbox.channel === 'telegram'
              ? null
              : (found.email ?? found.phone));
      // No thread and no address: a channel that cannot start one says so (its 422).
      if (!reach) await this.threads.checkSend(this.ctx.db, inbox.channel, null, input.template !== undefined, this.ctx.clock.now());
      if (!reach)
        throw badRequest(`The lead has no address the ${inbox.channel} channel can reach`, [
          { field: 'params.leadId', message: `has no address for the ${inbox.channel} channel` },
        ]);
      address = reach;
      lead = { id: found.id, name: found.name ?? null };
    } else {
      address = to!;
      if (address.length > 320) throw badRequest('to is too long', [{ field: 'params.to', message: 'must be at most 320 characters' }]);
      if (inbox.channel === 'email' && !isEmail(address))
        throw badRequest('The e-mail channel sends to an e-mail address', [{ field: 'params.to', message: 'must be an e-mail address' }]);
      if (inbox.channel === 'whatsapp' && !isPhone(address))
        throw badRequest('The WhatsApp channel sends to a phone number', [{ field: 'params.to', message: 'must be a phone number' }]);
    }
    const now = this.ctx.clock.now();
    const existing = await contactRow(this.ctx.db, inbox.id, address);
    // The channel's rules before anything is written (and again in the transaction that queues).
    const [open] = existing
      ? await this.ctx.db
          .select()
          .from(conversations)
          .where(and(eq(conversations.contactId, existing.id), eq(conversations.status, 'OPEN')))
      : [];
    await this.threads.checkSend(this.ctx.db, inbox.channel, existing?.id ?? null, out.template !== null, now);
    if (input.dryRun) {
      const leadId = lead?.id ?? existing?.leadId ?? null;
      return {
        dryRun: true,
        inboxId: inbox.id,
        channel: inbox.channel,
        to: address,
        text: out.text,
        conversationId: open?.id ?? null,
        ...(leadId ? { leadId } : {}),
        ...(out.template ? { template: out.template } : {}),
      };
    }
    // An address becomes a lead as an inbound contact does (not a Telegram chat id).
    const leadId =
      lead?.id ??
      existing?.leadId ??
      (inbox.channel === 'telegram' ? null : await leadFor(this.ctx.ports.leads, { ...scope, projectId: inbox.projectId }, inbox, address, undefined));
    for (let attempt = 1; ; attempt++) {
      try {
        const message = await transaction(this.ctx.db, (tx) =>
          this.queueOutreach(
            tx,
            inbox,
            {
              address,
              name: lead?.name ?? null,
              leadId,
              subject: null,
              text: out.text,
              template: out.template,
              authorId: input.workflowId,
              messageId: input.messageId,
            },
            now,
          ),
        );
        return {
          messageId: message.id,
          conversationId: message.conversationId,
          inboxId: inbox.id,
          channel: inbox.channel,
          status: message.status,
          duplicate: false,
        };
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= 3) throw error;
        // The same step's other execution queued it first, or a concurrent message opened the thread: look again.
        const [raced] = await this.ctx.db
          .select()
          .from(messages)
          .where(and(eq(messages.orgId, scope.orgId), eq(messages.id, input.messageId)));
        if (raced)
          return {
            messageId: raced.id,
            conversationId: raced.conversationId,
            inboxId: raced.inboxId,
            channel: inbox.channel,
            status: raced.status,
            duplicate: true,
          };
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
  async queueOutreach(
    tx: Db,
    inbox: InboxRow,
    input: {
      address: string;
      name: string | null;
      leadId: string | null;
      subject: string | null;
      text: string;
      template: MessageTemplate | null;
      authorId: string;
      messageId: string;
    },
    now: Date,
  ): Promise<MessageRow> {
    const contact = await upsertContact(tx, inbox, input.address, input.name, input.leadId);
    let row = await this.threads.contactThread(tx, contact.id);
    await this.threads.checkSend(tx, inbox.channel, contact.id, input.template !== null, now);
    if (!row) {
      [row] = await this.threads.openThread(
        tx,
        inbox,
        [
          {
            contact,
            leadId: contact.leadId,
            subject: input.subject,
            handledBy: inbox.bot.enabled ? 'bot' : 'human',
            firstReplyAt: now,
          },
        ],
        now,
      );
    } else {
      await tx.update(conversations).set({ lastMessageAt: now }).where(eq(conversations.id, row.id));
    }
    const queued = await this.threads.queue(
      tx,
      row!,
      input.text,
      'campaign',
      input.authorId,
      now,
      input.template,
      input.messageId,
      inbox.channel === 'email' ? input.subject : null,
    );
    await this.threads.announce(tx, queued, inbox.channel);
    return queued;
  }

  /** Whether a channel has send rules of its own (a window, no first message): then outreach is queued one by one (queueOutreach). */
  hasSendRules(channel: string): boolean {
    return Boolean(this.ctx.adapters[channel as Channel]?.checkSend);
  }

  /**
   * Many outreach messages through one inbox of a channel without send rules (e-mail), queued in the
   * caller's transaction in a few statements whatever their number: the contacts upserted, their
   * open threads found (locked) or opened, the messages inserted, one wake-up for the sender loop
   * and one announcement per batch. Distinct addresses only (a campaign's recipients are).
   */
  async queueOutreachMany(
    tx: Db,
    inbox: InboxRow,
    items: { address: string; name: string | null; leadId: string | null; subject: string | null; text: string; authorId: string; messageId: string }[],
    now: Date,
  ): Promise<void> {
    if (this.hasSendRules(inbox.channel)) throw new Error(`queueOutreachMany: the ${inbox.channel} channel has send rules; queue one by one`);
    if (!items.length) return;
    const list = <K extends keyof (typeof items)[number]>(key: K) => sql.param(items.map((i) => i[key]));
    const people = await rows<{ id: string; address: string; name: string | null; lead_id: string | null; created_at: Date }>(
      tx,
      sql`
      insert into ${contacts} (id, org_id, project_id, inbox_id, address, name, lead_id)
      select c.id, ${inbox.orgId}, ${inbox.projectId}, ${inbox.id}, c.address, c.name, c.lead_id
      from unnest(${sql.param(items.map(() => newId('contact', now.getTime())))}::text[], ${list('address')}::text[], ${list('name')}::text[], ${list('leadId')}::text[]) as c(id, address, name, lead_id)
      on conflict (inbox_id, address) do update set name = coalesce(excluded.name, ${contacts}.name), lead_id = coalesce(${contacts}.lead_id, excluded.lead_id)
      returning id, address, name, lead_id, created_at`,
    );
    const contactOf = new Map(people.map((c) => [c.address, c]));
    const open = await tx
      .select()
      .from(conversations)
      .where(and(sql`${conversations.contactId} = any(${sql.param(people.map((c) => c.id))}::text[])`, eq(conversations.status, 'OPEN')))
      .for('update');
    const threadOf = new Map(open.map((c) => [c.contactId, c]));
    const fresh = items
      .filter((i) => !threadOf.has(contactOf.get(i.address)!.id))
      .map((i): NewThread => {
        const contact = contactOf.get(i.address)!;
        return { contact, leadId: contact.lead_id, subject: i.subject, handledBy: inbox.bot.enabled ? 'bot' : 'human', firstReplyAt: now };
      });
    for (const row of await this.threads.openThread(tx, inbox, fresh, now)) threadOf.set(row.contactId, row);
    if (open.length)
      await tx
        .update(conversations)
        .set({ lastMessageAt: now })
        .where(sql`${conversations.id} = any(${sql.param(open.map((c) => c.id))}::text[])`);
    const queued = await tx
      .insert(messages)
      .values(
        items.map((i) => {
          const thread = threadOf.get(contactOf.get(i.address)!.id)!;
          return {
            id: i.messageId,
            orgId: inbox.orgId,
            projectId: inbox.projectId,
            inboxId: inbox.id,
            conversationId: thread.id,
            direction: 'out',
            sender: 'campaign',
            authorId: i.authorId,
            text: i.text,
            subject: inbox.channel === 'email' ? i.subject : null,
            template: null,
            status: 'queued',
            nextAttemptAt: now,
            at: now,
          };
        }),
      )
      .returning();
    await this.ctx.ports.bus.publishInTx(tx, OUTBOUND_WAKE, null);
    await this.ctx.ports.orgStream.publishManyInTx(
      tx,
      inbox.orgId,
      queued.map((row) => streamMessage(row, inbox.channel)),
    );
  }

  watchOutbound(fn: (tx: Db, rows: MessageRow[]) => Promise<void>): void {
    this.outboundWatchers.push(fn);
  }

  /** Status changes of outbound messages (sent, delivered, read, failed), in their transaction. */
  async outboundChanged(tx: Db, changed: MessageRow[]): Promise<void> {
    const automated = changed.filter((row) => row.sender === 'campaign');
    if (!automated.length) return;
    for (const fn of this.outboundWatchers) await fn(tx, automated);
  }
}
