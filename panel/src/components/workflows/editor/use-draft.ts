/** The draft kept in this browser until saved: written a moment after each step, offered back on opening. */
import { useEffect, useMemo, useRef, useState } from 'react';
import { contentOf, docOf, saveBody, savedContent } from '../canvas-model';
import { clearDraft, draftKey, readDraft, writeDraft, type Draft } from '../drafts';
import { draftContent, initialDoc, type EditorDoc, type OpenedTemplate, type Workflow } from './doc';

export function useEditorDraft({
  orgId,
  workflow,
  template,
  base,
  editor,
  readOnly,
  fitView,
}: {
  orgId: string;
  workflow: Workflow | null;
  template: OpenedTemplate | null;
  base: Workflow | null;
  editor: EditorDoc;
  readOnly: boolean;
  fitView: () => void;
}) {
  const { history, dispatch } = editor;
  const [newContent] = useState(() => (workflow ? null : contentOf(saveBody(initialDoc(null, template)))));
  const key = draftKey(orgId, base?.id ?? null);

  // ——— What is unsaved, and the draft in this browser ———
  const current = useMemo(() => contentOf(saveBody(history.stable)), [history.stable]);
  const baseContent = useMemo(() => (base ? savedContent(base) : newContent), [base, newContent]);
  const dirty = current !== baseContent;
  const [offer, setOffer] = useState<Draft | null>(() => {
    const draft = readDraft(draftKey(orgId, workflow?.id ?? null));
    return draft && draftContent(draft) !== (workflow ? savedContent(workflow) : newContent) ? draft : null;
  });
  const [draftSaved, setDraftSaved] = useState<string | null>(null);
  // What the last successful save stored: a draft timer that fires between the save's answer and
  // the re-render (or the move to the new workflow's address) must not keep it as a draft again.
  const lastSaved = useRef<string | null>(null);
  useEffect(() => {
    if (readOnly || offer || history.revision === 0) return;
    const keep = () => {
      if (!dirty || lastSaved.current === current) {
        clearDraft(key);
        setDraftSaved(null);
        return;
      }
      const def = saveBody(history.stable);
      const savedAt = new Date().toISOString();
      if (
        writeDraft(key, {
          savedAt,
          baseVersion: base?.version ?? null,
          templateId: template?.id,
          meta: history.stable.meta,
          nodes: def.nodes,
          edges: def.edges,
        })
      )
        setDraftSaved(savedAt);
    };
    const timer = setTimeout(keep, 250);
    // A reload or a closed tab before the timer fires keeps the last edit too.
    window.addEventListener('pagehide', keep);
    return () => {
      clearTimeout(timer);
      window.removeEventListener('pagehide', keep);
    };
  }, [current, dirty, key, offer, readOnly, history.revision, history.stable, base?.version, template?.id]);

  /** What a save stored: no draft of it is kept (not even by a timer that fires before the re-render). */
  const markSaved = (content: string) => {
    lastSaved.current = content;
    clearDraft(key);
    setDraftSaved(null);
  };

  const restore = () => {
    if (!offer) return;
    const draft = offer;
    setOffer(null);
    dispatch({ kind: 'commit', change: () => docOf({ nodes: draft.nodes, edges: draft.edges }, draft.meta) });
    fitView();
  };
  const discard = () => {
    clearDraft(key);
    setOffer(null);
  };

  return { key, dirty, offer, setOffer, draftSaved, setDraftSaved, markSaved, restore, discard };
}

export type EditorDraft = ReturnType<typeof useEditorDraft>;
