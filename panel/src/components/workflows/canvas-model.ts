/**
 * The canvas editor's document: a workflow definition (CONTRACT §4) as React Flow nodes and edges,
 * and back. Each canvas node keeps the definition node it came from (every field, in its order), so
 * a definition read and written back without an edit is the same definition; a node gets a
 * `position` in the definition only once it has been placed on the canvas (moved, added, laid out),
 * never because the automatic layout drew it somewhere.
 *
 * Pure functions only: the editor calls them, the component tests check them.
 */
import type { Edge, Node } from '@xyflow/react';
import type { DefEdge, DefNode, Definition } from './definition';
import { layeredLayout } from './layout';

/** What the palette and the canvas know of a node type (GET …/node-types). */
export interface NodeTypeInfo {
  type: string;
  category: string;
  description: string;
  params: Record<string, unknown>;
  outputs: string[];
}

export interface StepData extends Record<string, unknown> {
  /** The definition node as read and edited (a `position` in it is what was read: the canvas node's `position` is where it is now). */
  def: DefNode;
  /** Whether the definition keeps this node's position. */
  placed: boolean;
}

export type StepNode = Node<StepData, 'step'>;

export interface LinkData extends Record<string, unknown> {
  def: DefEdge;
}

export type LinkEdge = Edge<LinkData>;

export interface WorkflowMeta {
  name: string;
  description: string;
  /** Empty: no budget of its own. */
  budgetUsd: string;
}

export interface Doc {
  meta: WorkflowMeta;
  nodes: StepNode[];
  edges: LinkEdge[];
}

export const MAIN = 'main';
/**
 * Layers top to bottom (the canvas is taller than wide beside the palette and the side panel): room
 * for a step with its status and branch row between layers, for a step (w-56) beside another.
 */
export const LAYOUT = { direction: 'TB' as const, layerGap: 170, nodeGap: 270 };
export const TARGET_HANDLE = 'in';

/** The node's category: the part of its type before the dot (`flow.if` → `flow`). */
export const categoryOf = (type: string) => type.split('.')[0] ?? '';
export const isTrigger = (type: string) => type.startsWith('trigger.');

export function outputsOf(type: string, types: ReadonlyMap<string, NodeTypeInfo>): string[] {
  return types.get(type)?.outputs ?? [MAIN];
}

/** An edge's id on the canvas: one per (from, output, to), as the API allows no repeats. */
export function linkId(def: DefEdge, taken?: ReadonlySet<string>): string {
  const base = `${def.from}:${def.output ?? MAIN}>${def.to}`;
  if (!taken?.has(base)) return base;
  let n = 2;
  while (taken.has(`${base}#${n}`)) n++;
  return `${base}#${n}`;
}

function withoutPosition(node: DefNode): DefNode {
  if (!('position' in node)) return node;
  const { position: _position, ...rest } = node;
  return rest as DefNode;
}

/** A canvas node for a definition node; its accessible name is the step's name. */
export function stepNode(def: DefNode, position: { x: number; y: number }, placed: boolean, selected?: boolean): StepNode {
  return { id: def.id, type: 'step', position, ariaLabel: def.name || def.id, ...(selected ? { selected } : {}), data: { def, placed } };
}

const hasPosition = (node: unknown): node is { position: { x: number; y: number } } => {
  const p = (node as { position?: { x?: unknown; y?: unknown } }).position;
  return Boolean(p) && typeof p!.x === 'number' && typeof p!.y === 'number';
};

export function linkOf(def: DefEdge, id: string): LinkEdge {
  const output = def.output ?? MAIN;
  return {
    id,
    source: def.from,
    target: def.to,
    sourceHandle: output,
    targetHandle: TARGET_HANDLE,
    type: 'link',
    data: { def },
  };
}

/**
 * The canvas of a definition: nodes where their `position` puts them, the others where a layered
 * layout of the edges puts them (top to bottom).
 */
export function docOf(def: Definition, meta: WorkflowMeta): Doc {
  const ids = def.nodes.map((n) => n.id);
  const layout = def.nodes.every(hasPosition)
    ? null
    : layeredLayout(
        ids.map((id) => ({ id })),
        def.edges,
        LAYOUT,
      );
  const nodes: StepNode[] = def.nodes.map((raw) => {
    const placed = hasPosition(raw);
    const at = placed ? { x: raw.position!.x, y: raw.position!.y } : (layout?.get(raw.id) ?? { x: 0, y: 0 });
    return stepNode(raw, { x: at.x, y: at.y }, placed);
  });
  const taken = new Set<string>();
  const edges = def.edges.map((raw) => {
    const id = linkId(raw, taken);
    taken.add(id);
    return linkOf(raw, id);
  });
  return { meta, nodes, edges };
}

