import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ApiError } from '../../api/client';
import {
  canonical,
  connect,
  connectionProblem,
  contentOf,
  defaultName,
  definitionOf,
  docOf,
  duplicate,
  editNode,
  fileOf,
  newNodeId,
  paletteGroups,
  parseWorkflowFile,
  placeAll,
  relayout,
  removeElements,
  saveBody,
  savedContent,
  type Doc,
  type NodeTypeInfo,
} from './canvas-model';
import type { DefEdge, DefNode, Definition } from './definition';
import { problemsOf } from './definition';
import { historyReducer, startHistory, type HistoryAction } from './history';
import { clearDraft, draftKey, readDraft, writeDraft } from './drafts';
import nodeTypes from './fixtures/node-types.json';

const meta = { name: 'Hot leads', description: '', budgetUsd: '' };

/** A workflow as the store may hand it back: fields in any order, some the editor does not know. */
const qualify: Definition = {
  nodes: [
    { id: 'trigger', type: 'trigger.event', name: 'New lead', params: { events: ['lead.created'] } },
    {
      params: { type: 'LEAD_QUALIFIER', task: 'Qualify {{ payload.lead.name }}' },
      type: 'ai.agent',
      id: 'qualify',
      retry: { maxAttempts: 3, backoffSeconds: 30 },
    },
    { id: 'good', type: 'flow.if', name: 'Score ≥ 70?', params: { condition: '$number(score) >= 70' }, note: 'kept as it is' } as DefNode,
    { id: 'qualified', type: 'leads.update', params: { leadId: '{{ $input.payload.lead.id }}', status: 'QUALIFIED' } },
    { id: 'unqualified', type: 'leads.update', name: '', params: { status: 'UNQUALIFIED' } },
  ],
  edges: [
    { from: 'trigger', to: 'qualify' },
    { from: 'qualify', to: 'good', output: 'main' },
    { output: 'true', to: 'qualified', from: 'good' },
    { from: 'good', to: 'unqualified', output: 'false' },
  ],
};

const placed: Definition = {
  nodes: [
    { id: 'start', type: 'trigger.manual', position: { x: 0.5, y: -12.25 } },
    { position: { y: 40, x: 320 }, id: 'set', type: 'data.set', params: { fields: { a: 1, nested: { b: [1, '{{ x }}'] } } } },
  ],
  edges: [{ from: 'start', to: 'set' }],
};

const same = (a: unknown, b: unknown) => expect(JSON.stringify(a)).toBe(JSON.stringify(b));

