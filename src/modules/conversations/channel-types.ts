import { badRequest } from '../../platform/errors.ts';

/**
 * What a channel and the service say to each other: the channels, what a channel is given and
 * answers, and the helpers every channel file uses. The channel files and the registry
 * (channels.ts) import this; it imports none of them.
 */

export const CHANNELS = ['web', 'whatsapp', 'telegram', 'email', 'api'] as const;
export type Channel = (typeof CHANNELS)[number];

/** What a channel needs to know about the service's configuration. */
export interface ChannelEnv {
  allowPrivate: boolean;
  timeoutMs: number;
  whatsappApiBaseUrl: string;
  telegramApiBaseUrl: string;
  smtpUrl: string | undefined;
  publicUrl: string;
}

/** The inbox being created (`previous` null) or changed, as a channel's prepare sees it. */
export interface PrepareContext {
  inboxId: string;
  /** Where the provider posts this inbox's inbound messages. */
  inboundUrl: string;
  /** The credentials the inbox will hold (the new ones on a change that brings them, else the stored ones). */
  credentials: Record<string, string> | null;
  /** True when this change brings new credentials. */
  credentialsChanged: boolean;
}

/** What a new or changed inbox stores: its config, and the secrets it generated (shown once). */
export interface Prepared {
  config: Record<string, unknown>;
  /** Sealed by the service: a secret the service signs with. */
  signingSecret?: string;
  /** Stored as a SHA-256 hash: a secret the service only compares (an inbound token); see ConversationsService.inboundSecretMatches. */
  inboundSecret?: string;
  /** Shown once in the 201 as `secrets`. */
  secrets?: Record<string, string>;
}

/** What a send about to be queued looks like, for a channel's own rules (windows, who may start). */
export interface SendCheck {
  /** An outbound start (the contact has not written on this channel in this thread). */
  starting: boolean;
  /** The contact's last inbound message in the conversation, if any. */
  lastInboundAt: Date | null;
  /** A template message rather than free text. */
  template: boolean;
  now: Date;
}

/** One outbound message to deliver, with what the channel needs to address it. */
export interface Outgoing {
  orgId: string;
  projectId: string;
  inbox: { id: string; name?: string; config: Record<string, unknown>; signingSecret: string | null; credentials: Record<string, string> | null };
  message: Record<string, unknown> & { id: string; text: string; at: Date | string; template?: Record<string, unknown> };
  conversation: {
    id: string;
    subject: string | null;
    contact: { id: string; name: string | null; address: string };
    /** E-mail: the Message-IDs of the thread's earlier messages (received and sent), oldest first. */
    references?: string[];
  };
  /** Outreach (sender `campaign`): the recipient's one-click unsubscribe URL, which e-mail carries in List-Unsubscribe (RFC 8058). */
  unsubscribeUrl?: string;
}

/**
 * The channel's answer: accepted with the provider's message id, or refused. `retry`: worth trying
 * again (5xx, 429, the network); `retryAfterS`: what the provider asked for.
 */
export type Outcome = { ok: true; externalId: string } | { ok: false; retry: boolean; retryAfterS?: number; error: string };

/**
 * A channel: checks an inbox's config (and makes its secrets), and sends. Its inbound side is a
 * route (an API-key route for `api`, platform/inbound.ts routes for the providers' webhooks).
 */
export interface ChannelAdapter {
  readonly channel: Channel;
  prepare(config: Record<string, unknown>, previous: Record<string, unknown> | null, context: PrepareContext): Promise<Prepared>;
  send(out: Outgoing): Promise<Outcome>;
  /** Refuses (throws a 422) a send the channel cannot make; none: every send is allowed. */
  checkSend?(check: SendCheck): void;
  /**
   * Tells the provider the inbox's account is no longer served here (Telegram: deleteWebhook), with
   * the credentials it held: on delete, or on a change of credentials (`replacement`: the new ones).
   * Best effort: a failure never keeps an inbox alive.
   */
  retire?(credentials: Record<string, string> | null, replacement?: Record<string, string>): Promise<void>;
  /** Lets go of what the channel holds open (a pool of connections to the relay), at shutdown. */
  close?(): Promise<void>;
}

/**
 * Refuses (400) a key of an inbox's `config` or `credentials` that the channel does not know: a typo
 * (`phoneNumber` for `phoneNumberId`) must not be stored and silently ignored.
 */
export function assertKnownKeys(channel: Channel, part: 'config' | 'credentials', given: Record<string, unknown>, known: readonly string[]): void {
  const what = part === 'config' ? 'a setting' : 'a credential';
  for (const key of Object.keys(given)) {
    if (!known.includes(key))
      throw badRequest(`${part}.${key} is not ${what} of the ${channel} channel`, [
        { field: `body.${part}.${key}`, message: `is not ${what} of the ${channel} channel (${known.join(', ')})` },
      ]);
  }
}

/** `Retry-After` as seconds (a number or an HTTP date), bounded to an hour. */
export function retryAfterSeconds(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  let seconds: number;
  if (/^\d+$/.test(trimmed)) seconds = Number(trimmed);
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    seconds = Math.ceil((at - now) / 1000);
  }
  return Math.min(3600, Math.max(0, seconds));
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

/** A provider's delivery receipt for an outbound message (see Inbound.applyReceipt). */
export type Receipt = 'sent' | 'delivered' | 'read' | 'failed';

/** The first e-mail address in a message's text: an anonymous contact who writes one is linked to its lead. */
export const EMAIL_IN_TEXT = /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}/;
