import { Type } from 'typebox';
import type { Scope } from '../../../platform/context.ts';
import { registerNode } from './registry.ts';
import { main, type Item } from './types.ts';

registerNode({
  type: 'campaigns.start',
  category: 'messaging',
  description:
    'Starts a DRAFT campaign per item ({ campaignId }): its audience is resolved then, and it runs (SCHEDULED while its scheduledAt is ahead). A campaign started before — by a person, or by this step run again after a retry or a crash — is not started twice: the step emits its current state with `alreadyStarted: true`. In test mode nothing starts (`dryRun: true`). Emits { campaignId, status, total, alreadyStarted }.',
  params: Type.Object({ campaignId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  outputs: ['main'],
  async execute(ctx, exec) {
    const scope: Scope = { orgId: ctx.orgId, projectId: ctx.projectId, actor: { type: 'workflow', id: ctx.workflowId } };
    const out: Item[] = [];
    for (const item of exec.items) {
      if (ctx.signal.aborted) throw new Error('canceled');
      const { campaignId } = await exec.params(item);
      const before = await ctx.campaigns.get(scope, campaignId);
      if (ctx.testMode) {
        out.push({ dryRun: true, campaignId, status: before.status, wouldStart: before.status === 'DRAFT' });
        continue;
      }
      const after = before.status === 'DRAFT' ? await ctx.campaigns.start(scope, campaignId) : before;
      out.push({ campaignId, status: after.status, total: after.total, alreadyStarted: before.status !== 'DRAFT' });
    }
    return main(out);
  },
});
