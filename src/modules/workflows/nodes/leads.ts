import { Type } from 'typebox';
import { LEAD_STATUSES } from '../../../shared/leads.ts';
import type { Scope } from '../../../platform/context.ts';
import { envelope, postSigned } from './signing.ts';
import { registerNode } from './registry.ts';
import { main, type Item, type NodeContext } from './types.ts';

const Str = (max: number) => Type.String({ maxLength: max });
const Status = Type.Union(LEAD_STATUSES.map((s) => Type.Literal(s)));
const LeadFields = {
  name: Type.Optional(Str(200)),
  email: Type.Optional(Str(320)),
  phone: Type.Optional(Str(64)),
  company: Type.Optional(Str(200)),
  website: Type.Optional(Str(2048)),
  source: Type.Optional(Str(100)),
  tags: Type.Optional(Type.Array(Str(64), { maxItems: 50 })),
  custom: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 100 })),
};

function scopeOf(ctx: NodeContext): Scope {
  return { orgId: ctx.orgId, projectId: null, actor: { type: 'workflow', id: ctx.workflowId } };
}

/** Empty strings from expressions over missing fields mean "not given". */
function given<T extends Record<string, unknown>>(params: T): T {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== '' && v !== null && v !== undefined)) as T;
}

registerNode({
  type: 'leads.upsert',
  category: 'leads',
  description: 'Creates a lead per item, or updates the one it matches (email, phone, website) — the same de-duplication as POST /leads. Emits the leads.',
  params: Type.Object({ projectId: Type.Optional(Str(64)), ...LeadFields }, { additionalProperties: false }),
  outputs: ['main'],
  async execute(ctx, exec) {
    const out: Item[] = [];
    for (const item of exec.items) {
      const params = given(await exec.params(item));
      const result = await ctx.leads.create(scopeOf(ctx), { ...params, projectId: params.projectId ?? ctx.projectId ?? undefined });
      out.push({ ...result.lead, created: result.created, ...(result.matchedOn ? { deduplicated: { matchedOn: result.matchedOn } } : {}) });
    }
    return main(JSON.parse(JSON.stringify(out)) as Item[]);
  },
});

registerNode({
  type: 'leads.update',
  category: 'leads',
  description: "Changes a lead per item (`leadId`, default the item's `id`): any lead field, `status`, `score`. Emits the updated leads.",
  params: Type.Object(
    {
      leadId: Type.Optional(Str(64)),
      ...LeadFields,
      status: Type.Optional(Status),
      score: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
      scoreReason: Type.Optional(Str(2000)),
    },
    { additionalProperties: false },
  ),
  outputs: ['main'],
  async execute(ctx, exec) {
    const out: Item[] = [];
    for (const item of exec.items) {
      const { leadId, ...patch } = given(await exec.params(item));
      const id = leadId ?? (typeof item.id === 'string' ? item.id : undefined);
      if (!id) throw new Error('leads.update: no leadId param and the item has no id');
      out.push((await ctx.leads.update(scopeOf(ctx), id, patch)) as unknown as Item);
    }
    return main(JSON.parse(JSON.stringify(out)) as Item[]);
  },
});

registerNode({
  type: 'leads.crmSync',
  category: 'leads',
  description:
    "POSTs each lead (`leadId`, default the item's `id`) to a CRM webhook, signed like platform webhooks, event `lead.synced`. In test mode nothing is sent (`dryRun: true`).",
  params: Type.Object(
    {
      url: Type.String({ minLength: 1, maxLength: 2048 }),
      secret: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      leadId: Type.Optional(Str(64)),
    },
    { additionalProperties: false },
  ),
  outputs: ['main'],
  async execute(ctx, exec) {
    const out: Item[] = [];
    for (const [index, item] of exec.items.entries()) {
      const params = await exec.params(item);
      const id = params.leadId || (typeof item.id === 'string' ? item.id : undefined);
      if (!id) throw new Error('leads.crmSync: no leadId param and the item has no id');
      const lead = JSON.parse(JSON.stringify(await ctx.leads.get(scopeOf(ctx), id))) as Item;
      const body = envelope(ctx, 'lead.synced', { lead, runId: ctx.runId, workflowId: ctx.workflowId }, index);
      if (ctx.testMode) {
        out.push({ dryRun: true, url: params.url, event: 'lead.synced', body });
        continue;
      }
      const sent = await postSigned(ctx, { url: params.url, secret: params.secret, event: 'lead.synced', body });
      out.push({ ...lead, sync: { ...sent, eventId: body.id } });
    }
    return main(out);
  },
});
