import { sql } from 'drizzle-orm';
import type { QueueGauge } from '../../platform/metrics.ts';
import { CONVERSATIONAL_TYPES } from './catalog.ts';

/**
 * The agent runner's queues: queued agent runs, apart from the conversational types (the bot's
 * turns), whose queued runs are the conversations' inbound queue.
 */
export const agentRunsQueues: QueueGauge = {
  queues: ['agent_runs', 'conversation_inbound'],
  sample: (now) => {
    const conversational = sql`${sql.param([...CONVERSATIONAL_TYPES])}::text[]`;
    return sql`select 'agent_runs' as queue, count(*)::int as depth, extract(epoch from (${now} - min(created_at)))::float8 as age
    from agent_runs where status = 'QUEUED' and type <> all(${conversational})
  union all
  select 'conversation_inbound', count(*)::int, extract(epoch from (${now} - min(created_at)))::float8
    from agent_runs where status = 'QUEUED' and type = any(${conversational})`;
  },
};
