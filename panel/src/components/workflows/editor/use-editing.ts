/**
 * Editing the canvas: the changes React Flow reports, connecting, adding, deleting and duplicating
 * steps, editing a step or the workflow's settings, tidying up, and the problems the API named (a
 * step's problem goes when the step is edited).
 */
import { useCallback, useEffect, useMemo, useState, type Dispatch, type SetStateAction } from 'react';
import { applyEdgeChanges, applyNodeChanges, useReactFlow, type Connection, type EdgeChange, type NodeChange } from '@xyflow/react';
import {
  connect,
  connectionProblem,
  defaultName,
  duplicate,
  editNode,
  isTrigger,
  LAYOUT,
  MAIN,
  newNodeId,
  outputsOf,
  placeAll,
  relayout,
  removeElements,
  stepNode,
  type LinkEdge,
  type NodeTypeInfo,
  type StepNode,
  type WorkflowMeta,
} from '../canvas-model';
import type { DisplayStore } from '../canvas';
import type { Problems } from '../definition';
import type { NodeEdit } from '../inspector';
import type { EditorDoc } from './doc';

/** The problems the API named, marked on the canvas. */
export function useProblems(display: DisplayStore) {
  const [problems, setProblems] = useState<Problems | null>(null);
  useEffect(() => {
    display.setProblems(problems?.nodeMessages ?? new Map(), problems?.edgeMessages ?? new Map());
  }, [display, problems]);
  return [problems, setProblems] as const;
}

