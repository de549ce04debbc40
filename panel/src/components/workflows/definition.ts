/**
 * A workflow definition as the editor handles it: the JSON text of `{ nodes, edges }` (CONTRACT §4),
 * read back with the place of a syntax error, and the API's 422 WORKFLOW_INVALID answer turned into
 * what the editor shows and the graph marks (the nodes and edges its `details` name).
 */
import { ApiError } from '../../api/client';

export interface DefNode {
  id: string;
  type: string;
  name?: string;
  params?: Record<string, unknown>;
  retry?: { maxAttempts: number; backoffSeconds?: number };
  position?: { x: number; y: number };
}

export interface DefEdge {
  from: string;
  to: string;
  output?: string;
}

export interface Definition {
  nodes: DefNode[];
  edges: DefEdge[];
}

/** The fields of a node and of an edge in the order people read them (the store keeps JSON keys in its own order). */
const NODE_KEYS = ['id', 'type', 'name', 'params', 'retry', 'position'];
const EDGE_KEYS = ['from', 'to', 'output'];

function ordered(value: unknown, keys: readonly string[]): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of keys) if (key in record) out[key] = record[key];
  for (const key of Object.keys(record)) if (!(key in out)) out[key] = record[key];
  return out;
}

/** The editor's text for a definition (only nodes and edges: name and budget have their own fields). */
export function definitionText(def: { nodes: readonly unknown[]; edges: readonly unknown[] }): string {
  return JSON.stringify({ nodes: def.nodes.map((n) => ordered(n, NODE_KEYS)), edges: def.edges.map((e) => ordered(e, EDGE_KEYS)) }, null, 2);
}

export type Parsed = { ok: true; value: Definition } | { ok: false; error: string };

/** Reads the editor's text: a JSON object with a `nodes` array and an optional `edges` array. */
export function parseDefinition(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: jsonError(text, error) };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, error: 'The definition must be a JSON object: { "nodes": [...], "edges": [...] }' };
  const { nodes, edges, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length)
    return {
      ok: false,
      error: `Unknown field${extra.length > 1 ? 's' : ''} ${extra.map((k) => `"${k}"`).join(', ')}: the definition has only "nodes" and "edges" (name, description and budget are the fields above)`,
    };
  if (!Array.isArray(nodes)) return { ok: false, error: '"nodes" must be an array of nodes: { "id", "type", "name"?, "params"? }' };
  if (edges !== undefined && !Array.isArray(edges)) return { ok: false, error: '"edges" must be an array of edges: { "from", "to", "output"? }' };
  for (const [i, node] of nodes.entries()) {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return { ok: false, error: `nodes[${i}] must be an object` };
  }
  for (const [i, edge] of (edges ?? []).entries()) {
    if (!edge || typeof edge !== 'object' || Array.isArray(edge)) return { ok: false, error: `edges[${i}] must be an object` };
  }
  return { ok: true, value: { nodes: nodes as DefNode[], edges: (edges ?? []) as DefEdge[] } };
}

/** A JSON syntax error with its line and column ("Invalid JSON at line 3, column 18: …"). */
export function jsonError(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  let line: number | undefined;
  let column: number | undefined;
  const position = /position (\d+)/.exec(message);
  const lineColumn = /line (\d+) column (\d+)/.exec(message);
  if (position) {
    const before = text.slice(0, Number(position[1])).split('\n');
    line = before.length;
    column = before[before.length - 1]!.length + 1;
  } else if (lineColumn) {
    line = Number(lineColumn[1]);
    column = Number(lineColumn[2]);
  }
  const reason = message
    .replace(/^JSON\.parse: /, '')
    .replace(/\s*(in JSON )?at position \d+.*$/, '')
    .replace(/\s*at line \d+ column \d+.*$/, '');
  return line === undefined ? `Invalid JSON: ${reason}` : `Invalid JSON at line ${line}, column ${column}: ${reason}`;
}

/** What the graph draws of a definition (anything not a node or an edge is skipped). */
export function graphOf(def: { nodes: readonly unknown[]; edges: readonly unknown[] }): {
  nodes: { id: string; type: string; name?: string }[];
  edges: { from: string; to: string; output: string }[];
} {
  const nodes = def.nodes
    .filter((n): n is Record<string, unknown> => Boolean(n) && typeof n === 'object' && typeof (n as { id?: unknown }).id === 'string')
    .map((n) => ({ id: n.id as string, type: typeof n.type === 'string' ? n.type : '?', name: typeof n.name === 'string' && n.name ? n.name : undefined }));
  const edges = def.edges
    .filter(
      (e): e is Record<string, unknown> =>
        Boolean(e) && typeof e === 'object' && typeof (e as { from?: unknown }).from === 'string' && typeof (e as { to?: unknown }).to === 'string',
    )
    .map((e) => ({ from: e.from as string, to: e.to as string, output: typeof e.output === 'string' && e.output ? e.output : 'main' }));
  return { nodes, edges };
}