describe('graph ↔ definition', () => {
  it('reads a definition and writes it back unchanged: every field, in its order, nothing added', () => {
    for (const def of [qualify, placed, { nodes: [], edges: [] }]) {
      const doc = docOf(structuredClone(def), meta);
      same(definitionOf(doc), def);
      expect(definitionOf(doc)).toStrictEqual(def);
    }
  });

  it('round-trips any definition (generated: nodes with and without positions, names, params, retries, unknown fields; edges on branches)', () => {
    const id = fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/);
    const json = fc.jsonValue({ maxDepth: 2 });
    const node = fc.record(
      {
        type: fc.constantFrom('trigger.manual', 'flow.if', 'data.set', 'utility.webhookOut', 'flow.approval'),
        name: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
        params: fc.option(fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), json, { maxKeys: 3 }), { nil: undefined }),
        retry: fc.option(fc.record({ maxAttempts: fc.integer({ min: 1, max: 10 }), backoffSeconds: fc.integer({ min: 0, max: 60 }) }), { nil: undefined }),
        position: fc.option(fc.record({ x: fc.double({ min: -1e5, max: 1e5, noNaN: true }), y: fc.double({ min: -1e5, max: 1e5, noNaN: true }) }), {
          nil: undefined,
        }),
        extra: fc.option(json, { nil: undefined }),
      },
      { requiredKeys: ['type'] },
    );
    const definition = fc.uniqueArray(id, { minLength: 1, maxLength: 12 }).chain((ids) =>
      fc.record({
        nodes: fc.tuple(...ids.map((i) => node.map((n) => ({ id: i, ...n }) as DefNode))),
        edges: fc
          .array(
            fc.record({
              a: fc.nat(ids.length - 1),
              b: fc.nat(ids.length - 1),
              output: fc.option(fc.constantFrom('main', 'true', 'false', 'approved'), { nil: undefined }),
            }),
            { maxLength: 20 },
          )
          .map((list) => list.map(({ a, b, output }) => ({ from: ids[a]!, to: ids[b]!, ...(output ? { output } : {}) }) as DefEdge)),
      }),
    );
    fc.assert(
      fc.property(definition, (def) => {
        const doc = docOf(structuredClone(def), meta);
        same(definitionOf(doc), def);
      }),
      { numRuns: 200 },
    );
  });

  it('draws nodes without positions in layers top to bottom, and saves no position for them until the author places one', () => {
    const doc = docOf(qualify, meta);
    const at = Object.fromEntries(doc.nodes.map((n) => [n.id, n.position]));
    expect(at.trigger!.y).toBeLessThan(at.qualify!.y);
    expect(at.qualify!.y).toBeLessThan(at.good!.y);
    expect(at.qualified!.y).toBe(at.unqualified!.y);
    expect(Math.abs(at.qualified!.x - at.unqualified!.x)).toBeGreaterThanOrEqual(224);
    expect(definitionOf(doc).nodes.some((n) => 'position' in n)).toBe(false);

    // One node moved: the layout becomes the author's, every node keeps where it is.
    const moved = { ...doc, nodes: placeAll(doc.nodes.map((n) => (n.id === 'good' ? { ...n, position: { x: 1000.4, y: 77.6 } } : n))) };
    const saved = definitionOf(moved);
    expect(saved.nodes.find((n) => n.id === 'good')!.position).toEqual({ x: 1000, y: 78 });
    expect(saved.nodes.find((n) => n.id === 'trigger')!.position).toEqual({ x: Math.round(at.trigger!.x), y: Math.round(at.trigger!.y) });
    // And reads back where it was put.
    expect(docOf(saved, meta).nodes.find((n) => n.id === 'good')!.position).toEqual({ x: 1000, y: 78 });
  });

  it('keeps a read position exactly while the node is not moved, and replaces it in place once it is', () => {
    const doc = docOf(placed, meta);
    const moved = { ...doc, nodes: doc.nodes.map((n) => (n.id === 'set' ? { ...n, position: { x: 400, y: 40 } } : n)) };
    same(definitionOf(moved).nodes[1], { position: { x: 400, y: 40 }, id: 'set', type: 'data.set', params: placed.nodes[1]!.params });
    same(definitionOf(moved).nodes[0], placed.nodes[0]);
  });

  it('edits a node without disturbing its other fields; an emptied field is removed', () => {
    const doc = docOf(qualify, meta);
    const good = doc.nodes.find((n) => n.id === 'good')!;
    const renamed = editNode(good, { name: 'Hot?', params: { condition: 'score > 80' } });
    same(renamed.data.def, { id: 'good', type: 'flow.if', name: 'Hot?', params: { condition: 'score > 80' }, note: 'kept as it is' });
    expect(renamed.ariaLabel).toBe('Hot?');
    const unnamed = editNode(renamed, { name: undefined, retry: { maxAttempts: 2 } });
    same(unnamed.data.def, { id: 'good', type: 'flow.if', params: { condition: 'score > 80' }, note: 'kept as it is', retry: { maxAttempts: 2 } });
    expect(unnamed.ariaLabel).toBe('good');
  });

  it('connects outputs to inputs: a branch is named, main is left out; refuses loops, repeats, edges into a trigger', () => {
    let doc: Doc = docOf(
      {
        nodes: [
          { id: 't', type: 'trigger.manual' },
          { id: 'if', type: 'flow.if' },
          { id: 'a', type: 'data.set' },
          { id: 'b', type: 'data.set' },
        ],
        edges: [],
      },
      meta,
    );
    doc = { ...doc, edges: connect(doc, 't', 'main', 'if') };
    doc = { ...doc, edges: connect(doc, 'if', 'true', 'a') };
    doc = { ...doc, edges: connect(doc, 'if', 'false', 'b') };
    same(definitionOf(doc).edges, [
      { from: 't', to: 'if' },
      { from: 'if', to: 'a', output: 'true' },
      { from: 'if', to: 'b', output: 'false' },
    ]);
    expect(doc.edges.map((e) => e.sourceHandle)).toEqual(['main', 'true', 'false']);
    expect(connectionProblem(doc, 'a', 'main', 'a')).toMatch(/itself/);
    expect(connectionProblem(doc, 'a', 'main', 't')).toMatch(/trigger/);
    expect(connectionProblem(doc, 'if', 'true', 'a')).toMatch(/already/);
    expect(connectionProblem(doc, 'a', 'main', 'if')).toMatch(/loop/);
    expect(connectionProblem(doc, 'if', 'false', 'a')).toBeNull();
    expect(connectionProblem(doc, 'a', 'main', 'b')).toBeNull();
  });

  it('deletes nodes with their edges, and single edges', () => {
    const doc = docOf(qualify, meta);
    const without = removeElements(doc, new Set(['good']), new Set());
    expect(without.nodes.map((n) => n.id)).toEqual(['trigger', 'qualify', 'qualified', 'unqualified']);
    expect(without.edges.map((e) => `${e.source}>${e.target}`)).toEqual(['trigger>qualify']);
    const oneEdge = removeElements(doc, new Set(), new Set([doc.edges[0]!.id]));
    expect(oneEdge.edges).toHaveLength(3);
  });

  it('duplicates steps with new ids and names, the edges between them, and selects the copies', () => {
    const doc = docOf(qualify, meta);
    const copy = duplicate(doc, new Set(['good', 'qualified']));
    expect(copy.created).toEqual(['good_2', 'qualified_2']);
    const defs = definitionOf(copy);
    expect(defs.nodes.find((n) => n.id === 'good_2')).toMatchObject({
      type: 'flow.if',
      name: 'Score ≥ 70? (copy)',
      params: { condition: '$number(score) >= 70' },
    });
    expect(defs.edges.filter((e) => e.from.endsWith('_2'))).toEqual([{ from: 'good_2', to: 'qualified_2', output: 'true' }]);
    expect(copy.nodes.filter((n) => n.selected).map((n) => n.id)).toEqual(['good_2', 'qualified_2']);
    // Copies of copies get fresh ids too.
    expect(duplicate({ ...doc, ...copy }, new Set(['good_2'])).created).toEqual(['good_3']);
  });

  it('names new nodes from their type, uniquely', () => {
    expect(newNodeId('utility.webhookOut', new Set())).toBe('webhookOut');
    expect(newNodeId('utility.webhookOut', new Set(['webhookOut', 'webhookOut_2']))).toBe('webhookOut_3');
    expect(defaultName('utility.webhookOut')).toBe('Webhook out');
    expect(defaultName('trigger.manual')).toBe('Manual trigger');
    expect(defaultName('flow.if')).toBe('If');
  });

  it('lays everything out again on request, all placed', () => {
    const doc = docOf(placed, meta);
    const nodes = relayout(doc);
    expect(nodes.every((n) => n.data.placed)).toBe(true);
    expect(nodes[0]!.position.y).toBeLessThan(nodes[1]!.position.y);
  });
});

