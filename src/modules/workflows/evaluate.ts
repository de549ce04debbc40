import { and, desc, eq } from 'drizzle-orm';
import type { Db } from '../../platform/db.ts';
import { badRequest, notFound, unprocessable } from '../../platform/errors.ts';
import { inScope, type Tenant } from '../../platform/tenant.ts';
import { evaluate, ExpressionError, hasExpression, resolveParams, type ExpressionScope } from '../../platform/expressions/expressions.ts';
import type { Definition } from './engine/graph.ts';
import type { Item } from './nodes/types.ts';
import { runSteps, workflowRuns } from './tables.ts';

export interface EvaluateInput {
  /** A param as written (`Hello {{ name }}`: the text with its expressions replaced) or a bare JSONata expression (a condition). */
  expression: string;
  /** The item `$` stands for, when no run is named. */
  item?: Item;
  /** `$input`, when no run is named (default: the item). */
  input?: Item;
  /** A run of this workflow: `$input` is its input, `$node("id")` its steps' items, and with nodeId `$` is that node's first input item in it. */
  runId?: string;
  nodeId?: string;
}

/**
 * What an editor's expression field shows (POST …/workflows/:id/expressions/evaluate): the value of
 * an expression against an item — typically the last run's input item of the node being edited —
 * evaluated here, under the same limits as a run (time, depth, size) and in the same expression
 * workers, in the organization's turn. `$secrets` are never evaluated for display.
 */
export async function evaluateForEditor(db: Db, scope: Tenant, workflowId: string, body: EvaluateInput): Promise<{ value: unknown; item: Item }> {
  if (body.expression.includes('$secrets')) {
    throw badRequest('$secrets are not shown in the editor: they are evaluated only when the workflow runs', [
      { field: 'body.expression', message: 'must not use $secrets' },
    ]);
  }
  if (body.nodeId && !body.runId) throw badRequest('nodeId needs the runId whose items to use', [{ field: 'body.runId', message: 'is required with nodeId' }]);
  let item: Item = body.item ?? {};
  let scopeOf: ExpressionScope = {
    orgId: scope.orgId,
    input: body.input ?? item,
    run: { id: '', workflowId, testMode: true, startedAt: null },
    node: () => undefined,
  };
  if (body.runId) {
    const [run] = await db
      .select()
      .from(workflowRuns)
      .where(inScope(scope, workflowRuns, and(eq(workflowRuns.id, body.runId), eq(workflowRuns.workflowId, workflowId))));
    if (!run) throw notFound('Run');
    // The latest attempt of each node.
    const steps = await db.select().from(runSteps).where(eq(runSteps.runId, run.id)).orderBy(desc(runSteps.attempt));
    const latest = new Map<string, (typeof steps)[number]>();
    for (const step of steps) if (!latest.has(step.nodeId)) latest.set(step.nodeId, step);
    const outputs = (id: string) => (latest.get(id)?.outputs ?? {}) as Record<string, Item[]>;
    const def = run.definition as Definition;
    if (body.nodeId) {
      const node = def.nodes.find((n) => n.id === body.nodeId);
      if (!node) throw notFound(`Node "${body.nodeId}" in that run`);
      const incoming = def.edges.filter((e) => e.to === node.id);
      const items = incoming.length === 0 ? [run.input as Item] : incoming.flatMap((e) => outputs(e.from)[e.output ?? 'main'] ?? []);
      item = items[0] ?? body.item ?? {};
    } else if (body.item === undefined) {
      item = run.input as Item;
    }
    scopeOf = {
      orgId: scope.orgId,
      input: run.input as Item,
      run: { id: run.id, workflowId, testMode: run.testMode, startedAt: run.startedAt?.toISOString() ?? null },
      nodeIds: () => latest.keys(),
      node: (id: string) => (latest.get(id)?.status === 'SUCCEEDED' ? Object.values(outputs(id)).flat() : undefined),
    };
  }
  try {
    const value = hasExpression(body.expression) ? await resolveParams(body.expression, item, scopeOf) : await evaluate(body.expression, item, scopeOf);
    return { value: value ?? null, item };
  } catch (error) {
    if (error instanceof ExpressionError) throw unprocessable(error.code, error.message);
    throw error;
  }
}
