/**
 * The visual workflow editor: a canvas of steps (canvas.tsx) between the node palette and a side
 * panel for the selected step, with undo and redo, keyboard shortcuts, saving with the API's answer
 * shown on the canvas, a draft kept in this browser until saved, a stale save refused rather than
 * overwriting (409 CONFLICT), runs started from the editor and followed live on the canvas, and
 * export and import as a JSON file. It uses the public API only.
 *
 * This file puts together what the hooks beside it do: the document and its history (doc.ts),
 * editing (use-editing.ts), the draft (use-draft.ts), saving with conflicts (use-save.ts), running
 * (use-run.ts), the shortcuts (use-keyboard.ts), import and export (use-import-export.ts).
 */
import { useMemo, useState } from 'react';
import { DisplayStore, EditorCanvas } from '../canvas';
import type { NodeTypeInfo } from '../canvas-model';
import { EditorRunDialog } from '../editor-run';
import { Palette } from '../palette';
import { FormError } from '../../ui/states';
import { Banner, ConflictBanner, DraftOffer, ProblemsBanner } from './banners';
import { useEditorDoc, type OpenedTemplate, type Workflow } from './doc';
import { EmptyCanvas, RunBar, RunFollower } from './run-bar';
import { EditorSidePanel } from './side-panel';
import { EditorToolbar } from './toolbar';
import { useEditorDraft } from './use-draft';
import { useEditing, useProblems } from './use-editing';
import { useImportExport } from './use-import-export';
import { useEditorKeyboard } from './use-keyboard';
import { useRunFromEditor } from './use-run';
import { useEditorSave } from './use-save';

export function WorkflowEditor({
  orgId,
  workflow,
  template,
  nodeTypes,
  canWrite,
}: {
  orgId: string;
  /** The saved workflow, or null for a new one (blank, or from `template`). */
  workflow: Workflow | null;
  template: OpenedTemplate | null;
  nodeTypes: NodeTypeInfo[];
  canWrite: boolean;
}) {
  const display = useMemo(() => new DisplayStore(), []);
  const readOnly = !canWrite;
  const [base, setBase] = useState<Workflow | null>(workflow);
  const [notice, setNotice] = useState<string | null>(null);
  const [problems, setProblems] = useProblems(display);

  const editor = useEditorDoc(workflow, template);
  const { history, dispatch, doc } = editor;
  const editing = useEditing({ editor, nodeTypes, display, readOnly, setProblems, setNotice });
  const draft = useEditorDraft({ orgId, workflow, template, base, editor, readOnly, fitView: editing.fitView });
  const saving = useEditorSave({
    orgId,
    canWrite,
    base,
    setBase,
    editor,
    draft,
    setProblems,
    setNotice,
    focusNode: editing.focusNode,
    fitView: editing.fitView,
  });
  const { save, doSave, canSave, nameError, conflict, status } = saving;
  const running = useRunFromEditor({ orgId, base, dirty: draft.dirty, editor, save, display });
  const { runId, run } = running;
  const files = useImportExport({ editor, setNotice, fitView: editing.fitView });
  useEditorKeyboard({ readOnly, save: () => doSave(), duplicateSelection: editing.duplicateSelection, removeSelection: editing.removeSelection, dispatch });

  const nodesById = useMemo(() => new Map(doc.nodes.map((n) => [n.id, n])), [doc.nodes]);

  return (
    <div className="-m-6 flex h-[calc(100vh-3.5rem)] min-h-[560px] flex-col bg-white">
      {runId ? <RunFollower orgId={orgId} runId={runId} display={display} onChange={running.onRun} /> : null}
      <EditorToolbar
        orgId={orgId}
        base={base}
        name={doc.meta.name}
        status={status}
        nameError={nameError}
        readOnly={readOnly}
        canWrite={canWrite}
        canUndo={history.past.length > 0}
        canRedo={history.future.length > 0}
        hasSteps={doc.nodes.length > 0}
        canSave={canSave}
        fileInput={files.fileInput}
        onName={(name) => editing.editMeta({ name }, 'name')}
        onUndo={() => dispatch({ kind: 'undo' })}
        onRedo={() => dispatch({ kind: 'redo' })}
        onTidy={editing.tidy}
        onImport={(file) => void files.importFile(file)}
        onExport={files.exportFile}
        onRun={() => running.setRunning(true)}
        onSave={() => doSave()}
      />

      {draft.offer ? <DraftOffer offer={draft.offer} base={base} onRestore={draft.restore} onDiscard={draft.discard} /> : null}
      {conflict ? <ConflictBanner base={base} saving={saving} /> : null}
      {problems ? (
        <ProblemsBanner problems={problems} error={save.error} nodesById={nodesById} onShow={editing.focusNode} />
      ) : save.error && !conflict ? (
        <div className="mx-3 mt-2">
          <FormError error={save.error} />
        </div>
      ) : null}
      {files.importError ? (
        <Banner tone="red" label="Import">
          {files.importError}
        </Banner>
      ) : null}
      {notice ? (
        <Banner tone="amber" label="Notice">
          <span>{notice}</span>{' '}
          <button type="button" className="ml-2 underline" onClick={() => setNotice(null)}>
            Dismiss
          </button>
        </Banner>
      ) : null}

      <div className="mt-2 flex min-h-0 flex-1 border-t border-slate-200">
        <div className="w-56 shrink-0 border-r border-slate-200 bg-slate-50">
          <Palette types={nodeTypes} onAdd={editing.addNode} disabled={readOnly} />
        </div>
        <div role="group" aria-label="Workflow canvas" className="relative min-w-0 flex-1 bg-slate-50">
          <EditorCanvas
            nodes={doc.nodes}
            edges={doc.edges}
            types={editing.types}
            display={display}
            readOnly={readOnly}
            {...editing.canvas}
            onDropType={(type, at) => editing.addNode(type, at)}
          >
            {doc.nodes.length === 0 ? <EmptyCanvas orgId={orgId} /> : null}
            {runId ? <RunBar orgId={orgId} runId={runId} run={run} onHide={running.hideRun} /> : null}
          </EditorCanvas>
        </div>
        <EditorSidePanel
          orgId={orgId}
          workflowId={base?.id ?? null}
          meta={doc.meta}
          nodesById={nodesById}
          editing={editing}
          readOnly={readOnly}
          problems={problems}
          previewRun={running.previewRun}
          run={run}
          runShown={Boolean(runId)}
        />
      </div>

      {canWrite && base ? (
        <EditorRunDialog
          key={running.running ? 'open' : 'closed'}
          open={running.running}
          onOpenChange={(open) => {
            running.setRunning(open);
            if (!open) running.startRun.reset();
          }}
          dirty={draft.dirty}
          pending={running.startRun.isPending}
          error={running.startRun.error}
          lastInput={running.lastInput}
          onStart={(input, testMode) => running.startRun.mutate({ input, testMode })}
        />
      ) : null}
    </div>
  );
}
