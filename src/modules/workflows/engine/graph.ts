import { unprocessable } from '../../../platform/errors.ts';
import { getNode } from '../nodes/registry.ts';
import type { NodeDefinition } from '../nodes/types.ts';
import { checkWrittenParams } from '../../../platform/expressions/expressions.ts';

export interface WorkflowNode {
  id: string;
  type: string;
  name?: string;
  params?: Record<string, unknown>;
  retry?: { maxAttempts: number; backoffSeconds?: number };
}

export interface WorkflowEdge {
  from: string;
  to: string;
  output?: string;
}

export interface Definition {
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
  budgetUsd?: number | null;
}

/** What a 422 WORKFLOW_INVALID names (CONTRACT §4): the node, the edge, the param — so an editor can highlight it. */
export interface WorkflowProblem {
  nodeId?: string;
  edge?: { from: string; to?: string; output?: string };
  param?: string;
  [more: string]: unknown;
}

export function invalid(message: string, details?: WorkflowProblem) {
  return unprocessable('WORKFLOW_INVALID', message, details);
}

/**
 * Checks a workflow graph: known node types, params matching each node's schema, edges between
 * existing nodes on declared outputs, exactly one trigger, and no cycle. Throws 422 WORKFLOW_INVALID
 * naming the first problem.
 */
export function validateDefinition(def: Definition, options: { unavailableHint?: string } = {}): { trigger: WorkflowNode } {
  const byId = new Map<string, WorkflowNode>();
  const types = new Map<string, NodeDefinition>();
  if (def.nodes.length === 0) throw invalid('The workflow has no nodes; it needs exactly one trigger node');
  for (const node of def.nodes) {
    if (byId.has(node.id)) throw invalid(`Node id "${node.id}" is used twice`, { nodeId: node.id });
    byId.set(node.id, node);
    const type = getNode(node.type);
    if (!type) {
      throw invalid(`Node "${node.id}" has unknown node type "${node.type}"${options.unavailableHint ?? ''}`, { nodeId: node.id, type: node.type });
    }
    types.set(node.id, type);
    const problem = checkWrittenParams(type.params, node.params ?? {});
    if (problem)
      throw invalid(`Node "${node.id}" (${node.type}) has invalid params: ${problem.message}`, {
        nodeId: node.id,
        ...(problem.param ? { param: problem.param } : {}),
        message: problem.message,
      });
  }
  const triggers = def.nodes.filter((n) => types.get(n.id)!.trigger);
  if (triggers.length === 0) throw invalid('The workflow has no trigger node (trigger.manual, trigger.event, trigger.schedule or trigger.webhook)');
  if (triggers.length > 1)
    throw invalid(`The workflow has ${triggers.length} trigger nodes (${triggers.map((t) => t.id).join(', ')}); exactly one is allowed`, {
      nodeId: triggers[1]!.id,
    });
  const seen = new Set<string>();
  for (const edge of def.edges) {
    if (!byId.has(edge.from)) throw invalid(`An edge starts at missing node "${edge.from}"`, { edge: { from: edge.from, to: edge.to } });
    if (!byId.has(edge.to)) throw invalid(`An edge points to missing node "${edge.to}"`, { edge: { from: edge.from, to: edge.to } });
    const output = edge.output ?? 'main';
    const outputs = types.get(edge.from)!.outputs;
    if (!outputs.includes(output)) {
      throw invalid(`Node "${edge.from}" (${byId.get(edge.from)!.type}) has no output "${output}"; its outputs: ${outputs.join(', ')}`, {
        nodeId: edge.from,
        edge: { from: edge.from, to: edge.to, output },
      });
    }
    if (types.get(edge.to)!.trigger)
      throw invalid(`An edge points to the trigger node "${edge.to}"`, { nodeId: edge.to, edge: { from: edge.from, to: edge.to } });
    const key = `${edge.from}\u0000${edge.to}\u0000${output}`;
    if (seen.has(key)) throw invalid(`The edge ${edge.from} → ${edge.to} (${output}) is listed twice`, { edge: { from: edge.from, to: edge.to, output } });
    seen.add(key);
  }
  const cycle = findCycle(def);
  if (cycle) throw invalid(`The workflow has a cycle: ${cycle.join(' → ')}`, { nodeId: cycle[0]!, edge: { from: cycle.at(-2)!, to: cycle.at(-1)! }, cycle });
  return { trigger: triggers[0]! };
}

function findCycle(def: Definition): string[] | null {
  const out = new Map<string, string[]>();
  for (const e of def.edges) out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    state.set(id, 1);
    stack.push(id);
    for (const next of out.get(id) ?? []) {
      if (state.get(next) === 1) return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(id, 2);
    return null;
  };
  for (const node of def.nodes) {
    if (!state.has(node.id)) {
      const found = visit(node.id);
      if (found) return found;
    }
  }
  return null;
}

/** Nodes in execution order: a topological order that keeps the written order among ready nodes. */
export function executionOrder(def: Definition): WorkflowNode[] {
  const indegree = new Map<string, number>(def.nodes.map((n) => [n.id, 0]));
  for (const e of def.edges) indegree.set(e.to, (indegree.get(e.to) ?? 0) + 1);
  const order: WorkflowNode[] = [];
  const done = new Set<string>();
  while (order.length < def.nodes.length) {
    const next = def.nodes.find((n) => !done.has(n.id) && indegree.get(n.id) === 0);
    if (!next) break;
    done.add(next.id);
    order.push(next);
    for (const e of def.edges) if (e.from === next.id) indegree.set(e.to, indegree.get(e.to)! - 1);
  }
  return order;
}
