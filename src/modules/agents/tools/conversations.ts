import { Type } from 'typebox';
import { AppError } from '../../../platform/errors.ts';
import { LEAD_STATUSES, type LeadStatus } from '../../../shared/leads.ts';
import { compactLead } from './leads.ts';
import type { ToolContext, ToolDef } from './types.ts';

/**
 * The conversations bot's tools. Each acts on the one conversation the turn answers (the run's
 * `input.conversationId`) through the conversations service with the run's scope, so a turn reaches
 * nothing outside its organization and project, and never another conversation.
 */

const available = (ports: { conversations?: unknown }) => Boolean(ports.conversations);

function conversationOf(ctx: ToolContext): string | null {
  const id = ctx.input.conversationId;
  return typeof id === 'string' && id.length > 0 && id.length <= 64 ? id : null;
}

/** A refusal the model can read (404, 409, a channel's 422) instead of a failed run. */
async function guarded(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AppError) return { error: error.message, code: error.code };
    throw error;
  }
}

const NO_CONVERSATION = { error: 'This run answers no conversation (input.conversationId)' };

type ConversationsPort = NonNullable<ToolContext['conversations']>;

/** Runs a tool's work on the turn's own conversation (guarded), or says the run answers none. */
function onTheConversation(ctx: ToolContext, fn: (port: ConversationsPort, id: string) => Promise<unknown>): Promise<unknown> {
  const id = conversationOf(ctx);
  const port = ctx.conversations;
  if (!id || !port) return Promise.resolve(NO_CONVERSATION);
  return guarded(() => fn(port, id));
}

export const botReply: ToolDef = {
  name: 'reply',
  description: 'Send your answer to the contact in this conversation (sender: bot). Dropped, not sent, when a person has taken the conversation over.',
  input: Type.Object({ text: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
  available,
  async execute(ctx, input) {
    return onTheConversation(ctx, async (port, id) => {
      const out = await port.botReply(ctx.leadScope, id, String(input.text));
      return 'dropped' in out ? { dropped: true, reason: out.dropped } : { sent: true, messageId: out.message.id, status: out.message.status };
    });
  },
};

export const botHandoff: ToolDef = {
  name: 'handoff',
  description:
    'Hand this conversation over to people (the team is notified), with a short reason such as "contact asked for a person" or "no answer in the FAQ". Do not reply after it.',
  input: Type.Object({ reason: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
  available,
  async execute(ctx, input) {
    return onTheConversation(ctx, async (port, id) => {
      const c = (await port.handoff(ctx.leadScope, id, { reason: String(input.reason) })) as { handledBy?: string; handoffReason?: string };
      return { handedOff: true, handledBy: c.handledBy, reason: c.handoffReason };
    });
  },
};

export const botClose: ToolDef = {
  name: 'close',
  description: 'Close this conversation as resolved by the bot, when the contact says the matter is settled.',
  input: Type.Object({}, { additionalProperties: false }),
  available,
  async execute(ctx) {
    return onTheConversation(ctx, async (port, id) => {
      const c = (await port.close(ctx.leadScope, id)) as { status?: string; resolvedBy?: string };
      return { closed: c.status === 'CLOSED', resolvedBy: c.resolvedBy };
    });
  },
};

async function leadIdOf(ctx: ToolContext, port: ConversationsPort, id: string): Promise<string | null> {
  const c = (await port.get(ctx.leadScope, id)) as { leadId?: string };
  return c.leadId ?? null;
}

export const lookupLead: ToolDef = {
  name: 'lookupLead',
  description:
    "The lead this conversation's contact is (name, e-mail, phone, company, status, tags, custom fields), or null when the contact is not a lead yet.",
  input: Type.Object({}, { additionalProperties: false }),
  available,
  async execute(ctx) {
    return onTheConversation(ctx, async (port, id) => {
      const leadId = await leadIdOf(ctx, port, id);
      return { lead: leadId ? compactLead(await ctx.leads.get(ctx.leadScope, leadId)) : null };
    });
  },
};

export const updateConversationLead: ToolDef = {
  name: 'updateLead',
  description:
    "Record what the contact told about themselves on this conversation's lead: name, email, phone, company, website, tags (replaces the list), custom fields (merged), status.",
  input: Type.Object(
    {
      name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      email: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
      phone: Type.Optional(Type.String({ minLength: 3, maxLength: 40 })),
      company: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      website: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
      tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })),
      custom: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), { maxProperties: 50 })),
      status: Type.Optional(Type.Union(LEAD_STATUSES.map((s) => Type.Literal(s)))),
    },
    { additionalProperties: false },
  ),
  available,
  async execute(ctx, input) {
    return onTheConversation(ctx, async (port, id) => {
      const leadId = await leadIdOf(ctx, port, id);
      if (!leadId) return { error: 'The contact is not a lead yet (no e-mail address or phone number known)' };
      const patch = input as { status?: LeadStatus } & Record<string, unknown>;
      return { lead: compactLead(await ctx.leads.update(ctx.leadScope, leadId, patch)) };
    });
  },
};

export const conversationStats: ToolDef = {
  name: 'conversation_stats',
  description:
    'Conversation figures of the last `days` days (default 30), optionally for one inbox: opened, closed, closedByBot, handoffs and handoffReasons, ' +
    'medianFirstReplySec, medianHandoffSec; and up to 50 recent conversations handed to people (id, leadId, reason, channel).',
  input: Type.Object(
    {
      days: Type.Optional(Type.Integer({ minimum: 1, maximum: 366 })),
      inboxId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    },
    { additionalProperties: false },
  ),
  available,
  async execute(ctx, input) {
    const port = ctx.conversations;
    if (!port) return { error: 'Conversations are not available' };
    const to = ctx.clock.now();
    const from = new Date(to.getTime() - Number(input.days ?? 30) * 86_400_000);
    const inboxId = typeof input.inboxId === 'string' ? input.inboxId : undefined;
    return guarded(async () => {
      const [stats, handed] = await Promise.all([
        port.stats(ctx.leadScope, { from: from.toISOString(), to: to.toISOString(), inboxId }),
        port.list(ctx.leadScope, { handledBy: 'human', inboxId, pageSize: 50, page: 1, sort: '-lastMessageAt' }),
      ]);
      const handedOff = (handed.items as { id: string; leadId?: string; handoffReason?: string; channel: string; lastMessageAt: Date }[])
        .filter((c) => c.handoffReason && new Date(c.lastMessageAt) >= from)
        .map((c) => ({ conversationId: c.id, leadId: c.leadId ?? null, reason: c.handoffReason, channel: c.channel }));
      return { from: from.toISOString(), to: to.toISOString(), ...stats, handedOff };
    });
  },
};

export const CONVERSATION_TOOLS = [botReply, botHandoff, botClose, lookupLead, updateConversationLead, conversationStats];
