import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Bus } from '../../platform/bus.ts';
import type { Clock } from '../../platform/clock.ts';
import { randomToken, safeEqual, SecretBox, sha256Hex } from '../../platform/crypto.ts';
import { rows, transaction, type Db } from '../../platform/db.ts';
import type { Deps } from '../../platform/deps.ts';
import { AppError, conflict, notFound } from '../../platform/errors.ts';
import { envelope, orderBy, pageOf, type ListQuery } from '../../platform/http/pagination.ts';
import { newId } from '../../platform/ids.ts';
import { checkOutboundUrlForm, OutboundError } from '../../platform/http-client.ts';
import type { Scope } from '../../platform/context.ts';
import { inScope, type Tenant } from '../../platform/tenant.ts';
import type { EventRow } from '../events/index.ts';
import { validateDefinition, invalid, type Definition, type WorkflowEdge, type WorkflowNode } from './engine/graph.ts';
import { othersNotifier, type OthersNotifier } from './engine/notifier.ts';
import { RunBacklog } from './backlog.ts';
import { RUNS_WAKE, runStatusMessage } from './engine/writer.ts';
import { publicRun } from './runs.ts';
import type { OrgsPort, OrgStreamPort, PlansPort, SchedulesPort, WorkflowsPorts } from './ports.ts';
import { OrgSecretsService } from './org-secrets.ts';
import { maskNodes, sealNodes } from './secrets.ts';
import { workflows } from './tables.ts';
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
  /**
   * The webhook trigger's token hash: the run is created only if the workflow is still active,
   * webhook-triggered and has this token (checked by the insert itself); else 404 Webhook.
   */
  webhookTokenHash?: string;
}

/** A webhook trigger's sender (webhookSender): the workflow and the hash of the token it was called with. */
export interface WebhookSender {
  id: string;
  orgId: string;
  tokenHash: string;
}

/** Workflows whose webhook token was verified lately, remembered per instance (webhookSender). */
const HOOK_CACHE_SIZE = 10_000;

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
    version: row.version,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** Workflows: definitions, validation, and starting runs (the driver executes them). */
