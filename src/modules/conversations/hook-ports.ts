import type { InboundInput, Receipt } from './channel-types.ts';
import type { publicMessage } from './payloads.ts';
import type { inboxes } from './tables.ts';

type InboxRow = typeof inboxes.$inferSelect;
type Who = { name?: string; email?: string; phone?: string };

/**
 * What the public inbound routes (the providers' hooks, the web widget) use of ConversationsService.
 * Written out rather than the class: the channel files that declare these routes are imported by
 * the service (through the channel adapters), and a type import back would close a cycle.
 */
export interface InboundRoutesService {
  /** Requests per inbox and minute on a provider's hook. */
  readonly providerRateMax: number;
  inboxById(id: string): Promise<InboxRow | undefined>;
  credentialsOf(row: Pick<InboxRow, 'credentialsSealed'>): Record<string, string> | null;
  inboundSecretMatches(row: Pick<InboxRow, 'secretHash'>, presented: string | undefined | null): boolean;
  identifyContact(inbox: InboxRow, contactId: string, who: Who): Promise<string | null>;
  identifyAddress(inbox: InboxRow, address: string, who: Who): Promise<string | null>;
  receiveInbound(inbox: InboxRow, input: InboundInput): Promise<{ message: ReturnType<typeof publicMessage>; duplicate: boolean }>;
  applyReceipt(inbox: Pick<InboxRow, 'id' | 'orgId' | 'channel'>, externalId: string, status: Receipt, error?: string): Promise<boolean>;
}
