/** The platform events of SPEC "Outbound webhooks: platform events": what webhooks and the organization stream carry. */
export const PLATFORM_EVENT_NAMES = [
  'lead.created',
  'lead.updated',
  'lead.qualified',
  'lead.replied',
  'message.received',
  'message.sent',
  'conversation.opened',
  'conversation.handoff',
  'conversation.closed',
  'post.created',
  'post.approved',
  'post.published',
  'post.failed',
  'campaign.started',
  'campaign.finished',
  'workflow.run.started',
  'workflow.run.finished',
  'workflow.run.failed',
  'agent.run.finished',
  'agent.report.created',
  'analytics.synced',
  'analytics.threshold',
  'integration.connected',
  'integration.error',
  'approval.requested',
  'approval.resolved',
  'budget.warning',
  'budget.exceeded',
] as const;

export type PlatformEventName = (typeof PLATFORM_EVENT_NAMES)[number];

const KNOWN: ReadonlySet<string> = new Set(PLATFORM_EVENT_NAMES);

export function isPlatformEventName(name: string): name is PlatformEventName {
  return KNOWN.has(name);
}