const round = (n: number) => Math.round(n);

/**
 * The definition a canvas stands for: every node as it was read, with the edits made on it, and a
 * `position` where the node was placed; every edge as it was read (or drawn).
 */
export function definitionOf(doc: Pick<Doc, 'nodes' | 'edges'>): Definition {
  const nodes = doc.nodes.map((node) => {
    const raw = node.data.def;
    if (!node.data.placed) return withoutPosition(raw);
    const position = { x: round(node.position.x), y: round(node.position.y) };
    const given = (raw as { position?: { x: number; y: number } }).position;
    // Unmoved: exactly what was read (a fraction stays a fraction).
    if (given && round(given.x) === position.x && round(given.y) === position.y) return raw;
    if ('position' in raw) return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, k === 'position' ? position : v])) as unknown as DefNode;
    return { ...raw, position };
  });
  const edges = doc.edges.map(
    (edge) =>
      edge.data?.def ?? { from: edge.source, to: edge.target, ...(edge.sourceHandle && edge.sourceHandle !== MAIN ? { output: edge.sourceHandle } : {}) },
  );
  return { nodes, edges };
}

/** Every node placed where it is now (what moving or adding one node does: the layout becomes the author's). */
export function placeAll(nodes: readonly StepNode[]): StepNode[] {
  return nodes.map((n) => (n.data.placed ? n : { ...n, data: { ...n.data, placed: true } }));
}

/** The nodes re-laid out from their edges (the "Tidy up" button): all placed. */
export function relayout(doc: Doc): StepNode[] {
  const placements = layeredLayout(
    doc.nodes.map((n) => ({ id: n.id })),
    doc.edges.map((e) => ({ from: e.source, to: e.target })),
    LAYOUT,
  );
  return doc.nodes.map((n) => {
    const p = placements.get(n.id) ?? { x: 0, y: 0 };
    return { ...n, position: { x: p.x, y: p.y }, data: { ...n.data, placed: true } };
  });
}

const ID_PATTERN = /[^A-Za-z0-9_.-]/g;

/** A new node id from its type (`utility.webhookOut` → `webhookOut`, then `webhookOut_2`, …). */
export function newNodeId(type: string, taken: ReadonlySet<string>): string {
  const base = (type.split('.').pop() ?? 'node').replace(ID_PATTERN, '').slice(0, 56) || 'node';
  if (!taken.has(base)) return base;
  let n = 2;
  while (taken.has(`${base}_${n}`)) n++;
  return `${base}_${n}`;
}

/** A readable default name: `flow.if` → "If", `utility.webhookOut` → "Webhook out", `trigger.manual` → "Manual trigger". */
export function defaultName(type: string): string {
  const last = type.split('.').pop() ?? type;
  const words = last.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  const text = words.charAt(0).toUpperCase() + words.slice(1);
  if (type === 'flow.if') return 'If';
  return isTrigger(type) ? `${text} trigger` : text;
}

/** Whether `to` can reach `from` already (a new edge from → to would close a cycle). */
export function reaches(edges: readonly { source: string; target: string }[], start: string, goal: string): boolean {
  if (start === goal) return true;
  const out = new Map<string, string[]>();
  for (const e of edges) out.set(e.source, [...(out.get(e.source) ?? []), e.target]);
  const seen = new Set([start]);
  const stack = [start];
  while (stack.length) {
    const id = stack.pop()!;
    for (const next of out.get(id) ?? []) {
      if (next === goal) return true;
      if (!seen.has(next)) {
        seen.add(next);
        stack.push(next);
      }
    }
  }
  return false;
}

/** Why an edge cannot be drawn (null: it can), in words for the canvas. */
export function connectionProblem(doc: Pick<Doc, 'nodes' | 'edges'>, from: string, output: string, to: string): string | null {
  if (from === to) return 'A node cannot lead to itself.';
  const target = doc.nodes.find((n) => n.id === to);
  if (!target) return 'No such node.';
  if (isTrigger(target.data.def.type)) return 'Nothing leads into a trigger: it starts the workflow.';
  if (doc.edges.some((e) => e.source === from && e.target === to && (e.sourceHandle ?? MAIN) === output)) return 'These nodes are already connected that way.';
  if (reaches(doc.edges, to, from)) return 'That edge would close a loop: workflows run without cycles.';
  return null;
}