export function useEditing({
  editor,
  nodeTypes,
  display,
  readOnly,
  setProblems,
  setNotice,
}: {
  editor: EditorDoc;
  nodeTypes: NodeTypeInfo[];
  display: DisplayStore;
  readOnly: boolean;
  setProblems: Dispatch<SetStateAction<Problems | null>>;
  setNotice: (notice: string | null) => void;
}) {
  const { dispatch, doc, docRef, commit } = editor;
  const flow = useReactFlow<StepNode, LinkEdge>();
  const types = useMemo(() => new Map(nodeTypes.map((t) => [t.type, t])), [nodeTypes]);
  const selectedNodes = useMemo(() => doc.nodes.filter((n) => n.selected), [doc.nodes]);
  const selectedEdges = useMemo(() => doc.edges.filter((e) => e.selected), [doc.edges]);

  const onNodesChange = useCallback(
    (changes: NodeChange<StepNode>[]) => {
      // Keyboard moves (arrow keys on a selected step) are steps of their own; the rest is the canvas's.
      const moves = changes.filter((c) => c.type === 'position' && !c.dragging && c.position);
      const rest = changes.filter((c) => c.type !== 'remove' && !(c.type === 'position' && !c.dragging && c.position));
      if (rest.length) dispatch({ kind: 'transient', change: (d) => ({ ...d, nodes: applyNodeChanges(rest, d.nodes) }) });
      if (moves.length) dispatch({ kind: 'commit', key: 'keyboard-move', change: (d) => ({ ...d, nodes: placeAll(applyNodeChanges(moves, d.nodes)) }) });
    },
    [dispatch],
  );
  const onEdgesChange = useCallback(
    (changes: EdgeChange<LinkEdge>[]) => {
      const rest = changes.filter((c) => c.type !== 'remove');
      if (rest.length) dispatch({ kind: 'transient', change: (d) => ({ ...d, edges: applyEdgeChanges(rest, d.edges) }) });
    },
    [dispatch],
  );
  const onDragStart = useCallback(() => dispatch({ kind: 'begin' }), [dispatch]);
  const onDragStop = useCallback(() => dispatch({ kind: 'end', change: (d) => ({ ...d, nodes: placeAll(d.nodes) }) }), [dispatch]);

  const isValidConnection = useCallback(
    (c: Connection | LinkEdge) => connectionProblem(docRef.current, c.source, c.sourceHandle ?? MAIN, c.target) === null,
    [docRef],
  );
  const onConnect = useCallback(
    (c: Connection) => {
      const problem = connectionProblem(docRef.current, c.source, c.sourceHandle ?? MAIN, c.target);
      if (problem) {
        setNotice(problem);
        return;
      }
      setNotice(null);
      commit((d) => ({ ...d, edges: connect(d, c.source, c.sourceHandle ?? MAIN, c.target) }));
    },
    [commit, setNotice, docRef],
  );

  const addNode = useCallback(
    (type: string, at?: { x: number; y: number }) => {
      if (readOnly) return;
      const d = docRef.current;
      const id = newNodeId(type, new Set(d.nodes.map((n) => n.id)));
      const anchor = d.nodes.filter((n) => n.selected).length === 1 ? d.nodes.find((n) => n.selected)! : null;
      const siblings = anchor ? d.edges.filter((e) => e.source === anchor.id).length : 0;
      let position = at;
      if (!position && anchor) position = { x: anchor.position.x + siblings * LAYOUT.nodeGap, y: anchor.position.y + LAYOUT.layerGap };
      if (!position) {
        const pane = document.querySelector('.react-flow')?.getBoundingClientRect();
        position = pane ? flow.screenToFlowPosition({ x: pane.left + pane.width / 2 - 112, y: pane.top + pane.height / 3 }) : { x: 0, y: 0 };
        // Not on top of another step.
        while (d.nodes.some((n) => Math.abs(n.position.x - position!.x) < 60 && Math.abs(n.position.y - position!.y) < 40))
          position = { x: position.x + 30, y: position.y + 40 };
      }
      const node = stepNode({ id, type, name: defaultName(type) }, position, true, true);
      const outputs = anchor ? outputsOf(anchor.data.def.type, types) : [];
      const link = anchor && outputs.length === 1 && !isTrigger(type) && !at ? outputs[0]! : null;
      commit((doc) => {
        const nodes = [...placeAll(doc.nodes).map((n) => (n.selected ? { ...n, selected: false } : n)), node];
        const edges = doc.edges.map((e) => (e.selected ? { ...e, selected: false } : e));
        const next = { ...doc, nodes, edges };
        return link && anchor ? { ...next, edges: connect(next, anchor.id, link, id) } : next;
      });
      // Keep the new step in sight.
      const pane = document.querySelector('.react-flow')?.getBoundingClientRect();
      const topLeft = flow.flowToScreenPosition(position);
      const bottomRight = flow.flowToScreenPosition({ x: position.x + 224, y: position.y + 80 });
      if (pane && (topLeft.x < pane.left || topLeft.y < pane.top || bottomRight.x > pane.right || bottomRight.y > pane.bottom)) {
        void flow.setCenter(position.x + 112, position.y + 40, { zoom: flow.getZoom(), duration: 200 });
      }
    },
    [readOnly, flow, types, commit, docRef],
  );

  const removeSelection = useCallback(() => {
    const d = docRef.current;
    const nodeIds = new Set(d.nodes.filter((n) => n.selected).map((n) => n.id));
    const edgeIds = new Set(d.edges.filter((e) => e.selected).map((e) => e.id));
    if (!nodeIds.size && !edgeIds.size) return;
    commit((doc) => ({ ...doc, ...removeElements(doc, nodeIds, edgeIds) }));
  }, [commit, docRef]);

  const duplicateSelection = useCallback(() => {
    const ids = new Set(docRef.current.nodes.filter((n) => n.selected).map((n) => n.id));
    if (!ids.size) return;
    commit((doc) => {
      const { nodes, edges } = duplicate(doc, ids);
      return { ...doc, nodes, edges: edges.map((e) => (e.selected ? { ...e, selected: false } : e)) };
    });
  }, [commit, docRef]);

  const editSelected = useCallback(
    (id: string, edit: NodeEdit, field: string) => {
      display.clearNodeProblem(id);
      setProblems((p) => {
        if (!p?.nodeMessages.has(id)) return p;
        const nodeMessages = new Map(p.nodeMessages);
        nodeMessages.delete(id);
        const params = new Map(p.params);
        params.delete(id);
        return { ...p, nodeMessages, params };
      });
      commit((doc) => ({ ...doc, nodes: doc.nodes.map((n) => (n.id === id ? editNode(n, edit) : n)) }), `node:${id}:${field}`);
    },
    [commit, display, setProblems],
  );

  const editMeta = useCallback(
    (change: Partial<WorkflowMeta>, field: string) => commit((doc) => ({ ...doc, meta: { ...doc.meta, ...change } }), `meta:${field}`),
    [commit],
  );

  const tidy = () => {
    commit((d) => ({ ...d, nodes: relayout(d) }));
    setTimeout(() => void flow.fitView({ padding: 0.2, maxZoom: 1, duration: 200 }), 50);
  };

  /** Selects one step and brings it into view (a problem's "Show" button, the first problem after a save). */
  const focusNode = (id: string) => {
    dispatch({
      kind: 'transient',
      change: (d) => ({
        ...d,
        nodes: d.nodes.map((n) => (Boolean(n.selected) === (n.id === id) ? n : { ...n, selected: n.id === id })),
        edges: d.edges.map((e) => (e.selected ? { ...e, selected: false } : e)),
      }),
    });
    setTimeout(() => void flow.fitView({ nodes: [{ id }], maxZoom: 1.1, duration: 250, padding: 0.6 }), 30);
  };

  /** The whole workflow in view, once the canvas has the new document. */
  const fitView = () => setTimeout(() => void flow.fitView({ padding: 0.2, maxZoom: 1 }), 50);

  return {
    types,
    selectedNodes,
    selectedEdges,
    canvas: { onNodesChange, onEdgesChange, onDragStart, onDragStop, isValidConnection, onConnect },
    addNode,
    removeSelection,
    duplicateSelection,
    editSelected,
    editMeta,
    tidy,
    focusNode,
    fitView,
  };
}

export type Editing = ReturnType<typeof useEditing>;
