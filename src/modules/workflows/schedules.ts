import { Cron } from 'croner';
import { and, eq, lte } from 'drizzle-orm';
import type { Clock } from '../../platform/clock.ts';
import { transaction, type Db } from '../../platform/db.ts';
import type { Deps } from '../../platform/deps.ts';
import type { WorkflowNode } from './engine/graph.ts';
import type { RunStarter, SchedulerPorts, SchedulesPort } from './ports.ts';
import { workflows, workflowSchedules } from './tables.ts';

type WorkflowRow = typeof workflows.$inferSelect;

function nextRun(cron: string, timezone: string, after: Date): Date | null {
  return new Cron(cron, { timezone, paused: true }).nextRun(after);
}

/**
 * Schedule triggers: one row per active schedule-triggered workflow with its next fire time, kept in
 * step with the workflow by the workflows service (in its transaction). The Scheduler fires them.
 */
export class SchedulesService implements SchedulesPort {
  private readonly db: Db;
  private readonly clock: Clock;

  constructor(deps: Deps) {
    this.db = deps.db;
    this.clock = deps.clock;
  }

  /** A readable problem with a cron expression or time zone, or null. */
  checkCron(cron: string, timezone?: string): string | null {
    try {
      const job = new Cron(cron, { timezone: timezone ?? 'UTC', paused: true });
      if (!job.nextRun(this.clock.now())) return `cron "${cron}" never fires`;
      return null;
    } catch (error) {
      return `invalid cron "${cron}"${timezone ? ` or time zone "${timezone}"` : ''}: ${(error as Error).message}`;
    }
  }

  /** Keeps the schedule row in step with the workflow (in the caller's transaction). */
  async sync(tx: Db, row: WorkflowRow): Promise<void> {
    const trigger = (row.nodes as WorkflowNode[]).find((n) => n.type === 'trigger.schedule');
    if (!row.active || !trigger) {
      await this.remove(tx, row.id);
      return;
    }
    const cron = String(trigger.params?.cron);
    const timezone = String(trigger.params?.timezone ?? 'UTC');
    const nextAt = nextRun(cron, timezone, this.clock.now());
    if (!nextAt) {
      await this.remove(tx, row.id);
      return;
    }
    await tx
      .insert(workflowSchedules)
      .values({ workflowId: row.id, orgId: row.orgId, cron, timezone, nextAt, updatedAt: this.clock.now() })
      .onConflictDoUpdate({ target: workflowSchedules.workflowId, set: { cron, timezone, nextAt, updatedAt: this.clock.now() } });
  }

  async remove(tx: Db, workflowId: string): Promise<void> {
    await tx.delete(workflowSchedules).where(eq(workflowSchedules.workflowId, workflowId));
  }

  /** The earliest next fire time, so the loop can sleep exactly until then. */
  async nextDue(): Promise<Date | null> {
    const [row] = await this.db.select({ nextAt: workflowSchedules.nextAt }).from(workflowSchedules).orderBy(workflowSchedules.nextAt).limit(1);
    return row?.nextAt ?? null;
  }
}

/**
 * Fires due schedules: a round claims due rows (SKIP LOCKED), starts one run each and moves them to
 * their next time; times missed while the service was down fire once, not once per missed slot.
 */
export class Scheduler {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly schedules: SchedulerPorts['schedules'];
  private readonly starter: RunStarter;

  constructor(deps: Deps, ports: SchedulerPorts) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.schedules = ports.schedules;
    this.starter = ports.workflows;
  }

  /** Fires due schedules; true when there may be more. */
  async round(): Promise<boolean> {
    return transaction(this.db, async (tx) => {
      const now = this.clock.now();
      const due = await tx
        .select()
        .from(workflowSchedules)
        .where(lte(workflowSchedules.nextAt, now))
        .orderBy(workflowSchedules.nextAt)
        .limit(50)
        .for('update', { skipLocked: true });
      for (const schedule of due) {
        const [wf] = await tx
          .select()
          .from(workflows)
          .where(and(eq(workflows.id, schedule.workflowId), eq(workflows.orgId, schedule.orgId)));
        if (!wf || !wf.active || wf.triggerType !== 'trigger.schedule') {
          await this.schedules.remove(tx, schedule.workflowId);
          continue;
        }
        await this.starter.startRun(
          wf.orgId,
          wf.id,
          {
            input: { scheduledAt: schedule.nextAt.toISOString(), cron: schedule.cron, timezone: schedule.timezone },
            trigger: { type: 'schedule', scheduledAt: schedule.nextAt.toISOString() },
          },
          tx,
        );
        const nextAt = nextRun(schedule.cron, schedule.timezone, now);
        if (nextAt) await tx.update(workflowSchedules).set({ nextAt, updatedAt: now }).where(eq(workflowSchedules.workflowId, schedule.workflowId));
        else await this.schedules.remove(tx, schedule.workflowId);
      }
      return due.length === 50;
    });
  }
}
