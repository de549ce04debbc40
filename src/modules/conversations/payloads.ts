import type { NewEvent } from '../events/index.ts';
import type { OrgMessage } from '../events/index.ts';
import type { Lead } from '../leads/index.ts';
import type { contacts, conversations, messages } from './tables.ts';

type ContactRow = typeof contacts.$inferSelect;
type ConversationRow = typeof conversations.$inferSelect;
type MessageRow = typeof messages.$inferSelect;
type ContactView = Pick<ContactRow, 'id' | 'name' | 'address'>;

/**
 * What the conversations module tells the world — its platform events' payloads and the
 * organization stream's `conversation.message` — built here and nowhere else, whichever path opened
 * the thread or stored the message (an inbound message by the fast statement or the locked way, a
 * person's outbound start, a workflow's or a campaign's outreach one by one or in a batch, the
 * sender loop). CONTRACT §8: SPEC's fields at the top level, under SPEC's names; the whole message
 * and conversation objects beside them for consumers that want more.
 */

export function publicMessage(row: MessageRow) {
  const out: Record<string, unknown> = {
    id: row.id,
    conversationId: row.conversationId,
    direction: row.direction,
    sender: row.sender,
    text: row.text,
    private: row.private,
    status: row.status,
    at: row.at,
  };
  if (row.mediaUrl) out.mediaUrl = row.mediaUrl;
  if (row.externalId) out.externalId = row.externalId;
  if (row.error) out.error = row.error;
  return out as {
    id: string;
    conversationId: string;
    direction: string;
    sender: string;
    text: string;
    private: boolean;
    status: string;
    at: Date;
    externalId?: string;
    error?: string;
    mediaUrl?: string;
  };
}

export function publicConversation(row: ConversationRow, contact: ContactView, unreadCount = 0) {
  const out: Record<string, unknown> = {
    id: row.id,
    inboxId: row.inboxId,
    channel: row.channel,
    contact: { id: contact.id, name: contact.name, address: contact.address },
    status: row.status,
    handledBy: row.handledBy,
    unreadCount,
    lastMessageAt: row.lastMessageAt,
    openedAt: row.openedAt,
  };
  if (row.leadId) out.leadId = row.leadId;
  if (row.assigneeId) out.assigneeId = row.assigneeId;
  if (row.handoffReason) out.handoffReason = row.handoffReason;
  if (row.subject) out.subject = row.subject;
  if (row.closedAt) out.closedAt = row.closedAt;
  if (row.resolvedBy) out.resolvedBy = row.resolvedBy;
  return out;
}

const about = (row: { orgId: string; projectId: string }) => ({ orgId: row.orgId, projectId: row.projectId });

/** `conversation.opened`: `conversationId, channel, contactId, leadId?` (SPEC), with the conversation. */
export function conversationOpened(conversation: ConversationRow, contact: ContactView): NewEvent {
  return {
    ...about(conversation),
    type: 'conversation.opened',
    payload: {
      conversationId: conversation.id,
      channel: conversation.channel,
      contactId: contact.id,
      ...(conversation.leadId ? { leadId: conversation.leadId } : {}),
      inboxId: conversation.inboxId,
      conversation: publicConversation(conversation, contact),
    },
  };
}

/**
 * `message.received`: `conversationId, channel, contactId, contactName, text, mediaUrl?, leadId?`
 * (SPEC), with the message and the conversation as written with it. `leadId` is the contact's lead.
 */
export function messageReceived(message: MessageRow, conversation: ConversationRow, contact: ContactView & Pick<ContactRow, 'leadId'>): NewEvent {
  return {
    ...about(message),
    type: 'message.received',
    payload: {
      conversationId: conversation.id,
      channel: conversation.channel,
      contactId: contact.id,
      contactName: contact.name ?? null,
      text: message.text,
      ...(message.mediaUrl ? { mediaUrl: message.mediaUrl } : {}),
      ...(contact.leadId ? { leadId: contact.leadId } : {}),
      messageId: message.id,
      inboxId: message.inboxId,
      message: publicMessage(message),
      conversation: publicConversation(conversation, contact),
    },
  };
}

/**
 * `lead.replied`: `lead, conversationId, channel, text` (SPEC; `lead` as in `lead.created`), with
 * `leadId` (the lead's history reads events by it) and the reply's `messageId`.
 */
export function leadReplied(lead: Lead, message: MessageRow, channel: string): NewEvent {
  return {
    ...about(message),
    type: 'lead.replied',
    payload: { lead, conversationId: message.conversationId, channel, text: message.text, leadId: lead.id, messageId: message.id },
  };
}

/**
 * `message.sent`, once the provider accepted the message: `conversationId, channel, to, text, sender,
 * messageId` (SPEC), with the lead it reached (outreach detection reads `message.sent` by `leadId`)
 * and the message.
 */
export function messageSent(message: MessageRow, sent: { channel: string; to: string; leadId: string | null }): NewEvent {
  return {
    ...about(message),
    type: 'message.sent',
    payload: {
      conversationId: message.conversationId,
      channel: sent.channel,
      to: sent.to,
      text: message.text,
      sender: message.sender,
      messageId: message.id,
      ...(sent.leadId ? { leadId: sent.leadId } : {}),
      message: publicMessage(message),
    },
  };
}

/**
 * The organization stream's `conversation.message`: SPEC's conversation message `{ conversationId,
 * channel, message: { id, direction, sender, text, at } }` (the message carries all of its public
 * fields), the project for the stream's project filter, and the conversation when the caller has it
 * as written (a message that may have opened it: the widget stream learns its visitor's threads so).
 */
export function streamMessage(message: MessageRow, channel: string, conversation?: { row: ConversationRow; contact: ContactView }): OrgMessage {
  const data = {
    conversationId: message.conversationId,
    channel,
    message: publicMessage(message),
    projectId: message.projectId,
    ...(conversation ? { conversation: { ...publicConversation(conversation.row, conversation.contact), projectId: message.projectId } } : {}),
  };
  // Dates as the stream's JSON has them, whether the message stays in this process or crosses a NOTIFY.
  return { kind: 'conversation.message', data: JSON.parse(JSON.stringify(data)) };
}
