import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { createdAt, ts, updatedAt } from '../../platform/columns.ts';

export interface CampaignStep {
  delaySeconds: number;
  subject?: string;
  text: string;
  template?: { name: string; language: string; components?: unknown[] };
}
export interface CampaignWindow {
  days: number[];
  from: string;
  to: string;
  timezone: string;
}
export interface CampaignSettings {
  stopOnReply: boolean;
  perMinute: number;
  dailyLimit: number;
  maxErrors: number;
  window?: CampaignWindow;
}
export type CampaignAudience = { leadIds: string[] } | { status?: string; tags?: string[]; minScore?: number; projectId?: string };

/** An outreach sequence sent through one inbox (CONTRACT §9). */
export const campaigns = pgTable(
  'campaigns',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id').notNull(),
    name: text('name').notNull(),
    inboxId: text('inbox_id').notNull(),
    channel: text('channel').notNull(),
    audience: jsonb('audience').$type<CampaignAudience>().notNull(),
    steps: jsonb('steps').$type<CampaignStep[]>().notNull(),
    settings: jsonb('settings').$type<CampaignSettings>().notNull(),
    status: text('status').notNull(),
    scheduledAt: ts('scheduled_at'),
    testMode: boolean('test_mode').notNull().default(false),
    /** Fixed when the audience is resolved (the first start). */
    total: integer('total').notNull().default(0),
    /** Send failures in a row; maxErrors of them pause the campaign. */
    errorsInRow: integer('errors_in_row').notNull().default(0),
    pausedReason: text('paused_reason'),
    /** The daily limit's count: sends on `day` (YYYY-MM-DD in the window's time zone, else UTC). */
    day: text('day'),
    daySent: integer('day_sent').notNull().default(0),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('campaigns_org_idx').on(t.orgId, t.createdAt),
    // The runner's work: campaigns running, and scheduled ones coming due.
    index('campaigns_active_idx')
      .on(t.status, t.scheduledAt)
      .where(sql`status in ('RUNNING', 'SCHEDULED')`),
  ],
);

/**
 * One lead of a campaign's audience. `step` is the index of the next step to send; a recipient is
 * claimed by the runner only while `status` is PENDING or ACTIVE and `next_send_at` has come.
 * `awaiting` names the message of the last step sent, whose outcome decides COMPLETED or FAILED.
 */
export const campaignRecipients = pgTable(
  'campaign_recipients',
  {
    id: text('id').primaryKey(),
    campaignId: text('campaign_id')
      .notNull()
      .references(() => campaigns.id, { onDelete: 'cascade' }),
    orgId: text('org_id').notNull(),
    leadId: text('lead_id').notNull(),
    address: text('address'),
    status: text('status').notNull(),
    skipReason: text('skip_reason'),
    step: integer('step').notNull().default(0),
    nextSendAt: ts('next_send_at'),
    awaiting: text('awaiting'),
    sentAt: ts('sent_at'),
    deliveredAt: ts('delivered_at'),
    readAt: ts('read_at'),
    repliedAt: ts('replied_at'),
    failedAt: ts('failed_at'),
    error: text('error'),
  },
  (t) => [
    uniqueIndex('campaign_recipients_lead_idx').on(t.campaignId, t.leadId),
    index('campaign_recipients_status_idx').on(t.campaignId, t.status, t.id),
    // In the runner's claim order (next_send_at, id), so a claim reads its batch off the index
    // instead of sorting every due recipient of a large audience.
    index('campaign_recipients_due_idx')
      .on(t.campaignId, t.nextSendAt, t.id)
      .where(sql`status in ('PENDING', 'ACTIVE') and awaiting is null`),
    // The steps of a campaign queued and not yet out (the runner keeps at most IN_FLIGHT of them).
    index('campaign_recipients_awaiting_idx')
      .on(t.campaignId)
      .where(sql`awaiting is not null`),
    // A lead's place in running campaigns (replies, IN_OTHER_CAMPAIGN).
    index('campaign_recipients_of_lead_idx')
      .on(t.leadId)
      .where(sql`status in ('PENDING', 'ACTIVE')`),
  ],
);

/**
 * The ledger of what was sent: one row per (recipient, step), written in the transaction that queues
 * the message — its primary key is what makes a step go out once per recipient, whatever crashed or
 * ran twice. In test mode the rendered message is recorded here and nothing is queued.
 */
export const campaignSends = pgTable(
  'campaign_sends',
  {
    recipientId: text('recipient_id')
      .notNull()
      .references(() => campaignRecipients.id, { onDelete: 'cascade' }),
    step: integer('step').notNull(),
    campaignId: text('campaign_id').notNull(),
    messageId: text('message_id'),
    subject: text('subject'),
    text: text('text').notNull(),
    at: ts('at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.recipientId, t.step] }), index('campaign_sends_message_idx').on(t.messageId)],
);

/**
 * The per-minute limit's count: sends per campaign and second (Unix time), written with the sends
 * under the campaign's row lock; the last 60 rows are the last minute, older ones are removed as
 * the campaign goes on. A few rows per campaign, however large its audience.
 */
export const campaignRate = pgTable(
  'campaign_rate',
  {
    campaignId: text('campaign_id')
      .notNull()
      .references(() => campaigns.id, { onDelete: 'cascade' }),
    second: bigint('second', { mode: 'number' }).notNull(),
    sent: integer('sent').notNull(),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.second] })],
);

/** An address that must not receive outreach on a channel (CONTRACT §9 reasons). */
export const suppressions = pgTable(
  'suppressions',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    channel: text('channel').notNull(),
    address: text('address').notNull(),
    reason: text('reason').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('suppressions_address_idx').on(t.orgId, t.channel, t.address)],
);

/** A lead's recorded opt-in or opt-out per channel; the latest one holds. */
export const leadConsents = pgTable(
  'lead_consents',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    leadId: text('lead_id').notNull(),
    channel: text('channel').notNull(),
    status: text('status').notNull(),
    source: text('source'),
    text: text('text'),
    createdAt: createdAt(),
  },
  (t) => [index('lead_consents_lead_idx').on(t.leadId, t.channel, t.createdAt)],
);

export type CampaignRow = typeof campaigns.$inferSelect;
export type RecipientRow = typeof campaignRecipients.$inferSelect;
