import type { Db } from '../../platform/db.ts';
import type { Role, Scope } from '../../platform/context.ts';
import type { NewEvent } from '../events/index.ts';
import type { OrgMessage } from '../events/index.ts';
import type { Lead, LeadInput } from '../leads/index.ts';
import type { NewNotification } from '../notifications/index.ts';
import type { CountLimit } from '../../shared/plans.ts';
import type { Channel, ChannelAdapter } from './channel-types.ts';
import type { inboxes, messages } from './tables.ts';
import type { NewTurn } from '../agents/index.ts';

/**
 * What the conversations module uses of other modules, as interfaces: services.ts hands in the
 * real ones (the events module's recorder and organization stream, leads, notifications, orgs,
 * plans, campaigns' unsubscribe links, the agents module's conversation turns).
 */

/** The events module's recorder: events written in the caller's transaction (the outbox). */
export interface EventsPort {
  record(tx: Db, list: NewEvent | NewEvent[]): Promise<unknown>;
  /** The dispatcher of this instance looks at the outbox now (after a write it did not wake). */
  wakeLocal(): void;
}

/** The organization stream (`conversation.message` to the panel), at commit or, for RECEIVE_FAST, by hand. */
export interface OrgStreamPort {
  publishInTx(tx: Db, orgId: string, message: OrgMessage): Promise<void>;
  publishManyInTx(tx: Db, orgId: string, messages: OrgMessage[]): Promise<void>;
  /** The NOTIFY for the other instances as parameters of a statement of fixed text; false when they cannot go in one. */
  notifyOthersParams(orgId: string, messages: OrgMessage[]): { channel: string; payload: string } | null | false;
  emitLocal(orgId: string, messages: OrgMessage[]): void;
}

/** The leads a contact stands for: matched or created (inbound), read (outbound, `lead.replied`). */
export interface LeadsPort {
  findOrCreate(scope: Scope, input: LeadInput): Promise<{ lead: Lead; created: boolean }>;
  get(scope: Scope, id: string): Promise<Lead>;
  find(db: Db, orgId: string, id: string): Promise<Lead | null>;
}

/** A notification to the organization (a hand-off), in the caller's transaction. */
export interface NotifyPort {
  notify(input: NewNotification, tx?: Db): Promise<unknown>;
}

export interface OrgsPort {
  projectFor(scope: { orgId: string; projectId: string | null }, requested: string | null | undefined): Promise<string | null>;
  defaultProjectId(orgId: string): Promise<string>;
  roleOf(orgId: string, userId: string): Promise<Role | null>;
}

/** The plan's inboxes limit (CONTRACT §12). */
export interface PlansPort {
  readonly enabled: boolean;
  assertRoom(tx: Db, orgId: string, limit: CountLimit, adding?: number): Promise<void>;
}

/** The one-click unsubscribe link of an address (the campaigns module's), which outreach e-mail carries (RFC 8058). */
export interface UnsubscribePort {
  url(orgId: string, channel: string, address: string): string;
}

/** The bus: the sender loop and the bot are woken at commit. */
export interface BusPort {
  publishInTx(tx: Db, channel: string, message: unknown): Promise<void>;
}

export interface ConversationPorts {
  bus: BusPort;
  orgStream: OrgStreamPort;
  events: EventsPort;
  leads: LeadsPort;
  notifications: NotifyPort;
  orgs: OrgsPort;
  plans?: PlansPort;
}

/** An agent run that is a conversation turn, as the bot reads it. */
export interface Turn {
  readonly id: string;
  readonly orgId: string;
  readonly projectId: string | null;
  readonly status: string;
  readonly input: Record<string, unknown>;
}

/** A saved agent an inbox's bot names (`bot.agentId`). */
export interface SavedAgent {
  id: string;
  modelId: string | null;
  instructions: string | null;
  maxSteps: number | null;
  budgetUsd: number | null;
}

/**
 * The bot's turns, which are agent runs (the agents module's table and runner): queued and taken in
 * the bot's own transactions, executed by the agents' runner on this instance.
 */
export interface AgentTurnsPort {
  /** Turns and runs this instance is executing now. */
  readonly activeCount: number;
  savedAgent(tx: Db, orgId: string, id: string): Promise<SavedAgent | undefined>;
  hasQueued(tx: Db, orgId: string, conversationId: string): Promise<boolean>;
  hasRunning(tx: Db, orgId: string, conversationId: string, exceptId: string): Promise<boolean>;
  queue(tx: Db, turn: NewTurn): Promise<void>;
  /** Queued turns, oldest first, locked for this transaction (SKIP LOCKED). */
  queued(tx: Db, limit: number): Promise<Turn[]>;
  /** A queued turn starts: RUNNING, held by this instance's runner, with its model's input. */
  start(tx: Db, id: string, set: { at: Date; input: Record<string, unknown>; projectId: string | null }): Promise<Turn>;
  /** A queued turn ends without a model call, with its `agent.run.finished`; null when it was no longer queued. */
  end(tx: Db, id: string, end: { at: Date; status: 'failed' | 'canceled'; summary: string; error: string }): Promise<Turn | null>;
  /** After the commit of an end: the run's watchers hear it is done. */
  published(turn: Turn): Promise<void>;
  /** Executes a started turn here to its end. */
  run(turn: Turn): Promise<Turn>;
}

/** The module's conversations (ConversationsService), as the bot uses them: a conversation goes to people. */
export interface HandoffPort {
  handoff(scope: Scope, id: string, input: { reason: string; assigneeId?: string }): Promise<unknown>;
}

/** ConversationBot: the bus, the turns (the agents module's runs), the hand-off of a conversation the bot cannot answer. */
export interface BotPorts {
  bus: BusPort;
  /** The turns, which are the agents module's runs. */
  turns: AgentTurnsPort;
  conversations: HandoffPort;
}

type InboxRow = typeof inboxes.$inferSelect;
type MessageRow = typeof messages.$inferSelect;

/** The module's conversations (ConversationsService), as the sender uses them: the channels, an inbox's secrets, a sent message announced. */
export interface SendingPort {
  readonly adapters: Partial<Record<Channel, ChannelAdapter>>;
  signingSecretOf(row: Pick<InboxRow, 'secretSealed'>): string | null;
  credentialsOf(row: Pick<InboxRow, 'credentialsSealed'>): Record<string, string> | null;
  /** Tells the organization stream (at commit) that a message of a conversation on `channel` was written or changed. */
  announce(tx: Db, row: MessageRow, channel: string): Promise<void>;
  /** Status changes of outbound messages (sent, delivered, read, failed), in their transaction. */
  outboundChanged(tx: Db, changed: MessageRow[]): Promise<void>;
}

/** OutboundSender: the module's conversations, the events recorder, the unsubscribe links outreach e-mail carries. */
export interface SenderPorts {
  conversations: SendingPort;
  events: EventsPort;
  unsubscribe: UnsubscribePort;
}

export type { Db };
