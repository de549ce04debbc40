/** The editor's document: what it opens with, and its history (undo, redo) as a reducer. */
import { useCallback, useEffect, useReducer, useRef } from 'react';
import type { Schemas } from '../../../api/client';
import { contentOf, docOf, metaOf, saveBody, type Doc } from '../canvas-model';
import type { Definition } from '../definition';
import type { Draft } from '../drafts';
import { historyReducer, startHistory } from '../history';

export type Workflow = Schemas['Workflow'];

export interface OpenedTemplate {
  id: string;
  name: string;
  description: string;
  nodes: Record<string, unknown>[];
  edges: Record<string, unknown>[];
}

const BLANK_NAME = 'Untitled workflow';

export function initialDoc(workflow: Workflow | null, template: OpenedTemplate | null): Doc {
  if (workflow) return docOf(workflow as unknown as Definition, metaOf(workflow));
  if (template) return docOf(template as unknown as Definition, { name: template.name, description: template.description, budgetUsd: '' });
  return docOf({ nodes: [], edges: [] }, { name: BLANK_NAME, description: '', budgetUsd: '' });
}

/** A draft's content as a save would send it (to tell a draft that differs from what is saved). */
export const draftContent = (draft: Draft) => contentOf({ ...saveBody({ meta: draft.meta, nodes: [], edges: [] }), nodes: draft.nodes, edges: draft.edges });

/** The document with undo and redo; `commit` makes one step of a change. */
export function useEditorDoc(workflow: Workflow | null, template: OpenedTemplate | null) {
  const [history, dispatch] = useReducer(historyReducer, null, () => startHistory(initialDoc(workflow, template)));
  const doc = history.doc;
  // The latest document for event handlers, so they stay the same functions while a node is dragged
  // (the canvas and the side panel then re-render only what moved).
  const docRef = useRef(doc);
  useEffect(() => {
    docRef.current = doc;
  });
  const commit = useCallback((change: (d: Doc) => Doc, key?: string) => dispatch({ kind: 'commit', change, key }), []);
  return { history, dispatch, doc, docRef, commit };
}

export type EditorDoc = ReturnType<typeof useEditorDoc>;
