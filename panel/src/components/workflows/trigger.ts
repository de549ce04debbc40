/** A workflow's trigger (the record's `trigger`: `{ type, nodeId, events? | cron?, timezone? }`) in words. */
export function triggerSummary(trigger: Record<string, unknown> | null | undefined): string {
  const type = typeof trigger?.type === 'string' ? trigger.type.replace(/^trigger\./, '') : '';
  switch (type) {
    case 'manual':
      return 'By hand or API';
    case 'event': {
      const events = Array.isArray(trigger?.events) ? trigger.events.filter((e): e is string => typeof e === 'string') : [];
      return events.length ? `On ${events.join(', ')}` : 'On an event';
    }
    case 'schedule':
      return `Schedule ${typeof trigger?.cron === 'string' ? trigger.cron : ''}${typeof trigger?.timezone === 'string' ? ` (${trigger.timezone})` : ''}`.trim();
    case 'webhook':
      return 'Webhook';
    default:
      return type || '—';
  }
}
