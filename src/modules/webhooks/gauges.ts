import { sql } from 'drizzle-orm';
import type { QueueGauge } from '../../platform/metrics.ts';

/** The deliverer's queue: pending deliveries whose attempt is due. */
export const webhookDeliveriesQueue: QueueGauge = {
  queues: ['webhook_deliveries'],
  sample: (now) => sql`select 'webhook_deliveries' as queue, count(*)::int as depth, extract(epoch from (${now} - min(next_attempt_at)))::float8 as age
    from webhook_deliveries where status = 'pending' and next_attempt_at <= ${now}`,
};