describe('what is unsaved', () => {
  it('compares settings and definition whatever order the store gives the fields in', () => {
    const doc = docOf(qualify, { name: 'Q', description: 'd', budgetUsd: '2.50' });
    const stored = { name: 'Q', description: 'd', budgetUsd: 2.5, nodes: JSON.parse(canonical(qualify.nodes)) as unknown[], edges: qualify.edges };
    expect(contentOf(saveBody(doc))).toBe(savedContent(stored));
    expect(contentOf(saveBody({ ...doc, meta: { ...doc.meta, budgetUsd: '3' } }))).not.toBe(savedContent(stored));
    expect(saveBody({ ...doc, meta: { name: ' Q ', description: '  ', budgetUsd: '' } })).toMatchObject({ name: 'Q', description: null, budgetUsd: null });
  });
});

describe('export and import', () => {
  it('writes a file that reads back as the same workflow', () => {
    const doc = docOf(qualify, { name: 'Q', description: 'About Q', budgetUsd: '1' });
    const text = JSON.stringify(fileOf(doc));
    const read = parseWorkflowFile(text);
    expect(read).toEqual({ ok: true, value: { name: 'Q', description: 'About Q', budgetUsd: 1, nodes: qualify.nodes, edges: qualify.edges } });
  });

  it('names what is wrong with a file that is not a workflow', () => {
    expect(parseWorkflowFile('{')).toMatchObject({ ok: false, error: expect.stringMatching(/^Not a workflow file/) });
    expect(parseWorkflowFile('[]')).toMatchObject({ ok: false });
    expect(parseWorkflowFile('{"nodes": [{"id": "a"}]}')).toMatchObject({ ok: false, error: 'nodes[0] needs an "id" and a "type".' });
    expect(parseWorkflowFile('{"nodes": [{"id": "a", "type": "x"}, {"id": "a", "type": "y"}]}')).toMatchObject({
      ok: false,
      error: 'Node id "a" is used twice.',
    });
    expect(parseWorkflowFile('{"nodes": [], "edges": [{"from": "a"}]}')).toMatchObject({ ok: false, error: 'edges[0] needs a "from" and a "to".' });
  });
});

