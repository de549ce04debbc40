import { bigint, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { ts } from '../../platform/columns.ts';

/**
 * Platform events counted per organization, project, type and UTC hour. Kept by the dispatcher in
 * the transaction that marks the events dispatched, so each event is counted exactly once; the
 * stats query reads whole hours from here and only the edges of the range (and events not yet
 * dispatched) from the outbox itself.
 */
export const statsHourly = pgTable(
  'stats_hourly',
  {
    orgId: text('org_id').notNull(),
    /** '' for events without a project. */
    projectId: text('project_id').notNull().default(''),
    type: text('type').notNull(),
    hour: ts('hour').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.type, t.hour, t.projectId] })],
);
