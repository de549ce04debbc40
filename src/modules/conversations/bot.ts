import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Deps } from '../../platform/deps.ts';
import { transaction, type Db } from '../../platform/db.ts';
import type { EventRow } from '../events/index.ts';
import { faqScore, type FaqEntry } from '../../shared/faq.ts';
import type { BotPorts, Turn } from './ports.ts';
import { contacts, conversations, inboxes, messages } from './tables.ts';

/** Wakes the bot's loop: a commit requested a turn. */
export const BOT_WAKE = 'wake:conversations-bot';

const BOT_TYPE = 'CHATBOT';
/** Messages of the thread a turn sees, the newest ones. */
const TRANSCRIPT = 20;
const TEXT_LIMIT = 2000;
/** An FAQ up to this size goes to the model whole; a larger one as its entries closest to the new messages. */
const FAQ_INLINE_CHARS = 24_000;
const FAQ_TOP = 10;

type InboxRow = typeof inboxes.$inferSelect;
type ConversationRow = typeof conversations.$inferSelect;

/** How a turn may end without the bot having acted; the conversation then goes to people. */
const BROKEN = new Set(['failed', 'budget_exceeded', 'max_steps']);
export const BROKEN_TURN_REASON = 'the bot could not answer';

const cut = (text: string) => (text.length > TEXT_LIMIT ? `${text.slice(0, TEXT_LIMIT)}…` : text);

/**
 * The conversations bot (CONTRACT §8 "The bot"). A turn is an agent run of type CHATBOT:
 *
 * - requested by the dispatcher, in the transaction that dispatches `message.received`, when the
 *   message (not an automatic reply) is in an open conversation the bot handles and the inbox's bot
 *   is enabled: a QUEUED run, unless the conversation already has one waiting (that one will take
 *   this message too). Requested in the dispatch transaction, a turn survives a crash either way.
 * - taken by this loop (the agent runner leaves CHATBOT runs alone): in one transaction that locks
 *   the conversation's row, only while no other turn of the conversation is RUNNING on any
 *   instance; it takes the conversation's inbound messages no turn has taken yet (an inbound
 *   message's `attempts` counts the turns that took it), and reads the recent thread and the FAQ
 *   into the run's input. A conversation handed to people, closed, or whose inbox's bot was switched
 *   off meanwhile ends the run `canceled` without a model call.
 * - executed by the agent runner's engine (steps, usage and cost, budgets, lease, cancel) on this
 *   instance; when it ends, the runner's wake-up lets this loop take the conversation's next turn.
 *   A turn that broke (model error, budget, step limit) hands the conversation to people.
 */
export class ConversationBot {
  private readonly deps: Deps;
  private readonly ports: BotPorts;

  constructor(deps: Deps, ports: BotPorts) {
    this.deps = deps;
    this.ports = ports;
  }

  // ---------------------------------------------------------------- requesting turns

  /** Dispatcher subscriber: a turn for each conversation of the batch's `message.received` the bot should answer. */
  async onEvents(tx: Db, batch: EventRow[]): Promise<void> {
    const ids = batch
      .filter((e) => e.type === 'message.received')
      .map((e) => (e.payload.message as { id?: unknown } | undefined)?.id)
      .filter((id): id is string => typeof id === 'string');
    if (ids.length === 0) return;
    const due = await tx
      .select({ conversationId: conversations.id, inbox: inboxes })
      .from(messages)
      .innerJoin(conversations, eq(conversations.id, messages.conversationId))
      .innerJoin(inboxes, eq(inboxes.id, messages.inboxId))
      .where(
        and(
          inArray(messages.id, ids),
          eq(messages.direction, 'in'),
          eq(messages.autoReply, false),
          eq(messages.private, false),
          eq(messages.attempts, 0),
          eq(conversations.status, 'OPEN'),
          eq(conversations.handledBy, 'bot'),
        ),
      );
    const byConversation = new Map<string, InboxRow>();
    for (const row of due) if (row.inbox.bot?.enabled) byConversation.set(row.conversationId, row.inbox);
    if (byConversation.size === 0) return;
    let requested = 0;
    // One order of locks for every transaction that locks several conversations.
    for (const id of [...byConversation.keys()].sort()) {
      if (await this.request(tx, id, byConversation.get(id)!)) requested++;
    }
    if (requested > 0) await this.ports.bus.publishInTx(tx, BOT_WAKE, null);
  }

