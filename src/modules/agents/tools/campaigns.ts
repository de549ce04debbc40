import { Type } from 'typebox';
import type { ToolDef } from './types.ts';

/** A campaign's figures for the report writer's CAMPAIGN_SUMMARY. */
export const campaignStats: ToolDef = {
  name: 'campaign_stats',
  description:
    "A campaign's figures (input campaignId): name, channel, status, steps, and its recipients counted once per counter — total, sent, delivered, read, replied, failed, skipped, pending — " +
    'the skip reasons with their counts, and the ids of up to 1,000 leads who replied and of up to 1,000 who were sent everything without replying.',
  input: Type.Object({ campaignId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  available: (ports) => Boolean(ports.campaigns),
  async execute(ctx, input) {
    const port = ctx.campaigns;
    if (!port) return { error: 'Campaigns are not available' };
    try {
      return await port.summary(ctx.leadScope, String(input.campaignId));
    } catch (error) {
      return { error: (error as Error).message };
    }
  },
};