describe('the palette', () => {
  const types = nodeTypes as NodeTypeInfo[];
  it('groups every node type by category, triggers first, each with its description', () => {
    const groups = paletteGroups(types, '');
    expect(groups[0]!.category).toBe('trigger');
    expect(groups.flatMap((g) => g.types).length).toBe(types.length);
    for (const group of groups) expect(new Set(group.types.map((t) => t.category))).toEqual(new Set([group.category]));
  });

  it('finds types by name, type or words of their description', () => {
    expect(paletteGroups(types, 'webhook out').flatMap((g) => g.types.map((t) => t.type))).toContain('utility.webhookOut');
    expect(paletteGroups(types, 'approve').flatMap((g) => g.types.map((t) => t.type))).toContain('flow.approval');
    expect(paletteGroups(types, 'IF').flatMap((g) => g.types.map((t) => t.type))).toContain('flow.if');
    expect(paletteGroups(types, 'no such thing at all')).toEqual([]);
  });
});

describe('undo and redo', () => {
  const base = docOf(qualify, meta);
  const rename = (name: string): HistoryAction => ({ kind: 'commit', key: 'meta:name', at: 0, change: (d) => ({ ...d, meta: { ...d.meta, name } }) });

  it('undoes and redoes each step, and a new step drops what could be redone', () => {
    let h = startHistory(base);
    h = historyReducer(h, { kind: 'commit', change: (d) => ({ ...d, ...removeElements(d, new Set(['good']), new Set()) }) });
    h = historyReducer(h, { kind: 'commit', change: (d) => ({ ...d, meta: { ...d.meta, name: 'Renamed' } }) });
    expect(h.doc.meta.name).toBe('Renamed');
    h = historyReducer(h, { kind: 'undo' });
    expect(h.doc.meta.name).toBe('Hot leads');
    expect(h.doc.nodes).toHaveLength(4);
    h = historyReducer(h, { kind: 'undo' });
    expect(h.doc.nodes).toHaveLength(5);
    expect(historyReducer(h, { kind: 'undo' })).toBe(h);
    h = historyReducer(h, { kind: 'redo' });
    expect(h.doc.nodes).toHaveLength(4);
    h = historyReducer(h, { kind: 'commit', change: (d) => ({ ...d, meta: { ...d.meta, name: 'Other' } }) });
    expect(h.future).toEqual([]);
    expect(historyReducer(h, { kind: 'redo' })).toBe(h);
  });

  it('makes one step of a burst of typing in one field', () => {
    let h = startHistory(base);
    for (const name of ['H', 'Ho', 'Hot']) h = historyReducer(h, rename(name));
    expect(h.past).toHaveLength(1);
    h = historyReducer(h, { kind: 'undo' });
    expect(h.doc.meta.name).toBe('Hot leads');
  });

  it('makes one step of a drag, none of a press without a move, and none of selecting', () => {
    let h = startHistory(base);
    h = historyReducer(h, { kind: 'transient', change: (d) => ({ ...d, nodes: d.nodes.map((n) => (n.id === 'good' ? { ...n, selected: true } : n)) }) });
    expect(h.past).toHaveLength(0);
    h = historyReducer(h, { kind: 'begin' });
    for (const x of [10, 20, 30])
      h = historyReducer(h, {
        kind: 'transient',
        change: (d) => ({ ...d, nodes: d.nodes.map((n) => (n.id === 'good' ? { ...n, position: { x, y: 0 } } : n)) }),
      });
    expect(h.stable.nodes.find((n) => n.id === 'good')!.position).not.toEqual({ x: 30, y: 0 });
    h = historyReducer(h, { kind: 'end', change: (d) => ({ ...d, nodes: placeAll(d.nodes) }) });
    expect(h.past).toHaveLength(1);
    expect(h.stable.nodes.find((n) => n.id === 'good')!.position).toEqual({ x: 30, y: 0 });
    h = historyReducer(h, { kind: 'begin' });
    h = historyReducer(h, { kind: 'end', change: (d) => ({ ...d, nodes: placeAll(d.nodes) }) });
    expect(h.past).toHaveLength(1);
    // Undo puts the node back, and keeps it selected.
    h = historyReducer(h, { kind: 'undo' });
    const good = h.doc.nodes.find((n) => n.id === 'good')!;
    expect(good.position).toEqual(base.nodes.find((n) => n.id === 'good')!.position);
    expect(good.selected).toBe(true);
  });
});