export interface Problems {
  message: string;
  /** One line per detail the API gave. */
  lines: string[];
  nodeIds: Set<string>;
  /** `from→to` of the edges named. */
  edges: Set<string>;
  /** What is wrong, by node id (the canvas writes it on the node). */
  nodeMessages: Map<string, string>;
  /** What is wrong, by edge `from→to`. */
  edgeMessages: Map<string, string>;
  /** The param named, by node id (`url`, `fields.name`). */
  params: Map<string, string>;
}

export const edgeKey = (from: string, to: string) => `${from}→${to}`;

/**
 * What an API error says about a definition: 422 WORKFLOW_INVALID names nodes (`nodeId`), edges
 * (`edge: { from, to }`), a cycle, a param; 400 VALIDATION_ERROR names fields such as `body.nodes.2.id`,
 * mapped back to the node at that index of the definition that was sent.
 */
export function problemsOf(error: unknown, sent?: Definition): Problems | null {
  if (!(error instanceof ApiError) || (error.status !== 422 && error.status !== 400)) return null;
  const details = (error.body as { details?: unknown }).details;
  const list = Array.isArray(details)
    ? details.filter((d): d is Record<string, unknown> => Boolean(d) && typeof d === 'object')
    : details && typeof details === 'object'
      ? [details as Record<string, unknown>]
      : [];
  const problems: Problems = {
    message: error.message,
    lines: [],
    nodeIds: new Set(),
    edges: new Set(),
    nodeMessages: new Map(),
    edgeMessages: new Map(),
    params: new Map(),
  };
  for (const raw of list) {
    // CONTRACT §4: `edge: { from, to, output? }`; earlier answers put `from`/`to` on the detail itself.
    const edge = raw.edge && typeof raw.edge === 'object' ? (raw.edge as Record<string, unknown>) : null;
    const d: Record<string, unknown> = edge ? { ...raw, from: edge.from, to: edge.to, output: edge.output ?? raw.output } : raw;
    const said = typeof d.message === 'string' ? d.message : error.message;
    const parts: string[] = [];
    if (typeof d.nodeId === 'string') {
      problems.nodeIds.add(d.nodeId);
      if (!problems.nodeMessages.has(d.nodeId)) problems.nodeMessages.set(d.nodeId, said);
      if (typeof d.param === 'string') problems.params.set(d.nodeId, d.param);
      parts.push(`Node "${d.nodeId}"`);
    }
    if (typeof d.from === 'string' && typeof d.to === 'string') {
      problems.edgeMessages.set(edgeKey(d.from, d.to), said);
      problems.edges.add(edgeKey(d.from, d.to));
      parts.push(`Edge ${d.from} → ${d.to}`);
    } else if (typeof d.from === 'string') {
      problems.nodeIds.add(d.from);
      if (!problems.nodeMessages.has(d.from)) problems.nodeMessages.set(d.from, said);
      parts.push(`Edges from "${d.from}"${typeof d.output === 'string' ? ` (output "${d.output}")` : ''}`);
    }
    if (Array.isArray(d.cycle)) {
      const cycle = d.cycle.filter((c): c is string => typeof c === 'string');
      cycle.forEach((id, i) => {
        problems.nodeIds.add(id);
        if (!problems.nodeMessages.has(id)) problems.nodeMessages.set(id, said);
        if (i > 0) {
          problems.edges.add(edgeKey(cycle[i - 1]!, id));
          problems.edgeMessages.set(edgeKey(cycle[i - 1]!, id), 'part of a cycle');
        }
      });
      parts.push(`Cycle ${cycle.join(' → ')}`);
    }
    if (typeof d.field === 'string') {
      const field = d.field.replace(/^body\./, '');
      const at = /^nodes\.(\d+)/.exec(field);
      const node = at && sent ? sent.nodes[Number(at[1])] : undefined;
      if (node && typeof node.id === 'string') {
        problems.nodeIds.add(node.id);
        if (!problems.nodeMessages.has(node.id))
          problems.nodeMessages.set(node.id, `${field.replace(/^nodes\.\d+\.?/, '') || 'node'} ${typeof d.message === 'string' ? d.message : 'is not valid'}`);
      }
      const edgeAt = /^edges\.(\d+)/.exec(field);
      const sentEdge = edgeAt && sent ? sent.edges[Number(edgeAt[1])] : undefined;
      if (sentEdge && typeof sentEdge.from === 'string' && typeof sentEdge.to === 'string') problems.edges.add(edgeKey(sentEdge.from, sentEdge.to));
      parts.push(node && typeof node.id === 'string' ? `${field} (node "${node.id}")` : field);
    }
    if (typeof d.param === 'string') parts.push(`param "${d.param}"`);
    const message = typeof d.message === 'string' ? d.message : undefined;
    if (parts.length || message) problems.lines.push(`${parts.join(', ')}${parts.length && message ? ': ' : ''}${message ?? ''}`);
  }
  return problems;
}
