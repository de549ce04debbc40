import type { Deps } from '../../platform/deps.ts';
import type { Database, Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../config.ts';
import { SecretBox } from '../../platform/crypto.ts';
import type { Channel, ChannelAdapter } from './channel-types.ts';
import { channelAdapters } from './channels.ts';
import type { ConversationPorts } from './ports.ts';
import type { contacts, conversations, inboxes, messages } from './tables.ts';

export type InboxRow = typeof inboxes.$inferSelect;
export type ContactRow = typeof contacts.$inferSelect;
export type ConversationRow = typeof conversations.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;

/**
 * What the parts of the conversations module (inboxes, inbound, threads, outbound, stats) share:
 * the store, the clock and configuration, the secret box of the inboxes' credentials, the channels,
 * and the ports to other modules. Made once by ConversationsService.
 */
export interface ConversationsContext {
  readonly db: Db;
  readonly database: Database;
  readonly clock: Clock;
  readonly config: Config;
  readonly box: SecretBox;
  readonly adapters: Partial<Record<Channel, ChannelAdapter>>;
  readonly ports: ConversationPorts;
}

export function conversationsContext(deps: Deps, ports: ConversationPorts): ConversationsContext {
  return {
    db: deps.db,
    database: deps.database,
    clock: deps.clock,
    config: deps.config,
    ports,
    box: new SecretBox(deps.config.appSecret),
    adapters: channelAdapters({
      allowPrivate: deps.config.webhookAllowPrivate,
      timeoutMs: deps.config.webhookTimeoutMs,
      publicUrl: deps.config.publicUrl,
      whatsappApiBaseUrl: deps.config.whatsappApiBaseUrl,
      telegramApiBaseUrl: deps.config.telegramApiBaseUrl,
      smtpUrl: deps.config.smtpUrl,
    }),
  };
}

/** A unique violation, thrown by the driver or wrapped (up to five causes deep). */
export function isUniqueViolation(error: unknown): boolean {
  for (let e = error as { code?: string; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) if (e.code === '23505') return true;
  return false;
}
