import { and, desc, eq, lte, sql } from 'drizzle-orm';
import type { Bus } from '../../platform/bus.ts';
import type { Clock } from '../../platform/clock.ts';
import { transaction, type Db } from '../../platform/db.ts';
import type { Deps } from '../../platform/deps.ts';
import { conflict, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { envelope, orderBy, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import type { Scope } from '../../platform/context.ts';
import { inScope } from '../../platform/tenant.ts';
import type { ApprovalsPorts, EventsPort, NotifyPort, OrgStreamPort } from './ports.ts';
import { approvals } from './tables.ts';

export type ApprovalRow = typeof approvals.$inferSelect;
export const APPROVAL_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED'] as const;
export const APPROVALS_WAKE = 'wake:approvals';

export function publicApproval(row: ApprovalRow) {
  return {
    id: row.id,
    status: row.status,
    title: row.title,
    description: row.description,
    projectId: row.projectId,
    runId: row.runId,
    nodeId: row.nodeId,
    payload: row.payload,
    expiresAt: row.expiresAt,
    decision: row.decision,
    by: row.by,
    comment: row.comment,
    editedPayload: row.editedPayload,
    resolvedAt: row.resolvedAt,
    createdAt: row.createdAt,
  };
}
export type Approval = ReturnType<typeof publicApproval>;

export interface ApprovalRequest {
  orgId: string;
  projectId?: string | null;
  title: string;
  description?: string | null;
  /** A workflow run id, or an agent run id (then nodeId is null). */
  runId?: string | null;
  nodeId?: string | null;
  expiresAt?: Date | null;
  payload?: unknown;
}

/** Called inside the transaction that resolves an approval (approve, reject or expiry). */
export type ResolvedListener = (tx: Db, approval: ApprovalRow) => Promise<void>;

/**
 * Approval tasks of workflow steps and agents. A request is written in the caller's transaction
 * (the one that puts the run in WAITING), so a decision can never arrive before it exists.
 */
export class ApprovalsService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly events: EventsPort;
  private readonly orgStream: OrgStreamPort;
  private readonly notifications: NotifyPort;
  private readonly bus: Bus;
  private readonly listeners: ResolvedListener[] = [];

  constructor(deps: Deps, ports: ApprovalsPorts) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.events = ports.events;
    this.orgStream = ports.orgStream;
    this.notifications = ports.notifications;
    this.bus = ports.bus;
  }

  /** Workflow runs and agent runs register here to resume when a decision is made. */
  onResolved(listener: ResolvedListener): void {
    this.listeners.push(listener);
  }

  async request(tx: Db, input: ApprovalRequest): Promise<Approval> {
    const [row] = await tx
      .insert(approvals)
      .values({
        id: newId('approval', this.clock.now().getTime()),
        orgId: input.orgId,
        projectId: input.projectId ?? null,
        runId: input.runId ?? null,
        nodeId: input.nodeId ?? null,
        title: input.title.slice(0, 300),
        description: input.description ?? null,
        payload: (input.payload ?? null) as object,
        expiresAt: input.expiresAt ?? null,
        createdAt: this.clock.now(),
      })
      .returning();
    const approval = publicApproval(row!);
    await this.events.record(tx, {
      orgId: input.orgId,
      projectId: input.projectId ?? null,
      type: 'approval.requested',
      payload: {
        approvalId: approval.id,
        title: approval.title,
        description: approval.description,
        runId: approval.runId,
        nodeId: approval.nodeId,
        expiresAt: approval.expiresAt,
      },
    });
    await this.orgStream.publishInTx(tx, input.orgId, {
      kind: 'approval.requested',
      data: {
        approvalId: approval.id,
        title: approval.title,
        runId: approval.runId,
        nodeId: approval.nodeId,
        expiresAt: approval.expiresAt?.toISOString() ?? null,
        projectId: approval.projectId ?? undefined,
      },
    });
    await this.notifications.notify(
      {
        orgId: input.orgId,
        projectId: input.projectId ?? null,
        kind: 'approval.requested',
        title: `Approval needed: ${approval.title}`,
        body: approval.description ?? 'A step is waiting for your decision.',
        link: `/approvals/${approval.id}`,
      },
      tx,
    );
    if (input.expiresAt) this.wakeAt(input.expiresAt);
    return approval;
  }

  /** A request on its own, in its own transaction (an agent asking; a workflow step uses request). */
  async submit(input: ApprovalRequest): Promise<Approval> {
    return transaction(this.db, async (tx) => this.request(tx, input));
  }

  /** Wakes the expiry loop at a given time (the poll would find it too, later). */
  private wakeAt(at: Date): void {
    const ms = at.getTime() - this.clock.now().getTime();
    if (ms > 600_000) return;
    setTimeout(() => void this.bus.publish(APPROVALS_WAKE, null).catch(() => {}), Math.max(0, ms) + 5).unref();
  }

  async get(scope: Scope, id: string): Promise<Approval> {
    const [row] = await this.db
      .select()
      .from(approvals)
      .where(inScope(scope, approvals, eq(approvals.id, id)));
    if (!row) throw notFound('Approval');
    return publicApproval(row);
  }

  async list(scope: Scope, query: ListQuery & { status?: string; runId?: string }) {
    const page = pageOf(query);
    const where = inScope(
      scope,
      approvals,
      query.status ? eq(approvals.status, query.status) : undefined,
      query.runId ? eq(approvals.runId, query.runId) : undefined,
    );
    const order = orderBy(query.sort, { createdAt: approvals.createdAt, expiresAt: approvals.expiresAt }, '-createdAt', approvals.id);
    const [items, [counted]] = await Promise.all([
      this.db
        .select()
        .from(approvals)
        .where(where)
        .orderBy(...order)
        .limit(page.limit)
        .offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(approvals)
        .where(where),
    ]);
    return envelope(items.map(publicApproval), counted?.n ?? 0, page);
  }

  /** Approve or reject a PENDING approval; 409 once it is decided or expired. */
  async decide(scope: Scope, id: string, decision: 'approved' | 'rejected', input: { comment?: string; editedPayload?: unknown }): Promise<Approval> {
    return transaction(this.db, async (tx) => {
      const [row] = await tx
        .select()
        .from(approvals)
        .where(inScope(scope, approvals, eq(approvals.id, id)))
        .for('update');
      if (!row) throw notFound('Approval');
      if (row.status !== 'PENDING') throw conflict(`The approval is already ${row.status}`);
      if (row.expiresAt && row.expiresAt.getTime() <= this.clock.now().getTime()) {
        throw conflict('The approval has expired');
      }
      const by = `${scope.actor.type === 'apiKey' ? 'apiKey' : 'user'}:${scope.actor.id}`;
      return publicApproval(
        await this.resolve(tx, row, decision === 'approved' ? 'APPROVED' : 'REJECTED', decision, by, input.comment ?? null, input.editedPayload),
      );
    });
  }

  private async resolve(
    tx: Db,
    row: ApprovalRow,
    status: string,
    decision: 'approved' | 'rejected',
    by: string,
    comment: string | null,
    editedPayload: unknown,
  ): Promise<ApprovalRow> {
    const [updated] = await tx
      .update(approvals)
      .set({
        status,
        decision,
        by,
        comment,
        editedPayload: decision === 'approved' && editedPayload !== undefined ? (editedPayload as object) : null,
        resolvedAt: this.clock.now(),
      })
      .where(inScope({ orgId: row.orgId, projectId: null }, approvals, eq(approvals.id, row.id)))
      .returning();
    const payload: Record<string, unknown> = { approvalId: row.id, decision, by, runId: row.runId, nodeId: row.nodeId };
    if (comment) payload.comment = comment;
    if (updated!.editedPayload !== null) payload.editedPayload = updated!.editedPayload;
    await this.events.record(tx, { orgId: row.orgId, projectId: row.projectId, type: 'approval.resolved', payload });
    for (const listener of this.listeners) await listener(tx, updated!);
    return updated!;
  }

  /** Expires due approvals: decision `rejected` by `system`. True when there may be more. */
  async expireDue(): Promise<boolean> {
    return transaction(this.db, async (tx) => {
      const due = await tx
        .select()
        .from(approvals)
        .where(and(eq(approvals.status, 'PENDING'), lte(approvals.expiresAt, this.clock.now())))
        .orderBy(approvals.expiresAt)
        .limit(100)
        .for('update', { skipLocked: true });
      for (const row of due) await this.resolve(tx, row, 'EXPIRED', 'rejected', 'system', null, undefined);
      return due.length === 100;
    });
  }

  /** A canceled run's pending approvals can no longer be decided. */
  async closeForRun(tx: Db, orgId: string, runId: string): Promise<void> {
    await tx
      .update(approvals)
      .set({ status: 'EXPIRED', resolvedAt: this.clock.now() })
      .where(inScope({ orgId, projectId: null }, approvals, eq(approvals.runId, runId), eq(approvals.status, 'PENDING')));
  }

  async latestFor(orgId: string, runId: string, nodeId: string, db: Db = this.db): Promise<ApprovalRow | undefined> {
    const [row] = await db
      .select()
      .from(approvals)
      .where(inScope({ orgId, projectId: null }, approvals, eq(approvals.runId, runId), eq(approvals.nodeId, nodeId)))
      .orderBy(desc(approvals.id))
      .limit(1);
    return row;
  }
}
