import type { Static, TSchema } from 'typebox';
import type { Clock } from '../../../platform/clock.ts';
import type { CampaignsPort, ContentPort, ConversationsPort, InlineAgents, LeadsPort } from '../ports.ts';

/** A data item: a JSON object flowing along the edges of a workflow. */
export type Item = Record<string, unknown>;

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * What nodes may reach outside the run: only the methods the built-in nodes call. The run driver
 * receives these from src/services.ts and hands them to every node.
 */
export interface NodePorts {
  clock: Clock;
  /** Settings of signed webhook-out and HTTP requests (the organization's signing secret derives from appSecret). */
  outbound: { appSecret: string; allowPrivate: boolean; timeoutMs: number };
  leads: LeadsPort;
  content: ContentPort;
  agents: InlineAgents;
  /** `messaging.send` through an inbox. */
  conversations: ConversationsPort;
  /** `campaigns.start`. */
  campaigns: CampaignsPort;
}

/** What a node can see and do while it executes: the ports, and the run it executes in. */
export interface NodeContext extends NodePorts {
  orgId: string;
  /** The workflow's project, or null for an organization-wide workflow. */
  projectId: string | null;
  runId: string;
  workflowId: string;
  nodeId: string;
  nodeName: string | null;
  /** True: publishing, messaging, CRM sync and webhook-out only report what they would send (`dryRun: true`). */
  testMode: boolean;
  /** 1 for the first try; above 1 on retries. */
  attempt: number;
  /** Aborted when the run is canceled (or the driver shuts down); pass it to every outbound call. */
  signal: AbortSignal;
  /** The run's input (the trigger's item). */
  runInput: Item;
  /** Writes a `log` execution event on the run stream. */
  log(level: LogLevel, message: string): Promise<void>;
  /**
   * Adds to the run's costUsd (persisted at once). Throws an AppError with code BUDGET_EXCEEDED when
   * the workflow's budgetUsd (or the organization's monthly budget) is exceeded; the run then FAILS
   * with that code and the node is not retried.
   */
  addCost(usd: number): Promise<void>;
  /** USD still available to this run under the workflow budget, or null when unlimited. */
  remainingBudgetUsd(): Promise<number | null>;
}

/** What the engine hands a node: its incoming items and its params. */
export interface NodeExecution<P> {
  /** The items of all incoming edges, in edge order (the trigger gets the run input as its one item). */
  items: Item[];
  /**
   * The params with `{{ … }}` JSONata expressions evaluated against `item` (`$` = the item; `$input`,
   * `$run`, `$node("id")` available) and checked against the node's schema. Without an item: evaluated
   * against the first item (or `{}`).
   */
  params(item?: Item): Promise<P>;
  /** The params as written in the workflow (expressions not evaluated). */
  rawParams: P;
  /** Evaluates a bare JSONata expression (no braces) against an item, with the same bindings as params. */
  evaluate(expression: string, item: Item): Promise<unknown>;
}

/** Ask the engine to park the run in WAITING. */
export interface WaitRequest {
  /** Resume at this time (flow.delay). */
  until?: Date;
  /** Create an approval in the same transaction that makes the run WAITING (flow.approval). */
  approval?: {
    title: string;
    description?: string | null;
    expiresAt?: Date | null;
    payload?: unknown;
  };
}

/** How a wait ended, given to `resume`. */
export type WaitOutcome =
  { kind: 'delay' } | { kind: 'approval'; decision: 'approved' | 'rejected'; by: string; comment?: string | null; editedPayload?: unknown };

/** Items per output name (`main` unless the node declares others, e.g. `true`/`false`). */
export type NodeOutputs = Record<string, Item[]>;

export type NodeResult = { outputs: NodeOutputs } | { wait: WaitRequest };

export interface NodeDefinition<P extends TSchema = TSchema> {
  /** e.g. `data.set`, `ai.agent`. */
  type: string;
  /** e.g. `trigger`, `flow`, `data`, `leads`, `ai`, `content`, `messaging`, `utility`. */
  category: string;
  description: string;
  /** TypeBox schema of the params (shown by GET …/node-types as JSON Schema; enforced on create and at run time). */
  params: P;
  /** Output names; edges pick one with `output` (default `main`). */
  outputs: string[];
  /** True for trigger.* nodes: a workflow has exactly one, and it emits the run input. */
  trigger?: boolean;
  /**
   * True for a node that only computes its outputs from its items and params in this process: no
   * call out, no write, no wait, no cost. The engine then does not commit its start on its own
   * before executing it: its start and finish are committed with the next transition (the start of
   * the next node that is not pure, or the run's end). After a crash in between it is simply
   * executed again, which no one outside the run can tell. Its `log` lines go out with that commit.
   */
  pure?: boolean;
  /** Runs the node. Throw to fail it (retried per the node's `retry`). */
  execute(ctx: NodeContext, exec: NodeExecution<Static<P>>): Promise<NodeResult>;
  /** Called when a wait requested by `execute` ends; returns the node's outputs. */
  resume?(ctx: NodeContext, exec: NodeExecution<Static<P>>, outcome: WaitOutcome): Promise<NodeResult>;
}

/** Convenience: everything on the `main` output. */
export function main(items: Item[]): NodeResult {
  return { outputs: { main: items } };
}