  /** A QUEUED turn for the conversation, unless one is already waiting. */
  private async request(tx: Db, conversationId: string, inbox: InboxRow): Promise<boolean> {
    const [conversation] = await tx.select().from(conversations).where(eq(conversations.id, conversationId)).for('update');
    if (!conversation || conversation.status !== 'OPEN' || conversation.handledBy !== 'bot') return false;
    const { turns } = this.ports;
    if (await turns.hasQueued(tx, conversation.orgId, conversationId)) return false;
    const saved = inbox.bot.agentId ? await turns.savedAgent(tx, inbox.orgId, inbox.bot.agentId) : undefined;
    await turns.queue(tx, {
      orgId: conversation.orgId,
      projectId: conversation.projectId,
      type: BOT_TYPE,
      conversationId: conversation.id,
      task: `Answer the contact in conversation ${conversation.id}`,
      // A model the server cannot use fails the turn visibly (MODEL_NOT_ALLOWED in its error).
      modelId: inbox.bot.modelId ?? saved?.modelId ?? this.deps.config.defaultModel,
      agentId: saved?.id ?? null,
      instructions: saved?.instructions ?? null,
      maxSteps: saved?.maxSteps ?? this.deps.config.agentMaxSteps,
      budgetUsd: saved?.budgetUsd ?? null,
      at: this.deps.clock.now(),
    });
    return true;
  }

  // ---------------------------------------------------------------- taking turns

  /** One round: take the turns that may start (one per conversation at a time) and execute them here. */
  async round(): Promise<boolean> {
    const { turns } = this.ports;
    const free = this.deps.config.agentConcurrency - turns.activeCount;
    if (free <= 0) return false;
    const ended: Turn[] = [];
    const taken = await transaction(this.deps.db, async (tx) => {
      ended.length = 0;
      const queued = await turns.queued(tx, free * 4);
      const out: Turn[] = [];
      for (const run of queued) {
        if (out.length >= free) break;
        const outcome = await this.take(tx, run);
        if (outcome?.status === 'RUNNING') out.push(outcome);
        else if (outcome) ended.push(outcome);
      }
      return out;
    });
    for (const row of ended) await turns.published(row);
    for (const row of taken) {
      void turns
        .run(row)
        .then((final) => this.afterTurn(final))
        .catch((error: unknown) => this.deps.log.error({ err: error, agentRunId: row.id }, 'bot turn crashed'));
    }
    return false;
  }

  /**
   * A turn that broke (the model failed, the budget or step limit stopped it) leaves the contact
   * to people rather than without an answer: the conversation is handed off, unless the bot already
   * handed it off, closed it, or a person took it over.
   */
  private async afterTurn(final: Turn): Promise<void> {
    if (!BROKEN.has(final.status)) return;
    const conversationId = String(final.input.conversationId ?? '');
    const scope = { orgId: final.orgId, projectId: final.projectId, actor: { type: 'agent' as const, id: final.id } };
    await this.ports.conversations.handoff(scope, conversationId, { reason: BROKEN_TURN_REASON }).catch(() => {});
  }

