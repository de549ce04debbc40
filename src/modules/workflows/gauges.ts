import { sql } from 'drizzle-orm';
import type { QueueGauge } from '../../platform/metrics.ts';

/** The run driver's queue: runs due to be driven (queued, running or waiting with wake_at passed), off workflow_runs_due_idx. */
export const workflowRunsQueue: QueueGauge = {
  queues: ['workflow_runs'],
  sample: (now) => sql`select 'workflow_runs' as queue, count(*)::int as depth, extract(epoch from (${now} - min(wake_at)))::float8 as age
    from workflow_runs where status in ('QUEUED','RUNNING','WAITING') and wake_at <= ${now}`,
};