/** Adds the edge from → to on an output (its `output` field only when it is not `main`). */
export function connect(doc: Doc, from: string, output: string, to: string): LinkEdge[] {
  const def: DefEdge = output === MAIN ? { from, to } : { from, to, output };
  return [...doc.edges, linkOf(def, linkId(def, new Set(doc.edges.map((e) => e.id))))];
}

/** The doc without the given nodes and edges (and the edges of the removed nodes). */
export function removeElements(doc: Doc, nodeIds: ReadonlySet<string>, edgeIds: ReadonlySet<string>): Pick<Doc, 'nodes' | 'edges'> {
  return {
    nodes: doc.nodes.filter((n) => !nodeIds.has(n.id)),
    edges: doc.edges.filter((e) => !edgeIds.has(e.id) && !nodeIds.has(e.source) && !nodeIds.has(e.target)),
  };
}

/**
 * Copies of the given nodes (new ids, " (copy)" names, offset on the canvas, selected) and of the
 * edges between them; the originals are deselected.
 */
export function duplicate(doc: Doc, nodeIds: ReadonlySet<string>, offset = { x: 40, y: 60 }): Pick<Doc, 'nodes' | 'edges'> & { created: string[] } {
  const taken = new Set(doc.nodes.map((n) => n.id));
  const renamed = new Map<string, string>();
  const copies: StepNode[] = [];
  for (const node of doc.nodes) {
    if (!nodeIds.has(node.id)) continue;
    const id = newNodeId(node.id.replace(/_\d+$/, ''), taken);
    taken.add(id);
    renamed.set(node.id, id);
    const def = structuredClone(withoutPosition(node.data.def));
    def.id = id;
    if (def.name) def.name = `${def.name} (copy)`;
    copies.push(stepNode(def, { x: node.position.x + offset.x, y: node.position.y + offset.y }, true, true));
  }
  const taking = new Set(doc.edges.map((e) => e.id));
  const edgeCopies: LinkEdge[] = [];
  for (const edge of doc.edges) {
    const from = renamed.get(edge.source);
    const to = renamed.get(edge.target);
    if (!from || !to) continue;
    const def: DefEdge = { ...(edge.data?.def ?? { from: edge.source, to: edge.target }), from, to };
    const id = linkId(def, taking);
    taking.add(id);
    edgeCopies.push(linkOf(def, id));
  }
  return {
    nodes: [...placeAll(doc.nodes).map((n) => (n.selected ? { ...n, selected: false } : n)), ...copies],
    edges: [...doc.edges, ...edgeCopies],
    created: copies.map((c) => c.id),
  };
}

/** The node with a changed definition (name, params, retry), keeping the order of its fields. */
export function editNode(node: StepNode, change: Partial<Pick<DefNode, 'name' | 'params' | 'retry'>>): StepNode {
  let def: DefNode = { ...node.data.def };
  for (const [key, value] of Object.entries(change) as [keyof DefNode, unknown][]) {
    if (value === undefined) {
      const { [key]: _gone, ...rest } = def;
      def = rest as DefNode;
    } else {
      (def as unknown as Record<string, unknown>)[key] = value;
    }
  }
  return { ...node, ariaLabel: def.name || def.id, data: { ...node.data, def } };
}

/** The palette: node types by category (triggers first), filtered by a search over type, name and description. */
export function paletteGroups(types: readonly NodeTypeInfo[], query: string): { category: string; types: NodeTypeInfo[] }[] {
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const matches = (t: NodeTypeInfo) => {
    const text = `${t.type} ${defaultName(t.type)} ${t.category} ${t.description}`.toLowerCase();
    return words.every((w) => text.includes(w));
  };
  const groups = new Map<string, NodeTypeInfo[]>();
  for (const t of types) {
    if (!matches(t)) continue;
    groups.set(t.category, [...(groups.get(t.category) ?? []), t]);
  }
  const order = ['trigger', 'flow', 'data', 'leads', 'ai', 'content', 'messaging', 'campaigns', 'utility'];
  const rank = (c: string) => (order.includes(c) ? order.indexOf(c) : order.length);
  return [...groups.entries()].sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)).map(([category, list]) => ({ category, types: list }));
}

