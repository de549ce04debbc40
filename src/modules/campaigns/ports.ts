import type { Db } from '../../platform/db.ts';
import type { Scope } from '../../platform/context.ts';
import type { NewEvent } from '../events/index.ts';
import type { NewNotification } from '../notifications/index.ts';
import type { MonthlyLimit } from '../../shared/plans.ts';
import type { InboxRow } from '../conversations/index.ts';
import type { UnsubscribeLinks } from './unsubscribe.ts';

/**
 * What the campaigns module uses of other modules, as interfaces: services.ts hands in the real
 * ones. The conversations module's outbound status changes come the other way, through
 * CampaignsService.onOutbound, which services.ts subscribes to them.
 */

export type { InboxRow };

export interface EventsPort {
  record(tx: Db, list: NewEvent | NewEvent[]): Promise<unknown>;
  /** The dispatcher of this instance looks at the outbox now. */
  wakeLocal(): void;
}

export interface NotifyPort {
  notify(input: NewNotification, tx?: Db): Promise<unknown>;
}

export interface OrgsPort {
  projectFor(scope: { orgId: string; projectId: string | null }, requested: string | null | undefined): Promise<string | null>;
}

/** The plan's campaignMessagesPerMonth limit (CONTRACT §12). */
export interface PlansPort {
  room(tx: Db, orgId: string, limit: MonthlyLimit): Promise<number | null>;
  add(tx: Db, orgId: string, limit: MonthlyLimit, n: number): Promise<void>;
}

/** One outreach message as campaigns queue it. */
export interface Outreach {
  address: string;
  name: string | null;
  leadId: string | null;
  subject: string | null;
  text: string;
  authorId: string;
  messageId: string;
}

/** The conversations module's inboxes and outreach queue, through which a campaign's steps go out. */
export interface ConversationsPort {
  inboxRow(scope: Scope, id: string): Promise<InboxRow>;
  inboxById(id: string): Promise<InboxRow | undefined>;
  /** One message in the caller's transaction, under the channel's rules (their 422 thrown). */
  queueOutreach(
    tx: Db,
    inbox: InboxRow,
    input: Outreach & { template: { name: string; language: string; components?: unknown[] } | null },
    now: Date,
  ): Promise<unknown>;
  /** Many, in a few statements, through a channel without send rules. */
  queueOutreachMany(tx: Db, inbox: InboxRow, items: Outreach[], now: Date): Promise<void>;
  hasSendRules(channel: string): boolean;
}

export interface CampaignPorts {
  events: EventsPort;
  notifications: NotifyPort;
  orgs: OrgsPort;
  conversations: ConversationsPort;
  /** The unsubscribe links, shared with the conversations sender. */
  links: UnsubscribeLinks;
  plans?: PlansPort;
}

/** An outbound message whose status changed (sent, delivered, read, failed), as campaigns follow it. */
export interface OutboundStatus {
  id: string;
  status: string;
  error: string | null;
}
