import { sql } from 'drizzle-orm';
import type { QueueGauge } from '../../platform/metrics.ts';

/** The publisher's queue: scheduled posts whose time has come, and publishings whose retry is due. */
export const scheduledPostsQueue: QueueGauge = {
  queues: ['scheduled_posts'],
  sample: (
    now,
  ) => sql`select 'scheduled_posts' as queue, count(*)::int as depth, extract(epoch from (${now} - min(coalesce(next_attempt_at, scheduled_at))))::float8 as age
    from posts where (status = 'SCHEDULED' and scheduled_at <= ${now}) or (status = 'PUBLISHING' and next_attempt_at <= ${now})`,
};
