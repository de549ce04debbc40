import { Type } from 'typebox';
import type { ToolDef } from './types.ts';

/** Present only when the approvals port is installed. */
export const requestApproval: ToolDef = {
  name: 'request_approval',
  description:
    'Ask a person to approve something (shown in the approvals inbox; emits approval.requested). Returns the approval id; the decision arrives later.',
  input: Type.Object(
    {
      title: Type.String({ minLength: 1, maxLength: 300 }),
      description: Type.Optional(Type.String({ maxLength: 4000 })),
      payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      expiresInSeconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 30 * 86_400 })),
    },
    { additionalProperties: false },
  ),
  available: (ports) => Boolean(ports.approvals),
  async execute(ctx, input) {
    const { approvals } = ctx;
    if (!approvals) return { error: 'Approvals are not available' };
    const expiresAt = input.expiresInSeconds ? new Date(ctx.clock.now().getTime() + Number(input.expiresInSeconds) * 1000) : null;
    // The approval's runId is the agent run; the decision is seen in the approvals inbox and events.
    const approval = await approvals.submit({
      orgId: ctx.orgId,
      projectId: ctx.projectId,
      title: String(input.title),
      description: typeof input.description === 'string' ? input.description : null,
      payload: input.payload ?? null,
      expiresAt,
      runId: ctx.agentRunId,
    });
    return { approvalId: approval.id, status: approval.status ?? 'PENDING' };
  },
};