export class WorkflowsService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly bus: Bus;
  private readonly orgStream: OrgStreamPort;
  private readonly orgs: OrgsPort;
  private readonly schedules: SchedulesPort;
  private readonly box: SecretBox;
  private readonly publicUrl: string;
  private readonly allowPrivateTargets: boolean;
  /** The organization's named secrets (`{{ $secrets.NAME }}`), sealed with the same box. */
  readonly secrets: OrgSecretsService;

  private readonly others: OthersNotifier;
  /** Backpressure at the webhook trigger and POST …/run (backlog.ts). */
  private readonly backlog: RunBacklog;
  /** webhookSender's memory: workflow id → the sender last verified (oldest dropped past HOOK_CACHE_SIZE). */
  private readonly hookSenders = new Map<string, WebhookSender>();

  /** The plan's workflows feature and runsPerMonth limit (CONTRACT §12). */
  private readonly plans: PlansPort | null;

  constructor(deps: Deps, ports: WorkflowsPorts) {
    this.plans = ports.plans?.enabled ? ports.plans : null;
    this.db = deps.db;
    this.clock = deps.clock;
    this.bus = ports.bus;
    this.orgStream = ports.orgStream;
    this.orgs = ports.orgs;
    this.schedules = ports.schedules;
    this.box = new SecretBox(deps.config.appSecret);
    this.secrets = new OrgSecretsService(deps.db, deps.clock, this.box);
    this.publicUrl = deps.config.publicUrl;
    this.allowPrivateTargets = deps.config.webhookAllowPrivate;
    this.others = othersNotifier(ports.bus, deps.db, deps.database.kind);
    this.backlog = new RunBacklog(deps.database, deps.clock, { ...deps.config.runQueue, agedFrom: deps.config.workflowConcurrency });
  }

  get secretBox(): SecretBox {
    return this.box;
  }

  /** The workflow the scope may see (engine callers look one up by organization: no actor). */
  async row(scope: Tenant, id: string, db: Db = this.db): Promise<WorkflowRow> {
    const [row] = await db
      .select()
      .from(workflows)
      .where(inScope(scope, workflows, eq(workflows.id, id)));
    if (!row) throw notFound('Workflow');
    return row;
  }

  async get(scope: Scope, id: string) {
    return publicWorkflow(await this.row(scope, id), this.publicUrl);
  }

  async list(scope: Scope, query: ListQuery & { active?: boolean; projectId?: string }) {
    const page = pageOf(query);
    const q = query.q?.trim();
    const where = inScope(
      scope,
      workflows,
      query.active !== undefined ? eq(workflows.active, query.active) : undefined,
      query.projectId ? eq(workflows.projectId, query.projectId) : undefined,
      q
        ? sql`(${workflows.name} ilike ${'%' + q.replace(/[\\%_]/g, (c) => '\\' + c) + '%'} or ${workflows.description} ilike ${'%' + q.replace(/[\\%_]/g, (c) => '\\' + c) + '%'})`
        : undefined,
    );
    const order = orderBy(query.sort, { createdAt: workflows.createdAt, updatedAt: workflows.updatedAt, name: workflows.name }, '-createdAt', workflows.id);
    const [items, [counted]] = await Promise.all([
      this.db
        .select()
        .from(workflows)
        .where(where)
        .orderBy(...order)
        .limit(page.limit)
        .offset(page.offset),
      this.db
        .select({ n: sql<number>`count(*)::int` })
        .from(workflows)
        .where(where),
    ]);
    return envelope(
      items.map((r) => publicWorkflow(r, this.publicUrl)),
      counted?.n ?? 0,
      page,
    );
  }

  /** Validates a definition, including a schedule's cron and time zone. */
  private check(def: Definition, hint?: string): WorkflowNode {
    const { trigger } = validateDefinition(def, { unavailableHint: hint });
    // A literal target URL is judged when saved, as a webhook endpoint's is (the call checks it
    // again, resolved); one holding an expression can only be judged then.
    for (const node of def.nodes) {
      const url = node.params?.url;
      if (typeof url !== 'string' || url.includes('{{')) continue;
      try {
        checkOutboundUrlForm(url, { allowPrivate: this.allowPrivateTargets });
      } catch (error) {
        if (!(error instanceof OutboundError)) throw error;
        throw invalid(`Node "${node.id}" (${node.type}) has invalid params: url: ${error.message}`, { nodeId: node.id, param: 'url', message: error.message });
      }
    }
    if (trigger.type === 'trigger.schedule') {
      const problem = this.schedules.checkCron(String(trigger.params?.cron ?? ''), trigger.params?.timezone as string | undefined);
      if (problem)
        throw invalid(`Node "${trigger.id}" (trigger.schedule): ${problem}`, { nodeId: trigger.id, param: /time ?zone/i.test(problem) ? 'timezone' : 'cron' });
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
    const row = await transaction(this.db, async (tx) => {
      const [created] = await tx
        .insert(workflows)
        .values({
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
        })
        .returning();
      await this.schedules.sync(tx, created!);
      return created!;
    });
    return { ...publicWorkflow(row, this.publicUrl), ...this.webhookSecret(row, token) };
  }

  private webhookSecret(row: WorkflowRow, token: string | null) {
    if (!token) return {};
    return { webhookToken: token, webhookUrl: `${this.publicUrl}/api/v1/hooks/${row.id}/${token}` };
  }

  async update(scope: Scope, id: string, patch: Partial<WorkflowInput> & { version?: number }) {
    let token: string | null = null;
    // Before the transaction: the embedded store's one connection is the transaction's until it ends,
    // so a read outside it from inside would wait for ever.
    const projectId = patch.projectId !== undefined ? await this.resolveProject(scope, patch.projectId) : undefined;
    const row = await transaction(this.db, async (tx) => {
      const [before] = await tx
        .select()
        .from(workflows)
        .where(inScope(scope, workflows, eq(workflows.id, id)))
        .for('update');
      if (!before) throw notFound('Workflow');
      if (patch.version !== undefined && patch.version !== before.version) {
        throw conflict(
          `The workflow was changed since version ${patch.version} was read (it is at version ${before.version} now): reload it and apply the change again`,
        );
      }
      const set: Partial<WorkflowRow> = { updatedAt: this.clock.now(), version: before.version + 1 };
      if (patch.name !== undefined) set.name = patch.name;
      if (patch.description !== undefined) set.description = patch.description;
      if (patch.budgetUsd !== undefined) set.budgetUsd = patch.budgetUsd;
      if (patch.active !== undefined) set.active = patch.active;
      if (projectId !== undefined) set.projectId = projectId;
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
      const [after] = await tx
        .update(workflows)
        .set(set)
        .where(inScope(scope, workflows, eq(workflows.id, before.id)))
        .returning();
      await this.schedules.sync(tx, after!);
      return after!;
    });
    return { ...publicWorkflow(row, this.publicUrl), ...this.webhookSecret(row, token) };
  }

  async delete(scope: Scope, id: string): Promise<void> {
    await transaction(this.db, async (tx) => {
      const deleted = await tx
        .delete(workflows)
        .where(inScope(scope, workflows, eq(workflows.id, id)))
        .returning({ id: workflows.id });
      if (deleted.length === 0) throw notFound('Workflow');
      await this.schedules.remove(tx, id);
    });
  }

  /** A new webhook token (the old one stops working); shown only in this answer. */
  async rotateWebhookToken(scope: Scope, id: string) {
    const row = await this.row(scope, id);
    if (row.triggerType !== 'trigger.webhook') throw invalid('The workflow has no trigger.webhook node');
    const token = randomToken(24);
    await this.db
      .update(workflows)
      .set({ webhookTokenHash: sha256Hex(token), updatedAt: this.clock.now() })
      .where(inScope(scope, workflows, eq(workflows.id, row.id)));
    return this.webhookSecret(row, token) as { webhookToken: string; webhookUrl: string };
  }

  async useTemplate(scope: Scope, templateId: string, input: { name: string; projectId?: string | null }) {
    const template = findTemplate(templateId);
    if (!template) throw notFound('Template');
    return this.create(
      scope,
      {
        name: input.name,
        projectId: input.projectId,
        description: template.description,
        nodes: template.workflow.nodes,
        edges: template.workflow.edges,
        active: template.workflow.active ?? true,
      },
      { templateId: template.id, unavailableHint: ' (that node type is not available in this installation yet, so this template cannot be used)' },
    );
  }

  /**
   * Creates a QUEUED run of an organization's workflow. With `tx`, the run exists exactly when the
   * caller's change does (event triggers, schedules, report recommendations).
   */
  startRun(orgId: string, workflowId: string, options: StartOptions = {}, tx?: Db) {
    return this.createRun({ orgId, projectId: null }, workflowId, options, tx);
  }

  /**
   * Same as startRun for a request's scope: an API key bound to a project starts only that project's
   * workflows. `arrivedAt`: performance.now() when the request arrived (backlog.ts).
   */
  async startForScope(scope: Tenant, workflowId: string, options: StartOptions, arrivedAt?: number) {
    await this.backlog.admit(scope.orgId, workflowId, arrivedAt);
    return this.createRun(scope, workflowId, options);
  }

  /**
   * A trigger request's whole handling, within the instance's bound on triggers in flight
   * (backlog.ts): the webhook trigger and POST …/run wrap their handlers in it.
   */
  gateTrigger<T>(handle: () => Promise<T>): Promise<T> {
    return this.backlog.gate(handle);
  }

  /**
   * The one creator of runs: a QUEUED run copied from the workflow row as it is now, in one
   * statement (404 when the scope has no such workflow). In the caller's transaction the driver is
   * woken at its commit; on its own, this instance hears of the run now and the others in the next
   * batch (no NOTIFY inside the insert: see OthersNotifier).
   */
  private async createRun(scope: Tenant, workflowId: string, options: StartOptions, tx?: Db) {
    const plans = this.plans;
    if (!plans) return this.insertRun(scope, workflowId, options, tx);
    // Under PLANS: the plan must include workflows, and the run is counted with its insert.
    const allow = async (db: Db) => {
      await plans.assertFeature(scope.orgId, 'workflows', db);
      await plans.take(db, scope.orgId, 'runsPerMonth');
    };
    if (!tx) {
      const run = await transaction(this.db, async (trx) => {
        await allow(trx);
        return this.insertRun(scope, workflowId, options, trx);
      });
      return run;
    }
    try {
      await allow(tx);
    } catch (error) {
      // A run an event or a schedule would start is recorded FAILED with the reason (the trigger
      // cannot answer 429 to anyone); the others (manual, recommendation) are refused.
      const trigger = options.trigger?.type;
      if (!(error instanceof AppError) || (trigger !== 'event' && trigger !== 'schedule')) throw error;
      return this.insertRun(scope, workflowId, options, tx, { code: error.code, message: error.message, details: error.details });
    }
    return this.insertRun(scope, workflowId, options, tx);
  }

  /** The insert of createRun; with `refused`, a run that never starts: FAILED at once with that error. */
  private async insertRun(scope: Tenant, workflowId: string, options: StartOptions, tx?: Db, refused?: { code: string; message: string; details: unknown }) {
    const now = this.clock.now();
    const id = newId('run', now.getTime());
    const testMode = options.testMode ?? false;
    const input = options.input ?? {};
    const trigger = options.trigger ?? { type: 'manual' };
    const at = now.toISOString();
    // A refused run is stored FAILED at once with the reason, and never woken.
    const status = refused ? 'FAILED' : 'QUEUED';
    const hook = options.webhookTokenHash;
    const where = inScope(
      scope,
      workflows,
      eq(workflows.id, workflowId),
      ...(hook ? [eq(workflows.active, true), eq(workflows.triggerType, 'trigger.webhook'), eq(workflows.webhookTokenHash, hook)] : []),
    );
    const [created] = await rows<{ project_id: string | null; workflow_name: string }>(
      tx ?? this.db,
      sql`insert into workflow_runs (id, org_id, project_id, workflow_id, workflow_name, status, test_mode, input, definition, trigger, error, wake_at, created_at, finished_at)
      select ${id}, org_id, project_id, id, name, ${status}, ${testMode}, ${JSON.stringify(input)}::jsonb,
        jsonb_build_object('nodes', nodes, 'edges', edges, 'budgetUsd', budget_usd), ${JSON.stringify(trigger)}::jsonb, ${refused ? JSON.stringify(refused) : null}::jsonb,
        ${refused ? null : at}::timestamptz, ${at}::timestamptz, ${refused ? at : null}::timestamptz
      from workflows where ${where}
      returning project_id, workflow_name`,
    );
    if (!created) {
      if (hook) this.hookSenders.delete(workflowId);
      throw notFound(hook ? 'Webhook' : 'Workflow');
    }
    const run = {
      id,
      orgId: scope.orgId,
      projectId: created.project_id,
      workflowId,
      workflowName: created.workflow_name,
      status,
      testMode,
      input,
      definition: null,
      trigger,
      costUsd: 0,
      error: refused ?? null,
      eventSeq: 0,
      wakeAt: refused ? null : now,
      lockedBy: null,
      lockedUntil: null,
      recoveries: 0,
      createdAt: now,
      startedAt: null,
      finishedAt: refused ? now : null,
    };
    if (refused) {
      await this.orgStream.publishInTx(tx!, run.orgId, runStatusMessage(run, 'FAILED', 0));
      return publicRun(run);
    }
    if (tx) {
      await this.orgStream.publishInTx(tx, run.orgId, runStatusMessage(run, 'QUEUED', 0));
      await this.bus.publishInTx(tx, RUNS_WAKE, null);
    } else {
      this.announce(run);
    }
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

  /**
   * The verifier of the public webhook trigger: the active webhook-triggered workflow whose token
   * this is (compared as hashes, in constant time), or null for anything else. A workflow verified
   * lately on this instance with the same token is not read again: the run's insert checks the
   * token, the trigger and that the workflow is active in the same statement (startFromWebhook), so
   * a token rotated or a workflow deactivated since is refused all the same, with the same 404. A
   * token that does not match what is remembered is always looked up.
   */
  async webhookSender(workflowId: string, token: string): Promise<WebhookSender | null> {
    const tokenHash = sha256Hex(token);
    const known = this.hookSenders.get(workflowId);
    if (known && safeEqual(tokenHash, known.tokenHash)) return known;
    const [row] = await this.db
      .select({ id: workflows.id, orgId: workflows.orgId, triggerType: workflows.triggerType, active: workflows.active, hash: workflows.webhookTokenHash })
      .from(workflows)
      .where(eq(workflows.id, workflowId));
    if (!row || row.triggerType !== 'trigger.webhook' || !row.hash || !safeEqual(tokenHash, row.hash) || !row.active) {
      this.hookSenders.delete(workflowId);
      return null;
    }
    const sender = { id: row.id, orgId: row.orgId, tokenHash };
    if (this.hookSenders.size >= HOOK_CACHE_SIZE) this.hookSenders.delete(this.hookSenders.keys().next().value!);
    this.hookSenders.set(workflowId, sender);
    return sender;
  }

  /** A run of a workflow its webhook verified (webhookSender), with the body as input. */
  async startFromWebhook(sender: WebhookSender, body: Record<string, unknown>, meta: Record<string, unknown>, arrivedAt?: number) {
    await this.backlog.admit(sender.orgId, sender.id, arrivedAt);
    return this.startRun(sender.orgId, sender.id, { input: body, trigger: { type: 'webhook', ...meta }, webhookTokenHash: sender.tokenHash });
  }

  /** Dispatcher subscriber: platform events start the active workflows listening for them. */
  async onEvents(tx: Db, batch: EventRow[]): Promise<void> {
    const orgIds = [...new Set(batch.map((e) => e.orgId))];
    const types = [...new Set(batch.map((e) => e.type))];
    const listening = await tx
      .select()
      .from(workflows)
      .where(
        and(
          inArray(workflows.orgId, orgIds),
          eq(workflows.triggerType, 'trigger.event'),
          eq(workflows.active, true),
          sql`${workflows.triggerEvents} && ${sql.param(types)}::text[]`,
        ),
      );
    if (listening.length === 0) return;
    for (const event of batch) {
      for (const wf of listening) {
        if (wf.orgId !== event.orgId || !wf.triggerEvents.includes(event.type)) continue;
        if (wf.projectId && wf.projectId !== event.projectId) continue;
        // A workflow never triggers itself through its own run events.
        if ((event.payload as { workflowId?: unknown }).workflowId === wf.id) continue;
        const input: Record<string, unknown> = {
          id: event.id,
          type: event.type,
          organizationId: event.orgId,
          at: event.at.toISOString(),
          payload: event.payload,
        };
        if (event.projectId) input.projectId = event.projectId;
        await this.startRun(wf.orgId, wf.id, { input, trigger: { type: 'event', eventId: event.id, eventType: event.type } }, tx);
      }
    }
  }
}
