import { Type } from 'typebox';
import { LEAD_STATUSES, type LeadStatus } from '../../../shared/leads.ts';
import type { LeadFields } from '../ports.ts';
import type { ToolDef } from './types.ts';

const Status = Type.Union(LEAD_STATUSES.map((s) => Type.Literal(s)));

/** The fields a model needs to judge a lead, without timestamps and internal keys. */
export function compactLead(lead: LeadFields) {
  return {
    id: lead.id,
    name: lead.name,
    email: lead.email,
    phone: lead.phone,
    company: lead.company,
    website: lead.website,
    source: lead.source,
    status: lead.status,
    score: lead.score,
    scoreReason: lead.scoreReason,
    tags: lead.tags,
    custom: lead.custom,
  };
}

export const searchLeads: ToolDef = {
  name: 'search_leads',
  description:
    "Search the organization's leads. Filters: q (free text over name, email, company, website, phone), status, minScore, tags (all must match). Returns at most `limit` leads (default 20, max 50), newest first, and the total.",
  input: Type.Object(
    {
      q: Type.Optional(Type.String({ maxLength: 200 })),
      status: Type.Optional(Status),
      minScore: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
      tags: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 10 })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    },
    { additionalProperties: false },
  ),
  async execute(ctx, input) {
    const i = input as { q?: string; status?: string; minScore?: number; tags?: string[]; limit?: number };
    const page = await ctx.leads.list(ctx.leadScope, {
      q: i.q,
      status: i.status,
      minScore: i.minScore,
      tags: i.tags?.join(','),
      pageSize: i.limit ?? 20,
      page: 1,
      projectId: ctx.projectId ?? undefined,
    });
    return { total: page.total, items: page.items.map(compactLead) };
  },
};

export const getLead: ToolDef = {
  name: 'get_lead',
  description: 'Get one lead by id.',
  input: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  async execute(ctx, input) {
    return compactLead(await ctx.leads.get(ctx.leadScope, String(input.id)));
  },
};

export const updateLead: ToolDef = {
  name: 'update_lead',
  description: 'Update a lead: status, score (0-100) with scoreReason, tags (replaces the list), custom fields (merged).',
  input: Type.Object(
    {
      id: Type.String({ minLength: 1, maxLength: 64 }),
      status: Type.Optional(Status),
      score: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
      scoreReason: Type.Optional(Type.String({ maxLength: 2000 })),
      tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 })),
      custom: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.Unknown())),
    },
    { additionalProperties: false },
  ),
  async execute(ctx, input) {
    const i = input as { id: string; status?: LeadStatus; score?: number; scoreReason?: string; tags?: string[]; custom?: Record<string, unknown> };
    const { id, ...patch } = i;
    return compactLead(await ctx.leads.update(ctx.leadScope, id, patch));
  },
};

export const qualifyLead: ToolDef = {
  name: 'qualify_lead',
  description: 'Mark a lead QUALIFIED with a score (0-100) and the reason; emits lead.qualified.',
  input: Type.Object(
    {
      id: Type.String({ minLength: 1, maxLength: 64 }),
      score: Type.Number({ minimum: 0, maximum: 100 }),
      reason: Type.String({ minLength: 1, maxLength: 2000 }),
    },
    { additionalProperties: false },
  ),
  async execute(ctx, input) {
    const i = input as { id: string; score: number; reason: string };
    return compactLead(await ctx.leads.update(ctx.leadScope, i.id, { status: 'QUALIFIED', score: i.score, scoreReason: i.reason }));
  },
};

export const leadStats: ToolDef = {
  name: 'lead_stats',
  description: 'Lead statistics: total, count by status and by source, average score, leads created in the last 7 and 30 days.',
  input: Type.Object({}, { additionalProperties: false }),
  async execute(ctx) {
    return ctx.leads.stats(ctx.leadScope, ctx.projectId ?? undefined);
  },
};
