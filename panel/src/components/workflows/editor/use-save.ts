/**
 * Saving from the editor: POST for a new workflow (then its own address), PATCH with the version
 * shown for a saved one; a stale save is refused (409 CONFLICT) and kept as a draft, to be resolved
 * by loading the saved version (the draft is offered back) or by saving over it knowingly; the
 * API's problems are shown on the canvas and the first one brought into view.
 */
import { useState, type Dispatch, type SetStateAction } from 'react';
import { useNavigate } from '@tanstack/react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError } from '../../../api/client';
import { formatDateTime } from '../../../lib/format';
import { fetchWorkflow, saveWorkflow, workflowKeys, workflowSaved, type WorkflowBody } from '../../../queries/workflows';
import { contentOf, docOf, metaOf, saveBody, savedContent } from '../canvas-model';
import { problemsOf, type Definition, type Problems } from '../definition';
import { clearDraft, draftKey, readDraft, writeDraft } from '../drafts';
import { draftContent, type EditorDoc, type Workflow } from './doc';
import type { EditorDraft } from './use-draft';

export function useEditorSave({
  orgId,
  canWrite,
  base,
  setBase,
  editor,
  draft,
  setProblems,
  setNotice,
  focusNode,
  fitView,
}: {
  orgId: string;
  canWrite: boolean;
  base: Workflow | null;
  setBase: (workflow: Workflow) => void;
  editor: EditorDoc;
  draft: EditorDraft;
  setProblems: Dispatch<SetStateAction<Problems | null>>;
  setNotice: (notice: string | null) => void;
  focusNode: (id: string) => void;
  fitView: () => void;
}) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { history, dispatch, doc } = editor;
  const { key, dirty } = draft;
  const [conflict, setConflict] = useState<{ mine: number | null } | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const save = useMutation({
    mutationFn: ({ body, version }: { body: ReturnType<typeof saveBody>; version: number | null }) =>
      saveWorkflow(orgId, base?.id ?? null, (base ? body : { ...body, active: false }) as WorkflowBody, version),
    onMutate: () => {
      setSaved(null);
      setNotice(null);
    },
    onSuccess: async (stored, { body }) => {
      draft.markSaved(contentOf(body));
      setProblems(null);
      setConflict(null);
      void workflowSaved(queryClient, orgId, stored);
      if (!base) {
        clearDraft(draftKey(orgId, null));
        await navigate({ to: '/orgs/$orgId/workflows/$workflowId/edit', params: { orgId, workflowId: stored.id }, replace: true });
        return;
      }
      setBase(stored);
      setSaved(new Date().toISOString());
    },
    onError: (error, { body }) => {
      if (error instanceof ApiError && error.status === 409) {
        setConflict({ mine: base?.version ?? null });
        // Losing nothing: the draft is kept whatever the timer was doing.
        const savedAt = new Date().toISOString();
        if (writeDraft(key, { savedAt, baseVersion: base?.version ?? null, meta: history.stable.meta, nodes: body.nodes, edges: body.edges }))
          draft.setDraftSaved(savedAt);
        return;
      }
      const found = problemsOf(error, { nodes: body.nodes, edges: body.edges });
      setProblems(found);
      const first = found ? [...found.nodeIds][0] : undefined;
      if (first) focusNode(first);
    },
  });
  const nameError = doc.meta.name.trim() === '' ? 'A workflow needs a name' : undefined;
  const budgetBad = doc.meta.budgetUsd.trim() !== '' && !(Number(doc.meta.budgetUsd) >= 0);
  const canSave = canWrite && !save.isPending && !nameError && !budgetBad && (dirty || !base) && doc.nodes.length > 0;
  const doSave = (force = false) => {
    if (!canWrite || save.isPending || nameError || budgetBad) return;
    if (!force && !dirty && base) return;
    save.mutate({ body: saveBody(history.stable), version: base?.version ?? null });
  };

  /** The conflict resolved by taking what is saved now; the draft stays, offered back. */
  const reload = useMutation({
    mutationFn: () => fetchWorkflow(orgId, base!.id),
    onSuccess: (fresh) => {
      queryClient.setQueryData(workflowKeys.detail(orgId, fresh.id), fresh);
      const kept = readDraft(key);
      setConflict(null);
      setProblems(null);
      setBase(fresh);
      draft.setOffer(kept && draftContent(kept) !== savedContent(fresh) ? kept : null);
      dispatch({ kind: 'reset', doc: docOf(fresh as unknown as Definition, metaOf(fresh)) });
      fitView();
    },
  });
  /** The conflict resolved by keeping mine: saved over the newer version, knowingly. */
  const overwrite = useMutation({
    mutationFn: () => fetchWorkflow(orgId, base!.id),
    onSuccess: (fresh) => save.mutate({ body: saveBody(history.stable), version: fresh.version }),
  });

  const status = save.isPending
    ? 'Saving…'
    : conflict
      ? 'Not saved'
      : dirty || !base
        ? draft.draftSaved
          ? `Unsaved changes · draft kept ${formatDateTime(draft.draftSaved)}`
          : base
            ? 'Unsaved changes'
            : 'Not saved yet'
        : saved
          ? 'All changes saved'
          : `Saved · version ${base.version}`;

  return { save, doSave, canSave, nameError, reload, overwrite, conflict, status };
}

export type EditorSave = ReturnType<typeof useEditorSave>;
