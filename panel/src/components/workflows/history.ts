/**
 * The editor's document with undo and redo: every edit that means something (add, connect, delete,
 * a param typed, a node dropped where it was dragged) is a step back; what only the canvas needs
 * (selection, measured sizes, a node following the pointer mid-drag) changes the document without
 * one. Typing in one field of one node within a second is one step, not one per key.
 */
import type { Doc } from './canvas-model';

export interface History {
  doc: Doc;
  /** The document as of the last step (not mid-drag): what the draft and "unsaved" read. */
  stable: Doc;
  past: Doc[];
  future: Doc[];
  /** +1 on every change that is a step (the draft and "unsaved" follow it). */
  revision: number;
  /** The document before the gesture in progress (a drag), to become one step when it ends. */
  gesture: Doc | null;
  /** What the last step was, to merge a burst of typing into one step. */
  lastKey: string | null;
  lastAt: number;
}

export const MAX_STEPS = 200;
const MERGE_MS = 1000;

export type HistoryAction =
  | { kind: 'commit'; change: (doc: Doc) => Doc; key?: string; at?: number }
  | { kind: 'transient'; change: (doc: Doc) => Doc }
  | { kind: 'begin' }
  | { kind: 'end'; change?: (doc: Doc) => Doc }
  | { kind: 'undo' }
  | { kind: 'redo' }
  | { kind: 'reset'; doc: Doc };

export function startHistory(doc: Doc): History {
  return { doc, stable: doc, past: [], future: [], revision: 0, gesture: null, lastKey: null, lastAt: 0 };
}

/** Selection is the canvas's, not the document's: an undo keeps what is selected now. */
function keepSelection(target: Doc, current: Doc): Doc {
  const selectedNodes = new Set(current.nodes.filter((n) => n.selected).map((n) => n.id));
  const selectedEdges = new Set(current.edges.filter((e) => e.selected).map((e) => e.id));
  return {
    ...target,
    nodes: target.nodes.map((n) => (Boolean(n.selected) === selectedNodes.has(n.id) ? n : { ...n, selected: selectedNodes.has(n.id) })),
    edges: target.edges.map((e) => (Boolean(e.selected) === selectedEdges.has(e.id) ? e : { ...e, selected: selectedEdges.has(e.id) })),
  };
}

export function historyReducer(state: History, action: HistoryAction): History {
  switch (action.kind) {
    case 'commit': {
      const doc = action.change(state.doc);
      if (doc === state.doc) return state;
      const at = action.at ?? Date.now();
      const merge = action.key !== undefined && action.key === state.lastKey && at - state.lastAt < MERGE_MS && state.past.length > 0;
      return {
        ...state,
        doc,
        stable: doc,
        past: merge ? state.past : [...state.past, state.doc].slice(-MAX_STEPS),
        future: [],
        revision: state.revision + 1,
        lastKey: action.key ?? null,
        lastAt: at,
      };
    }
    case 'transient': {
      const doc = action.change(state.doc);
      return doc === state.doc ? state : { ...state, doc };
    }
    case 'begin':
      return { ...state, gesture: state.doc };
    case 'end': {
      const before = state.gesture;
      const doc = action.change ? action.change(state.doc) : state.doc;
      if (!before) return { ...state, doc, stable: doc };
      // A press without a move is no step.
      const moved = doc.nodes.length !== before.nodes.length || doc.nodes.some((n, i) => n.position !== before.nodes[i]!.position);
      if (!moved) return { ...state, gesture: null };
      return {
        ...state,
        doc,
        stable: doc,
        gesture: null,
        past: [...state.past, before].slice(-MAX_STEPS),
        future: [],
        revision: state.revision + 1,
        lastKey: null,
      };
    }
    case 'undo': {
      const previous = state.past[state.past.length - 1];
      if (!previous) return state;
      const doc = keepSelection(previous, state.doc);
      return {
        ...state,
        doc,
        stable: doc,
        past: state.past.slice(0, -1),
        future: [state.doc, ...state.future],
        revision: state.revision + 1,
        lastKey: null,
        gesture: null,
      };
    }
    case 'redo': {
      const next = state.future[0];
      if (!next) return state;
      const doc = keepSelection(next, state.doc);
      return {
        ...state,
        doc,
        stable: doc,
        past: [...state.past, state.doc],
        future: state.future.slice(1),
        revision: state.revision + 1,
        lastKey: null,
        gesture: null,
      };
    }
    case 'reset':
      // A new document (loaded, reloaded): nothing to undo into, and a new revision all the same.
      return { ...startHistory(action.doc), revision: state.revision + 1 };
  }
}
