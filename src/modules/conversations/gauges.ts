import { sql } from 'drizzle-orm';
import type { QueueGauge } from '../../platform/metrics.ts';

/** The outbound sender's queues: queued messages, a campaign's (`campaign_sends`) and the others (`conversation_outbound`). */
export const outboundQueues: QueueGauge = {
  queues: ['campaign_sends', 'conversation_outbound'],
  sample: (now) => sql`select case when sender = 'campaign' then 'campaign_sends' else 'conversation_outbound' end as queue, count(*)::int as depth,
         extract(epoch from (${now} - min(at)))::float8 as age
    from messages where status = 'queued' group by 1`,
};
