import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Bus } from '../../platform/bus.ts';
import type { Clock } from '../../platform/clock.ts';
import { randomToken, safeEqual, SecretBox, sha256Hex } from '../../platform/crypto.ts';
import type { Db } from '../../platform/db.ts';
import type { Deps } from '../../platform/deps.ts';
import { notFound } from '../../platform/errors.ts';
import { envelope, orderBy, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import { newId } from '../../platform/ids.ts';
import type { OrgStream } from '../events/org-stream.ts';
import type { EventRow } from '../events/service.ts';
import type { OrgsService } from '../orgs/service.ts';
import { validateDefinition, invalid, type Definition, type WorkflowEdge, type WorkflowNode } from './engine/graph.ts';
import { othersNotifier, type OthersNotifier } from './engine/notifier.ts';
import { RUNS_WAKE, runStatusMessage } from './engine/writer.ts';
import { publicRun } from './runs.ts';
import type { SchedulesService } from './schedules.ts';
import { OrgSecretsService } from './org-secrets.ts';
import { maskNodes, sealNodes } from './secrets.ts';
import { workflowRuns, workflows } from './tables.ts';
import { findTemplate } from './templates/index.ts';

export type WorkflowRow = typeof workflows.$inferSelect;

export interface WorkflowInput {
  name: string;
  projectId?: string | null;
  description?: string | null;
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
  budgetUsd?: number | null;
  active?: boolean;
}

export interface StartOptions {
  input?: Record<string, unknown>;
  testMode?: boolean;
  /** What started it: { type: 'manual' | 'event' | 'schedule' | 'webhook' | 'recommendation', … }. */
  trigger?: Record<string, unknown> & { type: string };
}

interface Scope {
  orgId: string;
  projectId: string | null;
}

function triggerOf(row: WorkflowRow, publicUrl: string) {
  const trigger = row.nodes as WorkflowNode[];
  const node = trigger.find((n) => n.type === row.triggerType);
  const out: Record<string, unknown> = { type: row.triggerType, nodeId: node?.id ?? null };
  if (row.triggerType === 'trigger.event') out.events = row.triggerEvents;
  if (row.triggerType === 'trigger.schedule') {
    out.cron = node?.params?.cron;
    out.timezone = node?.params?.timezone ?? 'UTC';
  }
  if (row.triggerType === 'trigger.webhook') out.webhookUrl = `${publicUrl}/api/v1/hooks/${row.id}/<token>`;
  return out;
}

export function publicWorkflow(row: WorkflowRow, publicUrl: string) {
  return {
    id: row.id,
    projectId: row.projectId,
    name: row.name,
    description: row.description,
    nodes: maskNodes(row.nodes as WorkflowNode[]),
    edges: row.edges as WorkflowEdge[],
    budgetUsd: row.budgetUsd,
    active: row.active,
    trigger: triggerOf(row, publicUrl),
    templateId: row.templateId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** Workflows: definitions, validation, and starting runs (the driver executes them). */
export class WorkflowsService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly bus: Bus;
  private readonly orgStream: OrgStream;
  private readonly orgs: OrgsService;
  private readonly schedules: SchedulesService;
  private readonly box: SecretBox;
  private readonly publicUrl: string;
  /** The organization's named secrets (`{{ $secrets.NAME }}`), sealed with the same box. */
  readonly secrets: OrgSecretsService;

  private readonly others: OthersNotifier;

  constructor(deps: Deps, bus: Bus, orgStream: OrgStream, orgs: OrgsService, schedules: SchedulesService) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.bus = bus;
    this.orgStream = orgStream;
    this.orgs = orgs;
    this.schedules = schedules;
    this.box = new SecretBox(deps.config.appSecret);
    this.secrets = new OrgSecretsService(deps.db, deps.clock, this.box);
    this.publicUrl = deps.config.publicUrl;
    this.others = othersNotifier(bus, deps.db, deps.database.kind);
  }

  get secretBox(): SecretBox {
    return this.box;
  }

  private where(scope: Scope, ...conditions: (SQL | undefined)[]): SQL {
    return and(eq(workflows.orgId, scope.orgId), scope.projectId ? eq(workflows.projectId, scope.projectId) : undefined, ...conditions)!;
  }

  async row(scope: Scope, id: string, db: Db = this.db): Promise<WorkflowRow> {
    const [row] = await db.select().from(workflows).where(this.where(scope, eq(workflows.id, id)));
    if (!row) throw notFound('Workflow');
    return row;
  }

  async get(scope: Scope, id: string) {
    return publicWorkflow(await this.row(scope, id), this.publicUrl);
  }

  async list(scope: Scope, query: ListQuery & { active?: boolean; projectId?: string }) {
    const page = pageOf(query);
    const q = query.q?.trim();
    const where = this.where(scope,
      query.active !== undefined ? eq(workflows.active, query.active) : undefined,
      query.projectId ? eq(workflows.projectId, query.projectId) : undefined,
      q ? sql`(${workflows.name} ilike ${'%' + q.replace(/[\\%_]/g, (c) => '\\' + c) + '%'} or ${workflows.description} ilike ${'%' + q.replace(/[\\%_]/g, (c) => '\\' + c) + '%'})` : undefined);
    const order = orderBy(query.sort, { createdAt: workflows.createdAt, updatedAt: workflows.updatedAt, name: workflows.name }, '-createdAt', workflows.id);
    const [items, [counted]] = await Promise.all([
      this.db.select().from(workflows).where(where).orderBy(...order).limit(page.limit).offset(page.offset),
      this.db.select({ n: sql<number>`count(*)::int` }).from(workflows).where(where),
    ]);
    return envelope(items.map((r) => publicWorkflow(r, this.publicUrl)), counted?.n ?? 0, page);
  }

  /** Validates a definition, including a schedule's cron and time zone. */
  private check(def: Definition, hint?: string): WorkflowNode {
    const { trigger } = validateDefinition(def, { unavailableHint: hint });
    if (trigger.type === 'trigger.schedule') {
      const problem = this.schedules.checkCron(String(trigger.params?.cron ?? ''), trigger.params?.timezone as string | undefined);
      if (problem) throw invalid(`Node "${trigger.id}" (trigger.schedule): ${problem}`);
    }
    return trigger;
  }

  private resolveProject(scope: Scope, projectId: string | null | undefined): Promise<string | null> {
    return this.orgs.projectFor(scope, projectId);
  }

  async create(scope: Scope, input: WorkflowInput, options: { templateId?: string; unavailableHint?: string } = {}) {
    const trigger = this.check({ nodes: input.nodes, edges: input.edges }, options.unavailableHint);
    const projectId = await this.resolveProject(scope, input.projectId);
    const token = trigger.type === 'trigger.webhook' ? randomToken(24) : null;
    const now = this.clock.now();
    const row = await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const [created] = await tx.insert(workflows).values({
        id: newId('workflow', now.getTime()),
        orgId: scope.orgId,
        projectId,
        name: input.name,
        description: input.description ?? null,
        nodes: sealNodes(input.nodes, this.box),
        edges: input.edges,
        budgetUsd: input.budgetUsd ?? null,
        active: input.active ?? true,
        triggerType: trigger.type,
        triggerEvents: trigger.type === 'trigger.event' ? (trigger.params?.events as string[]) : [],
        webhookTokenHash: token ? sha256Hex(token) : null,
        templateId: options.templateId ?? null,
        createdAt: now,
        updatedAt: now,
      }).returning();
      await this.schedules.sync(tx, created!);
      return created!;
    });
    return { ...publicWorkflow(row, this.publicUrl), ...this.webhookSecret(row, token) };
  }

  private webhookSecret(row: WorkflowRow, token: string | null) {
    if (!token) return {};
    return { webhookToken: token, webhookUrl: `${this.publicUrl}/api/v1/hooks/${row.id}/${token}` };
  }

  async update(scope: Scope, id: string, patch: Partial<WorkflowInput>) {
    let token: string | null = null;
    const row = await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const [before] = await tx.select().from(workflows).where(this.where(scope, eq(workflows.id, id))).for('update');
      if (!before) throw notFound('Workflow');
      const set: Partial<WorkflowRow> = { updatedAt: this.clock.now() };
      if (patch.name !== undefined) set.name = patch.name;
      if (patch.description !== undefined) set.description = patch.description;
      if (patch.budgetUsd !== undefined) set.budgetUsd = patch.budgetUsd;
      if (patch.active !== undefined) set.active = patch.active;
      if (patch.projectId !== undefined) set.projectId = await this.resolveProject(scope, patch.projectId);
      if (patch.nodes !== undefined || patch.edges !== undefined) {
        const previous = before.nodes as WorkflowNode[];
        const nodes = patch.nodes ?? maskNodes(previous);
        const edges = patch.edges ?? (before.edges as WorkflowEdge[]);
        const trigger = this.check({ nodes, edges });
        set.nodes = sealNodes(nodes, this.box, previous);
        set.edges = edges;
        set.triggerType = trigger.type;
        set.triggerEvents = trigger.type === 'trigger.event' ? (trigger.params?.events as string[]) : [];
        if (trigger.type === 'trigger.webhook' && !before.webhookTokenHash) {
          token = randomToken(24);
          set.webhookTokenHash = sha256Hex(token);
        }
      }
      const [after] = await tx.update(workflows).set(set).where(eq(workflows.id, before.id)).returning();
      await this.schedules.sync(tx, after!);
      return after!;
    });
    return { ...publicWorkflow(row, this.publicUrl), ...this.webhookSecret(row, token) };
  }

  async delete(scope: Scope, id: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      const tx = trx as unknown as Db;
      const deleted = await tx.delete(workflows).where(this.where(scope, eq(workflows.id, id))).returning({ id: workflows.id });
      if (deleted.length === 0) throw notFound('Workflow');
      await this.schedules.remove(tx, id);
    });
  }

  /** A new webhook token (the old one stops working); shown only in this answer. */
  async rotateWebhookToken(scope: Scope, id: string) {
    const row = await this.row(scope, id);
    if (row.triggerType !== 'trigger.webhook') throw invalid('The workflow has no trigger.webhook node');
    const token = randomToken(24);
    await this.db.update(workflows).set({ webhookTokenHash: sha256Hex(token), updatedAt: this.clock.now() }).where(eq(workflows.id, row.id));
    return this.webhookSecret(row, token) as { webhookToken: string; webhookUrl: string };
  }

  async useTemplate(scope: Scope, templateId: string, input: { name: string; projectId?: string | null }) {
    const template = findTemplate(templateId);
    if (!template) throw notFound('Template');
    return this.create(scope, {
      name: input.name, projectId: input.projectId, description: template.description,
      nodes: template.workflow.nodes, edges: template.workflow.edges, active: template.workflow.active ?? true,
    }, { templateId: template.id, unavailableHint: ' (that node type is not available in this installation yet, so this template cannot be used)' });
  }

  /**
   * Creates a QUEUED run and wakes the driver when the transaction commits. With `tx`, the run
   * exists exactly when the caller's change does (event triggers, report recommendations).
   */
  async startRun(orgId: string, workflowId: string, options: StartOptions = {}, tx?: Db) {
    const db = tx ?? this.db;
    const row = await this.row({ orgId, projectId: null }, workflowId, db);
    return this.startFromRow(row, options, tx);
  }

  /** Same as startRun for a caller holding the workflow row; respects an API key's project. */
  async startForScope(scope: Scope, workflowId: string, options: StartOptions) {
    // One statement: the run is copied from the workflow row as it is now (404 when out of scope).
    const now = this.clock.now();
    const id = newId('run', now.getTime());
    const testMode = options.testMode ?? false;
    const input = options.input ?? {};
    const trigger = options.trigger ?? { type: 'manual' };
    const at = now.toISOString();
    const result = await this.db.execute(sql`insert into workflow_runs (id, org_id, project_id, workflow_id, workflow_name, status, test_mode, input, definition, trigger, wake_at, created_at)
      select ${id}, w.org_id, w.project_id, w.id, w.name, 'QUEUED', ${testMode}, ${JSON.stringify(input)}::jsonb,
        jsonb_build_object('nodes', w.nodes, 'edges', w.edges, 'budgetUsd', w.budget_usd), ${JSON.stringify(trigger)}::jsonb, ${at}::timestamptz, ${at}::timestamptz
      from workflows w where w.id = ${workflowId} and w.org_id = ${scope.orgId}${scope.projectId ? sql` and w.project_id = ${scope.projectId}` : sql``}
      returning project_id, workflow_name`) as unknown as { rows: { project_id: string | null; workflow_name: string }[] };
    const created = result.rows[0];
    if (!created) throw notFound('Workflow');
    const run = {
      id, orgId: scope.orgId, projectId: created.project_id, workflowId, workflowName: created.workflow_name, status: 'QUEUED', testMode, input,
      definition: null, trigger, costUsd: 0, error: null, eventSeq: 0, wakeAt: now, lockedBy: null, lockedUntil: null, recoveries: 0, createdAt: now, startedAt: null, finishedAt: null,
    };
    this.announce(run);
    return publicRun(run);
  }

  /** A run created on its own (no caller transaction): this instance hears of it now, the others in the next batch. */
  private announce(run: { id: string; orgId: string; projectId: string | null; workflowId: string }): void {
    const status = runStatusMessage(run, 'QUEUED', 0);
    this.orgStream.emitLocal(run.orgId, [status]);
    this.bus.emitLocal(RUNS_WAKE, null);
    const toOrg = this.orgStream.notifyOthersSql(run.orgId, [status]);
    this.others.enqueue({ notify: toOrg, fallback: (db) => this.orgStream.publishToOthersInTx(db, run.orgId, [status]) });
    this.others.wake(RUNS_WAKE);
  }

  async startFromRow(row: WorkflowRow, options: StartOptions, tx?: Db) {
    const now = this.clock.now();
    const run = {
      id: newId('run', now.getTime()),
      orgId: row.orgId,
      projectId: row.projectId,
      workflowId: row.id,
      workflowName: row.name,
      status: 'QUEUED',
      testMode: options.testMode ?? false,
      input: options.input ?? {},
      definition: { nodes: row.nodes, edges: row.edges, budgetUsd: row.budgetUsd },
      trigger: options.trigger ?? { type: 'manual' },
      wakeAt: now,
      createdAt: now,
    };
    const status = runStatusMessage({ id: run.id, orgId: row.orgId, projectId: row.projectId, workflowId: row.id }, 'QUEUED', 0);
    if (tx) {
      const [created] = await tx.insert(workflowRuns).values(run).returning();
      await this.orgStream.publishInTx(tx, row.orgId, status);
      await this.bus.publishInTx(tx, RUNS_WAKE, null);
      return publicRun(created!);
    }
    // On its own: one statement, no NOTIFY inside it (see OthersNotifier).
    const [created] = await this.db.insert(workflowRuns).values(run).returning();
    this.announce(created!);
    return publicRun(created!);
  }

  /** Public webhook trigger: the token must match (constant time); unknown, inactive or mismatched → 404. */
  async startFromWebhook(workflowId: string, token: string, body: Record<string, unknown>, meta: Record<string, unknown>) {
    const [row] = await this.db.select().from(workflows).where(eq(workflows.id, workflowId));
    const hash = sha256Hex(token);
    if (!row || row.triggerType !== 'trigger.webhook' || !row.webhookTokenHash || !safeEqual(hash, row.webhookTokenHash) || !row.active) throw notFound('Webhook');
    return this.startFromRow(row, { input: body, trigger: { type: 'webhook', ...meta } });
  }

  /** Dispatcher subscriber: platform events start the active workflows listening for them. */
  async onEvents(tx: Db, batch: EventRow[]): Promise<void> {
    const orgIds = [...new Set(batch.map((e) => e.orgId))];
    const types = [...new Set(batch.map((e) => e.type))];
    const listening = await tx.select().from(workflows).where(and(
      inArray(workflows.orgId, orgIds), eq(workflows.triggerType, 'trigger.event'), eq(workflows.active, true),
      sql`${workflows.triggerEvents} && ${sql.param(types)}::text[]`,
    ));
    if (listening.length === 0) return;
    for (const event of batch) {
      for (const wf of listening) {
        if (wf.orgId !== event.orgId || !wf.triggerEvents.includes(event.type)) continue;
        if (wf.projectId && wf.projectId !== event.projectId) continue;
        // A workflow never triggers itself through its own run events.
        if ((event.payload as { workflowId?: unknown }).workflowId === wf.id) continue;
        const input: Record<string, unknown> = { id: event.id, type: event.type, organizationId: event.orgId, at: event.at.toISOString(), payload: event.payload };
        if (event.projectId) input.projectId = event.projectId;
        await this.startFromRow(wf, { input, trigger: { type: 'event', eventId: event.id, eventType: event.type } }, tx);
      }
    }
  }
}