export const CATEGORY_LABEL: Record<string, string> = {
  trigger: 'Triggers',
  flow: 'Flow',
  data: 'Data',
  leads: 'Leads',
  ai: 'AI',
  content: 'Content',
  messaging: 'Messaging',
  campaigns: 'Campaigns',
  utility: 'Utility',
};

/** The body a save sends: the settings and the definition. */
export function saveBody(doc: Doc): { name: string; description: string | null; budgetUsd: number | null; nodes: DefNode[]; edges: DefEdge[] } {
  const def = definitionOf(doc);
  const budget = doc.meta.budgetUsd.trim();
  return {
    name: doc.meta.name.trim(),
    description: doc.meta.description.trim() || null,
    budgetUsd: budget === '' ? null : Number(budget),
    nodes: def.nodes,
    edges: def.edges,
  };
}

export function metaOf(workflow: { name: string; description?: string | null; budgetUsd?: number | null }): WorkflowMeta {
  return {
    name: workflow.name,
    description: workflow.description ?? '',
    budgetUsd: workflow.budgetUsd === null || workflow.budgetUsd === undefined ? '' : String(workflow.budgetUsd),
  };
}

/** JSON with object keys sorted: the store may hand fields back in another order. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** What a save would change, comparable: a saved workflow's and the canvas's are equal when nothing is unsaved. */
export function contentOf(body: {
  name: string;
  description: string | null;
  budgetUsd: number | null;
  nodes: readonly unknown[];
  edges: readonly unknown[];
}): string {
  return canonical([body.name, body.description, body.budgetUsd, body.nodes, body.edges]);
}

export function savedContent(workflow: {
  name: string;
  description?: string | null;
  budgetUsd?: number | null;
  nodes: readonly unknown[];
  edges: readonly unknown[];
}): string {
  return contentOf({
    name: workflow.name,
    description: workflow.description ?? null,
    budgetUsd: workflow.budgetUsd ?? null,
    nodes: workflow.nodes,
    edges: workflow.edges,
  });
}

/** The settings and definition of a workflow file (export/import): `{ name?, description?, budgetUsd?, nodes, edges? }`. */
export type WorkflowFile = { name?: string; description?: string | null; budgetUsd?: number | null; nodes: DefNode[]; edges: DefEdge[] };

export function fileOf(doc: Doc): WorkflowFile & { format: string } {
  const body = saveBody(doc);
  return { format: 'workflow/v1', name: body.name, description: body.description, budgetUsd: body.budgetUsd, nodes: body.nodes, edges: body.edges };
}

/** Reads a workflow file, naming what is wrong with it. */
export function parseWorkflowFile(text: string): { ok: true; value: WorkflowFile } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `Not a workflow file: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, error: 'Not a workflow file: it must be a JSON object with "nodes" and "edges".' };
  const record = value as Record<string, unknown>;
  if (!Array.isArray(record.nodes)) return { ok: false, error: 'Not a workflow file: "nodes" must be a list of nodes.' };
  if (record.edges !== undefined && !Array.isArray(record.edges)) return { ok: false, error: '"edges" must be a list of edges.' };
  const ids = new Set<string>();
  for (const [i, node] of record.nodes.entries()) {
    const n = node as Record<string, unknown> | null;
    if (!n || typeof n !== 'object' || typeof n.id !== 'string' || typeof n.type !== 'string')
      return { ok: false, error: `nodes[${i}] needs an "id" and a "type".` };
    if (ids.has(n.id)) return { ok: false, error: `Node id "${n.id}" is used twice.` };
    ids.add(n.id);
  }
  for (const [i, edge] of (record.edges ?? []).entries()) {
    const e = edge as Record<string, unknown> | null;
    if (!e || typeof e !== 'object' || typeof e.from !== 'string' || typeof e.to !== 'string')
      return { ok: false, error: `edges[${i}] needs a "from" and a "to".` };
  }
  return {
    ok: true,
    value: {
      name: typeof record.name === 'string' ? record.name : undefined,
      description: typeof record.description === 'string' ? record.description : null,
      budgetUsd: typeof record.budgetUsd === 'number' ? record.budgetUsd : null,
      nodes: record.nodes as DefNode[],
      edges: (record.edges ?? []) as DefEdge[],
    },
  };
}
