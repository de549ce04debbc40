/**
 * A layered ("Sugiyama"-style) layout of a workflow graph, computed from its edges alone, so a
 * definition without `position`s still draws readably: each node one layer after the longest chain
 * of nodes that lead to it (layers left to right, or top to bottom), nodes within a layer ordered by
 * the average place of their neighbours (a few sweeps both ways) to keep edges from crossing.
 *
 * It draws what it is given, valid or not (a definition being edited): edges to missing nodes are
 * left out and a cycle is broken at the edge that closes it.
 */
export interface LayoutNode {
  id: string;
}

export interface LayoutEdge {
  from: string;
  to: string;
}

export interface Placement {
  x: number;
  y: number;
  /** Layer: 0 for nodes nothing leads to. */
  layer: number;
  /** Place within the layer (from the top, or from the left). */
  order: number;
}

export interface LayoutOptions {
  /** Layers as columns left to right (LR, the default) or as rows top to bottom (TB). */
  direction?: 'LR' | 'TB';
  /** Distance between layers. */
  layerGap?: number;
  /** Distance between neighbours within a layer. */
  nodeGap?: number;
  /** Ordering sweeps (each one down and one up). */
  sweeps?: number;
}

export function layeredLayout(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[], options: LayoutOptions = {}): Map<string, Placement> {
  const { direction = 'LR', sweeps = 4 } = options;
  const layerGap = options.layerGap ?? (direction === 'LR' ? 260 : 100);
  const nodeGap = options.nodeGap ?? (direction === 'LR' ? 100 : 240);
  const ids = [...new Set(nodes.map((n) => n.id))];
  const index = new Map(ids.map((id, i) => [id, i]));
  const out = new Map<string, string[]>(ids.map((id) => [id, []]));
  const seen = new Set<string>();
  for (const edge of edges) {
    const key = `${edge.from}\u0000${edge.to}`;
    if (!index.has(edge.from) || !index.has(edge.to) || edge.from === edge.to || seen.has(key)) continue;
    seen.add(key);
    out.get(edge.from)!.push(edge.to);
  }

  // Break cycles: a depth-first walk (in the definition's order) drops the edges that lead back.
  const kept = new Map<string, string[]>(ids.map((id) => [id, []]));
  const state = new Map<string, 'open' | 'done'>();
  for (const root of ids) {
    if (state.has(root)) continue;
    const stack: { id: string; next: number }[] = [{ id: root, next: 0 }];
    state.set(root, 'open');
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const targets = out.get(top.id)!;
      if (top.next >= targets.length) {
        state.set(top.id, 'done');
        stack.pop();
        continue;
      }
      const to = targets[top.next++]!;
      const s = state.get(to);
      if (s === 'open') continue; // back edge: closes a cycle
      kept.get(top.id)!.push(to);
      if (!s) {
        state.set(to, 'open');
        stack.push({ id: to, next: 0 });
      }
    }
  }

  // Layers by longest path from the sources (Kahn's order over the acyclic edges).
  const incoming = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const [from, targets] of kept) for (const to of targets) incoming.get(to)!.push(from);
  const indegree = new Map(ids.map((id) => [id, incoming.get(id)!.length]));
  const layer = new Map<string, number>();
  const queue = ids.filter((id) => indegree.get(id) === 0);
  for (const id of queue) layer.set(id, 0);
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    for (const to of kept.get(id)!) {
      layer.set(to, Math.max(layer.get(to) ?? 0, layer.get(id)! + 1));
      indegree.set(to, indegree.get(to)! - 1);
      if (indegree.get(to) === 0) queue.push(to);
    }
  }

  const columns: string[][] = [];
  for (const id of ids) {
    const l = layer.get(id) ?? 0;
    (columns[l] ??= []).push(id);
  }
  for (let l = 0; l < columns.length; l++) columns[l] ??= [];

  // Order within columns: barycenter sweeps, down (by predecessors) then up (by successors).
  const position = new Map<string, number>();
  const renumber = (column: string[]) => column.forEach((id, i) => position.set(id, i));
  columns.forEach(renumber);
  const reorder = (column: string[], neighbours: (id: string) => string[]) => {
    const keyed = column.map((id, i) => {
      const places = neighbours(id)
        .map((n) => position.get(n)!)
        .filter((p) => p !== undefined);
      return { id, key: places.length ? places.reduce((a, b) => a + b, 0) / places.length : i, i };
    });
    keyed.sort((a, b) => a.key - b.key || a.i - b.i);
    column.splice(0, column.length, ...keyed.map((k) => k.id));
    renumber(column);
  };
  for (let s = 0; s < sweeps; s++) {
    for (let l = 1; l < columns.length; l++) reorder(columns[l]!, (id) => incoming.get(id)!);
    for (let l = columns.length - 2; l >= 0; l--) reorder(columns[l]!, (id) => kept.get(id)!);
  }

  const placements = new Map<string, Placement>();
  columns.forEach((column, l) => {
    column.forEach((id, order) => {
      const along = l * layerGap;
      const across = (order - (column.length - 1) / 2) * nodeGap;
      placements.set(id, { layer: l, order, x: direction === 'LR' ? along : across, y: direction === 'LR' ? across : along });
    });
  });
  return placements;
}

/** How many pairs of edges between adjacent columns cross (what the ordering tries to keep low). */
export function crossings(placements: Map<string, Placement>, edges: readonly LayoutEdge[]): number {
  const spans = edges
    .map((e) => ({ a: placements.get(e.from), b: placements.get(e.to) }))
    .filter((s): s is { a: Placement; b: Placement } => Boolean(s.a && s.b) && s.b!.layer === s.a!.layer + 1);
  let count = 0;
  for (let i = 0; i < spans.length; i++) {
    for (let j = i + 1; j < spans.length; j++) {
      const p = spans[i]!;
      const q = spans[j]!;
      if (p.a.layer !== q.a.layer) continue;
      if ((p.a.order - q.a.order) * (p.b.order - q.b.order) < 0) count++;
    }
  }
  return count;
}