describe('drafts in this browser', () => {
  it('keeps a draft per workflow until cleared, and ignores what is not one', () => {
    const key = draftKey('org1', 'wf1');
    expect(key).not.toBe(draftKey('org1', null));
    writeDraft(key, { savedAt: '2030-01-01T00:00:00.000Z', baseVersion: 3, meta, nodes: qualify.nodes, edges: qualify.edges });
    expect(readDraft(key)).toMatchObject({ baseVersion: 3, meta, nodes: qualify.nodes });
    expect(readDraft(draftKey('org1', 'wf2'))).toBeNull();
    clearDraft(key);
    expect(readDraft(key)).toBeNull();
    localStorage.setItem(key, '{"nodes": "no"}');
    expect(readDraft(key)).toBeNull();
  });
});

describe('problems the API names (CONTRACT §4 details)', () => {
  const invalid = (message: string, details?: unknown) =>
    new ApiError(422, { statusCode: 422, error: 'Unprocessable Entity', code: 'WORKFLOW_INVALID', message, details: details as never });

  it('puts the message on the node, the param named, and on the edge named', () => {
    const params = problemsOf(
      invalid('Node "out" (utility.webhookOut) has invalid params: url is required', { nodeId: 'out', param: 'url', message: 'url is required' }),
    )!;
    expect(params.nodeMessages.get('out')).toBe('url is required');
    expect(params.params.get('out')).toBe('url');
    const dangling = problemsOf(invalid('An edge points to missing node "nope"', { edge: { from: 'a', to: 'nope' } }))!;
    expect([...dangling.edges]).toEqual(['a→nope']);
    expect(dangling.edgeMessages.get('a→nope')).toBe('An edge points to missing node "nope"');
    const output = problemsOf(invalid('Node "a" (data.set) has no output "true"', { nodeId: 'a', edge: { from: 'a', to: 'b', output: 'true' } }))!;
    expect([...output.nodeIds]).toEqual(['a']);
    expect([...output.edges]).toEqual(['a→b']);
  });
});
