import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import type { Scope } from '../../platform/context.ts';
import type { ListQuery } from '../../platform/http/pagination.ts';
import type { Channel, ChannelAdapter, InboundInput, Receipt } from './channel-types.ts';
import { conversationsContext, type InboxRow, type MessageRow } from './context.ts';
import { Inbound } from './inbound.ts';
import { Inboxes, type InboxInput } from './inboxes.ts';
import { Outbound } from './outbound.ts';
import type { ConversationPorts } from './ports.ts';
import { ConversationStats } from './stats.ts';
import { Threads, type ConversationQuery, type MessageTemplate, type OutboundInput } from './threads.ts';

/**
 * Conversations: the one face of the module's parts (inboxes.ts, inbound.ts, threads.ts,
 * outbound.ts, stats.ts), which share one context; routes, channels, the sender loop and other
 * modules call these methods.
 */
export class ConversationsService {
  private readonly inboxes: Inboxes;
  private readonly threads: Threads;
  private readonly inbound: Inbound;
  private readonly outbound: Outbound;
  private readonly figures: ConversationStats;
  readonly adapters: Partial<Record<Channel, ChannelAdapter>>;
  /** PROVIDER_WEBHOOK_RATE_LIMIT_MAX, for the providers' inbound routes. */
  readonly providerRateMax: number;

  constructor(deps: Deps, ports: ConversationPorts) {
    const ctx = conversationsContext(deps, ports);
    this.adapters = ctx.adapters;
    this.providerRateMax = deps.config.providerWebhookRateMax;
    this.inboxes = new Inboxes(ctx);
    this.threads = new Threads(ctx, this.inboxes);
    this.outbound = new Outbound(ctx, { inboxes: this.inboxes, threads: this.threads });
    this.inbound = new Inbound(ctx, { inboxes: this.inboxes, threads: this.threads, outbound: this.outbound });
    this.figures = new ConversationStats(ctx);
  }

  // ---------------------------------------------------------------- inboxes (inboxes.ts)

  closeChannels(): Promise<void> {
    return this.inboxes.closeChannels();
  }
  inboundUrl(row: Pick<InboxRow, 'id' | 'orgId' | 'channel'>): string {
    return this.inboxes.inboundUrl(row);
  }
  publicInbox(row: InboxRow) {
    return this.inboxes.publicInbox(row);
  }
  wrongChannel(channel: string) {
    return this.inboxes.wrongChannel(channel);
  }
  signingSecretOf(row: Pick<InboxRow, 'secretSealed'>): string | null {
    return this.inboxes.signingSecretOf(row);
  }
  credentialsOf(row: Pick<InboxRow, 'credentialsSealed'>): Record<string, string> | null {
    return this.inboxes.credentialsOf(row);
  }
  inboundSecretMatches(row: Pick<InboxRow, 'secretHash'>, presented: string | undefined | null): boolean {
    return this.inboxes.inboundSecretMatches(row, presented);
  }
  inboxById(id: string): Promise<InboxRow | undefined> {
    return this.inboxes.inboxById(id);
  }
  inboxRow(scope: Scope, id: string): Promise<InboxRow> {
    return this.inboxes.inboxRow(scope, id);
  }
  inboundInbox(scope: Scope, id: string): Promise<InboxRow> {
    return this.inboxes.inboundInbox(scope, id);
  }
  createInbox(scope: Scope, input: InboxInput) {
    return this.inboxes.createInbox(scope, input);
  }
  listInboxes(scope: Scope, query: ListQuery & { channel?: string }) {
    return this.inboxes.listInboxes(scope, query);
  }
  updateInbox(scope: Scope, id: string, patch: Partial<Pick<InboxInput, 'name' | 'config' | 'credentials' | 'bot'>>) {
    return this.inboxes.updateInbox(scope, id, patch);
  }
  deleteInbox(scope: Scope, id: string): Promise<void> {
    return this.inboxes.deleteInbox(scope, id);
  }

  // ---------------------------------------------------------------- inbound (inbound.ts)

  identifyContact(inbox: InboxRow, contactId: string, who: { name?: string; email?: string; phone?: string }): Promise<string | null> {
    return this.inbound.identifyContact(inbox, contactId, who);
  }
  identifyAddress(inbox: InboxRow, address: string, who: { name?: string; email?: string; phone?: string }): Promise<string | null> {
    return this.inbound.identifyAddress(inbox, address, who);
  }
  receiveInbound(inbox: InboxRow, input: InboundInput) {
    return this.inbound.receiveInbound(inbox, input);
  }
  applyReceipt(inbox: Pick<InboxRow, 'id' | 'orgId' | 'channel'>, externalId: string, status: Receipt, error?: string): Promise<boolean> {
    return this.inbound.applyReceipt(inbox, externalId, status, error);
  }

  // ---------------------------------------------------------------- conversations (threads.ts)

  get(scope: Scope, id: string) {
    return this.threads.get(scope, id);
  }
  list(scope: Scope, query: ConversationQuery) {
    return this.threads.list(scope, query);
  }
  listMessages(scope: Scope, id: string, query: ListQuery) {
    return this.threads.listMessages(scope, id, query);
  }
  reply(scope: Scope, id: string, input: OutboundInput & { private?: boolean }) {
    return this.threads.reply(scope, id, input);
  }
  botReply(scope: Scope, id: string, text: string) {
    return this.threads.botReply(scope, id, text);
  }
  start(scope: Scope, input: OutboundInput & { inboxId: string; leadId: string; subject?: string }) {
    return this.threads.start(scope, input);
  }
  handoff(scope: Scope, id: string, input: { reason: string; assigneeId?: string }) {
    return this.threads.handoff(scope, id, input);
  }
  assign(scope: Scope, id: string, assigneeId: string | null) {
    return this.threads.assign(scope, id, assigneeId);
  }
  read(scope: Scope, id: string) {
    return this.threads.read(scope, id);
  }
  close(scope: Scope, id: string) {
    return this.threads.close(scope, id);
  }
  reopen(scope: Scope, id: string) {
    return this.threads.reopen(scope, id);
  }
  announce(tx: Db, row: MessageRow, channel: string): Promise<void> {
    return this.threads.announce(tx, row, channel);
  }

  // ---------------------------------------------------------------- outreach (outbound.ts)

  sendFromWorkflow(
    scope: Scope,
    input: OutboundInput & { inboxId: string; to?: string; leadId?: string; messageId: string; workflowId: string; dryRun?: boolean },
  ) {
    return this.outbound.sendFromWorkflow(scope, input);
  }
  queueOutreach(
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
    return this.outbound.queueOutreach(tx, inbox, input, now);
  }
  queueOutreachMany(
    tx: Db,
    inbox: InboxRow,
    items: { address: string; name: string | null; leadId: string | null; subject: string | null; text: string; authorId: string; messageId: string }[],
    now: Date,
  ): Promise<void> {
    return this.outbound.queueOutreachMany(tx, inbox, items, now);
  }
  hasSendRules(channel: string): boolean {
    return this.outbound.hasSendRules(channel);
  }
  /** Who follows automated outbound messages' status changes (campaigns, wired in services.ts). */
  watchOutbound(fn: (tx: Db, rows: MessageRow[]) => Promise<void>): void {
    this.outbound.watchOutbound(fn);
  }
  outboundChanged(tx: Db, changed: MessageRow[]): Promise<void> {
    return this.outbound.outboundChanged(tx, changed);
  }

  // ---------------------------------------------------------------- figures (stats.ts)

  stats(scope: Scope, query: { from?: string; to?: string; inboxId?: string }) {
    return this.figures.stats(scope, query);
  }
}
