/**
 * Running from the editor: a run started (the unsaved changes saved first), followed on the canvas
 * until hidden, and the run whose items the expression previews read (the one shown, else the
 * workflow's latest).
 */
import { useCallback, useMemo, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { formatDateTime } from '../../../lib/format';
import { runKeys, runsQuery } from '../../../queries/runs';
import { startRun as postRun } from '../../../queries/workflows';
import { saveBody } from '../canvas-model';
import type { DisplayStore } from '../canvas';
import type { EditorRun } from '../editor-run';
import type { PreviewRun } from '../expression-preview';
import type { EditorDoc, Workflow } from './doc';
import type { EditorSave } from './use-save';

export function useRunFromEditor({
  orgId,
  base,
  dirty,
  editor,
  save,
  display,
}: {
  orgId: string;
  base: Workflow | null;
  dirty: boolean;
  editor: EditorDoc;
  save: EditorSave['save'];
  display: DisplayStore;
}) {
  const queryClient = useQueryClient();
  const [running, setRunning] = useState(false);
  const [runId, setRunId] = useState<string | null>(null);
  const [run, setRun] = useState<EditorRun | null>(null);
  const [lastInput, setLastInput] = useState('{}');
  const startRun = useMutation({
    mutationFn: async ({ input, testMode }: { input: Record<string, unknown>; testMode: boolean }) => {
      if (dirty && base) {
        const body = saveBody(editor.history.stable);
        await save.mutateAsync({ body, version: base.version });
      }
      return postRun(orgId, base!.id, { input, testMode });
    },
    onSuccess: (created, { input }) => {
      setLastInput(JSON.stringify(input, null, 2));
      setRun(null);
      setRunId(created.id);
      setRunning(false);
      void queryClient.invalidateQueries({ queryKey: runKeys.lists(orgId) });
    },
  });
  const onRun = useCallback((r: EditorRun) => setRun(r), []);
  const hideRun = () => {
    setRunId(null);
    setRun(null);
    display.setRun(new Map());
  };
  const latestRun = useQuery({ ...runsQuery(orgId, { workflowId: base?.id, pageSize: 1 }), enabled: Boolean(base && !runId) });
  const latest = latestRun.data?.items[0];
  const runCreatedAt = run?.createdAt;
  const previewRun = useMemo<PreviewRun | null>(
    () =>
      runId
        ? { id: runId, label: runCreatedAt ? `of ${formatDateTime(runCreatedAt)}` : 'shown' }
        : latest
          ? { id: latest.id, label: `of ${formatDateTime(latest.createdAt)}` }
          : null,
    [runId, runCreatedAt, latest],
  );

  return { running, setRunning, runId, run, onRun, hideRun, lastInput, startRun, previewRun };
}

export type RunFromEditor = ReturnType<typeof useRunFromEditor>;
