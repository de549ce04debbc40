import type { Schemas } from '../../api/client';

export type Campaign = Schemas['Campaign'];
export type Recipient = Schemas['CampaignRecipient'];
export type Suppression = Schemas['Suppression'];
export type CampaignStatus = Campaign['status'];

/** CONTRACT §9's statuses, channels and reasons, as the API names them. */
export const CAMPAIGN_STATUSES = ['DRAFT', 'SCHEDULED', 'RUNNING', 'PAUSED', 'FINISHED', 'CANCELED'] as const satisfies readonly CampaignStatus[];
export const RECIPIENT_STATUSES = [
  'PENDING',
  'ACTIVE',
  'COMPLETED',
  'REPLIED',
  'SKIPPED',
  'FAILED',
  'STOPPED',
] as const satisfies readonly Recipient['status'][];
export const CAMPAIGN_CHANNELS = ['email', 'whatsapp', 'telegram'] as const;
export const SUPPRESSION_REASONS = ['manual', 'unsubscribed', 'hard_bounce', 'complaint', 'stop_keyword'] as const satisfies readonly Suppression['reason'][];

/** Only these statuses accept a PATCH (else 409). */
export const EDITABLE: readonly CampaignStatus[] = ['DRAFT', 'SCHEDULED', 'PAUSED'];

export const statusLabel = (status: string) => status.charAt(0) + status.slice(1).toLowerCase();

export const SKIP_REASONS: Record<string, string> = {
  SUPPRESSED: 'Suppressed or opted out',
  NO_ADDRESS: 'No address on the channel',
  DUPLICATE_ADDRESS: 'Same address as another lead',
  NO_OPT_IN: 'No opt-in (WhatsApp)',
  IN_OTHER_CAMPAIGN: 'In another running campaign',
};

export const REASON_LABELS: Record<string, string> = {
  manual: 'Manual',
  unsubscribed: 'Unsubscribed',
  hard_bounce: 'Hard bounce',
  complaint: 'Complaint',
  stop_keyword: 'STOP keyword',
};
