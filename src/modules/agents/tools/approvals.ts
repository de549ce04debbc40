import { Type } from 'typebox';
import type { Db } from '../../../platform/db.ts';
import { peerWith } from '../peers.ts';
import type { ToolDef } from './types.ts';

interface ApprovalsPeer {
  request(tx: Db, input: { orgId: string; projectId?: string | null; title: string; description?: string | null; runId?: string | null; expiresAt?: Date | null; payload?: unknown }): Promise<{ id: string; status?: string }>;
}

/** Present only when the approvals module provides services.approvals.request. */
export const requestApproval: ToolDef = {
  name: 'request_approval',
  description: 'Ask a person to approve something (shown in the approvals inbox; emits approval.requested). Returns the approval id; the decision arrives later.',
  input: Type.Object({
    title: Type.String({ minLength: 1, maxLength: 300 }),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    expiresInSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 30 * 86_400 })),
  }, { additionalProperties: false }),
  available: (ctx) => Boolean(peerWith<ApprovalsPeer>(ctx.peers, 'approvals', 'request')),
  async execute(ctx, input) {
    const approvals = peerWith<ApprovalsPeer>(ctx.peers, 'approvals', 'request');
    if (!approvals) return { error: 'Approvals are not available' };
    const expiresAt = input.expiresInSeconds ? new Date(ctx.clock.now().getTime() + Number(input.expiresInSeconds) * 1000) : null;
    // The approval's runId is the agent run; the decision is seen in the approvals inbox and events.
    const approval = await ctx.db.transaction(async (tx) => approvals.request(tx as unknown as Db, {
      orgId: ctx.orgId, projectId: ctx.projectId, title: String(input.title), description: typeof input.description === 'string' ? input.description : null,
      payload: input.payload ?? null, expiresAt, runId: ctx.agentRunId,
    }));
    return { approvalId: approval.id, status: approval.status ?? 'PENDING' };
  },
};