  /** Starts one queued turn (RUNNING), ends it without a model call, or leaves it queued (null) while the conversation has a turn running. */
  private async take(tx: Db, run: Turn): Promise<Turn | null> {
    const conversationId = typeof run.input.conversationId === 'string' ? run.input.conversationId : '';
    const conditions = [eq(conversations.id, conversationId), eq(conversations.orgId, run.orgId)];
    if (run.projectId) conditions.push(eq(conversations.projectId, run.projectId));
    // The conversation's row lock serializes the turns' starts across instances.
    const [found] = conversationId
      ? await tx
          .select({ conversation: conversations, inbox: inboxes, contact: contacts })
          .from(conversations)
          .innerJoin(inboxes, eq(inboxes.id, conversations.inboxId))
          .innerJoin(contacts, eq(contacts.id, conversations.contactId))
          .where(and(...conditions))
          .for('update', { of: conversations })
      : [];
    if (!found) return this.end(tx, run, 'failed', 'No conversation to answer.', `Conversation ${conversationId.slice(0, 64) || '(none)'} not found`);
    if (await this.ports.turns.hasRunning(tx, run.orgId, conversationId, run.id)) return null;
    const { conversation, inbox, contact } = found;
    if (!inbox.bot?.enabled) return this.end(tx, run, 'canceled', "Not answered: the inbox's bot is off.", "The inbox's bot is off");
    if (conversation.status !== 'OPEN') return this.end(tx, run, 'canceled', 'Not answered: the conversation is closed.', 'The conversation is closed');
    if (conversation.handledBy !== 'bot')
      return this.end(tx, run, 'canceled', 'Not answered: a person handles this conversation.', 'A person handles this conversation');
    const fresh = await tx
      .update(messages)
      .set({ attempts: sql`${messages.attempts} + 1` })
      .where(
        and(
          eq(messages.conversationId, conversation.id),
          eq(messages.direction, 'in'),
          eq(messages.attempts, 0),
          eq(messages.autoReply, false),
          eq(messages.private, false),
        ),
      )
      .returning({ id: messages.id, text: messages.text, at: messages.at });
    if (fresh.length === 0) return this.end(tx, run, 'canceled', 'Nothing new to answer.', 'No message waits for an answer');
    fresh.sort((a, b) => a.at.getTime() - b.at.getTime() || a.id.localeCompare(b.id));
    const input = await this.turnInput(tx, conversation, inbox, contact.name, fresh);
    return this.ports.turns.start(tx, run.id, { at: this.deps.clock.now(), input, projectId: run.projectId ?? conversation.projectId });
  }

  /** What the turn's model is told: the new messages, the recent thread, the FAQ, who writes. */
  private async turnInput(tx: Db, conversation: ConversationRow, inbox: InboxRow, contactName: string | null, fresh: { id: string; text: string; at: Date }[]) {
    const recent = await tx
      .select({ direction: messages.direction, sender: messages.sender, text: messages.text, at: messages.at })
      .from(messages)
      .where(and(eq(messages.conversationId, conversation.id), eq(messages.private, false)))
      .orderBy(desc(messages.at), desc(messages.id))
      .limit(TRANSCRIPT);
    return {
      conversationId: conversation.id,
      channel: conversation.channel,
      ...(conversation.subject ? { subject: conversation.subject } : {}),
      contact: { name: contactName },
      messages: fresh.map((m) => ({ id: m.id, text: cut(m.text), at: m.at.toISOString() })),
      transcript: recent.reverse().map((m) => ({ from: m.direction === 'in' ? 'contact' : m.sender, text: cut(m.text), at: m.at.toISOString() })),
      faq: faqFor(
        inbox.config.faq,
        fresh.map((m) => m.text),
      ),
    };
  }

  /** Ends a queued turn without a model call (its record, `agent.run.finished`); `done` is published after the commit. */
  private end(tx: Db, run: Turn, status: 'failed' | 'canceled', summary: string, error: string): Promise<Turn | null> {
    return this.ports.turns.end(tx, run.id, { at: this.deps.clock.now(), status, summary, error });
  }
}

/** The inbox's FAQ for a turn: whole when small, else the entries closest to the new messages. */
export function faqFor(value: unknown, texts: string[]): FaqEntry[] {
  const faq = (Array.isArray(value) ? value : [])
    .filter((e): e is FaqEntry => Boolean(e) && typeof e.question === 'string' && typeof e.answer === 'string')
    .map((e) => ({ question: e.question, answer: e.answer }));
  if (JSON.stringify(faq).length <= FAQ_INLINE_CHARS) return faq;
  return faq
    .map((entry, i) => ({ entry, i, score: Math.max(0, ...texts.map((t) => faqScore(t, entry.question))) }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, FAQ_TOP)
    .map((x) => x.entry);
}
