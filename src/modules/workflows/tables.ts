import { sql } from 'drizzle-orm';
import { boolean, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { createdAt, ts, updatedAt } from '../../platform/columns.ts';

export const workflows = pgTable(
  'workflows',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id'),
    name: text('name').notNull(),
    description: text('description'),
    nodes: jsonb('nodes').notNull(),
    edges: jsonb('edges').notNull(),
    budgetUsd: doublePrecision('budget_usd'),
    active: boolean('active').notNull().default(true),
    /** The type of the one trigger node (trigger.manual, trigger.event …). */
    triggerType: text('trigger_type').notNull(),
    /** trigger.event: the event names it listens to. */
    triggerEvents: text('trigger_events')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    /** trigger.webhook: SHA-256 of the URL token (the token itself is shown once). */
    webhookTokenHash: text('webhook_token_hash'),
    templateId: text('template_id'),
    /** +1 on every change (CONTRACT §4): a PATCH made on another version is refused with 409. */
    version: integer('version').notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('workflows_org_idx').on(t.orgId, t.id),
    index('workflows_event_trigger_idx')
      .on(t.orgId)
      .where(sql`trigger_type = 'trigger.event' and active`),
  ],
);

/** A run is its own queue entry: the driver claims due rows (wake_at passed, lease free) with SKIP LOCKED. */
export const workflowRuns = pgTable(
  'workflow_runs',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id'),
    workflowId: text('workflow_id').notNull(),
    workflowName: text('workflow_name').notNull(),
    status: text('status').notNull(),
    testMode: boolean('test_mode').notNull().default(false),
    input: jsonb('input').notNull(),
    /** The graph as it was when the run was created: editing the workflow does not change a run in flight. */
    definition: jsonb('definition').notNull(),
    trigger: jsonb('trigger').notNull(),
    costUsd: doublePrecision('cost_usd').notNull().default(0),
    error: jsonb('error'),
    /** Last execution event sequence number written. */
    eventSeq: integer('event_seq').notNull().default(0),
    /** When the run is due for the driver; null while it waits for an approval. */
    wakeAt: ts('wake_at'),
    lockedBy: text('locked_by'),
    lockedUntil: ts('locked_until'),
    /** Claims taken over from an instance whose lease ran out (it crashed or hung): a run that keeps killing its driver is failed, not retried forever. */
    recoveries: integer('recoveries').notNull().default(0),
    createdAt: createdAt(),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('workflow_runs_org_idx').on(t.orgId, t.id),
    index('workflow_runs_workflow_idx').on(t.workflowId, t.id),
    index('workflow_runs_due_idx')
      .on(t.wakeAt)
      .where(sql`status in ('QUEUED','RUNNING','WAITING')`),
    // Runs under way that come due again (a wait over, a holder gone): claimed before queued ones,
    // found without walking past a flood of queued runs.
    index('workflow_runs_resume_idx')
      .on(t.wakeAt)
      .where(sql`status in ('RUNNING','WAITING')`),
    // The queue the triggers' backpressure reads (backlog.ts): an organization's runs waiting to start.
    index('workflow_runs_queued_idx')
      .on(t.orgId, t.createdAt)
      .where(sql`status = 'QUEUED'`),
  ],
);

/** One row per node attempt: its status, its output items, its error. */
export const runSteps = pgTable(
  'run_steps',
  {
    runId: text('run_id').notNull(),
    nodeId: text('node_id').notNull(),
    attempt: integer('attempt').notNull(),
    orgId: text('org_id').notNull(),
    status: text('status').notNull(),
    outputs: jsonb('outputs'),
    itemCount: integer('item_count'),
    error: jsonb('error'),
    startedAt: ts('started_at').notNull(),
    finishedAt: ts('finished_at'),
    durationMs: integer('duration_ms'),
  },
  (t) => [primaryKey({ columns: [t.runId, t.nodeId, t.attempt] })],
);

/** The execution events of a run (SPEC "Execution event"), numbered per run. */
export const runEvents = pgTable(
  'run_events',
  {
    runId: text('run_id').notNull(),
    seq: integer('seq').notNull(),
    type: text('type').notNull(),
    data: jsonb('data').notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.seq] })],
);

export const approvals = pgTable(
  'approvals',
  {
    id: text('id').primaryKey(),
    orgId: text('org_id').notNull(),
    projectId: text('project_id'),
    /** A workflow run id, or an agent run id for agents' approvals (nodeId null). */
    runId: text('run_id'),
    nodeId: text('node_id'),
    title: text('title').notNull(),
    description: text('description'),
    payload: jsonb('payload'),
    status: text('status').notNull().default('PENDING'),
    decision: text('decision'),
    by: text('by'),
    comment: text('comment'),
    editedPayload: jsonb('edited_payload'),
    expiresAt: ts('expires_at'),
    resolvedAt: ts('resolved_at'),
    createdAt: createdAt(),
  },
  (t) => [
    index('approvals_org_idx').on(t.orgId, t.id),
    index('approvals_expiry_idx')
      .on(t.expiresAt)
      .where(sql`status = 'PENDING'`),
  ],
);

/** The next fire time of each active schedule-triggered workflow. */
export const workflowSchedules = pgTable(
  'workflow_schedules',
  {
    workflowId: text('workflow_id').primaryKey(),
    orgId: text('org_id').notNull(),
    cron: text('cron').notNull(),
    timezone: text('timezone').notNull(),
    nextAt: ts('next_at').notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [index('workflow_schedules_next_idx').on(t.nextAt)],
);

/** An organization's named secrets for workflows (`{{ $secrets.NAME }}`): values sealed with SecretBox, never returned. */
export const orgSecrets = pgTable(
  'org_secrets',
  {
    orgId: text('org_id').notNull(),
    name: text('name').notNull(),
    /** SecretBox-sealed value. */
    value: text('value').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.name] })],
);
