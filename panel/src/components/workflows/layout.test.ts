import { describe, expect, it } from 'vitest';
import { crossings, layeredLayout } from './layout';

const nodes = (...ids: string[]) => ids.map((id) => ({ id }));
const edge = (from: string, to: string) => ({ from, to });

describe('layeredLayout', () => {
  it('puts a chain in consecutive columns on one row', () => {
    const placed = layeredLayout(nodes('trigger', 'a', 'b'), [edge('trigger', 'a'), edge('a', 'b')], { layerGap: 100, nodeGap: 50 });
    expect([...placed.entries()].map(([id, p]) => [id, p.layer, p.x, p.y])).toEqual([
      ['trigger', 0, 0, 0],
      ['a', 1, 100, 0],
      ['b', 2, 200, 0],
    ]);
    const down = layeredLayout(nodes('trigger', 'a'), [edge('trigger', 'a')], { direction: 'TB', layerGap: 80 });
    expect([...down.values()].map((p) => [p.x, p.y])).toEqual([
      [0, 0],
      [0, 80],
    ]);
  });

  it('places a node after the longest chain leading to it', () => {
    const placed = layeredLayout(nodes('t', 'a', 'b', 'join'), [edge('t', 'a'), edge('a', 'b'), edge('b', 'join'), edge('t', 'join')]);
    expect(placed.get('join')!.layer).toBe(3);
  });

  it('spreads branches symmetrically around the row of their source', () => {
    const placed = layeredLayout(nodes('t', 'if', 'yes', 'no'), [edge('t', 'if'), edge('if', 'yes'), edge('if', 'no')], { nodeGap: 100 });
    expect(placed.get('yes')).toMatchObject({ layer: 2, y: -50 });
    expect(placed.get('no')).toMatchObject({ layer: 2, y: 50 });
    expect(placed.get('if')!.y).toBe(0);
    const down = layeredLayout(nodes('t', 'if', 'yes', 'no'), [edge('t', 'if'), edge('if', 'yes'), edge('if', 'no')], { direction: 'TB', nodeGap: 200 });
    expect([down.get('yes')!.x, down.get('no')!.x, down.get('if')!.x]).toEqual([-100, 100, 0]);
  });

  it('orders a column to remove the crossings the definition order would draw', () => {
    // In definition order d is above c, but a (top) leads to c and b (bottom) to d.
    const list = nodes('a', 'b', 'd', 'c');
    const edges = [edge('a', 'c'), edge('b', 'd')];
    const placed = layeredLayout(list, edges);
    expect(crossings(placed, edges)).toBe(0);
    expect(placed.get('c')!.order).toBeLessThan(placed.get('d')!.order);
  });

  it('keeps crossings low on a layered graph with joins', () => {
    const list = nodes('t', 'x1', 'x2', 'x3', 'y3', 'y1', 'y2');
    const edges = [edge('t', 'x1'), edge('t', 'x2'), edge('t', 'x3'), edge('x1', 'y1'), edge('x2', 'y2'), edge('x3', 'y3')];
    expect(crossings(layeredLayout(list, edges), edges)).toBe(0);
  });

  it('draws a definition being edited: a cycle is broken, a dangling edge and a self-loop ignored', () => {
    const placed = layeredLayout(nodes('t', 'a', 'b'), [edge('t', 'a'), edge('a', 'b'), edge('b', 'a'), edge('a', 'missing'), edge('b', 'b')]);
    expect(placed.size).toBe(3);
    expect([placed.get('t')!.layer, placed.get('a')!.layer, placed.get('b')!.layer]).toEqual([0, 1, 2]);
  });

  it('places nodes without edges, and duplicate ids once', () => {
    const placed = layeredLayout(nodes('a', 'b', 'a'), []);
    expect(placed.size).toBe(2);
    expect(placed.get('a')!.y).not.toBe(placed.get('b')!.y);
  });

  it('lays out a large graph quickly', () => {
    const list = Array.from({ length: 500 }, (_, i) => ({ id: `n${i}` }));
    const edges = list.slice(1).map((n, i) => edge(`n${Math.floor(i / 3)}`, n.id));
    const started = performance.now();
    const placed = layeredLayout(list, edges);
    expect(placed.size).toBe(500);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
