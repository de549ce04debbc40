/** The panel beside the canvas: the selected step, the selected edge, several steps, or the workflow's settings. */
import { useCallback, useMemo } from 'react';
import { Button } from '../../ui/button';
import type { LinkEdge, StepNode, WorkflowMeta } from '../canvas-model';
import type { Problems } from '../definition';
import type { EditorRun } from '../editor-run';
import { ExpressionPreview, type PreviewRun } from '../expression-preview';
import { EdgeInspector, NodeInspector, WorkflowSettings, type NodeEdit } from '../inspector';
import type { Editing } from './use-editing';

export function EditorSidePanel({
  orgId,
  workflowId,
  meta,
  nodesById,
  editing,
  readOnly,
  problems,
  previewRun,
  run,
  runShown,
}: {
  orgId: string;
  workflowId: string | null;
  meta: WorkflowMeta;
  nodesById: Map<string, StepNode>;
  editing: Editing;
  readOnly: boolean;
  problems: Problems | null;
  previewRun: PreviewRun | null;
  run: EditorRun | null;
  runShown: boolean;
}) {
  const { selectedNodes, selectedEdges, types, editSelected, removeSelection, duplicateSelection, editMeta } = editing;
  const selected = selectedNodes.length === 1 ? selectedNodes[0]! : null;
  const selectedId = selected?.id ?? null;
  const selectedEdge: LinkEdge | null = !selected && selectedNodes.length === 0 && selectedEdges.length === 1 ? selectedEdges[0]! : null;
  const preview = useCallback(
    (nodeId: string) => ({
      preview: (expression: string, param: string) => (
        <ExpressionPreview orgId={orgId} workflowId={workflowId} nodeId={nodeId} run={previewRun} expression={expression} param={param} />
      ),
    }),
    [orgId, workflowId, previewRun],
  );
  const selectedContext = useMemo(() => (selectedId ? preview(selectedId) : {}), [preview, selectedId]);
  const selectedProblem = useMemo(() => {
    const message = selectedId ? problems?.nodeMessages.get(selectedId) : undefined;
    return message ? { message, param: problems!.params.get(selectedId!) } : undefined;
  }, [problems, selectedId]);
  const onEditSelected = useCallback(
    (edit: NodeEdit, field: string) => {
      if (selectedId) editSelected(selectedId, edit, field);
    },
    [selectedId, editSelected],
  );
  const runStep = selected && run ? run.steps.get(selected.id) : undefined;

  return (
    <aside aria-label="Side panel" className="w-80 shrink-0 overflow-y-auto border-l border-slate-200 bg-white">
      {selected ? (
        <NodeInspector
          key={selected.id}
          def={selected.data.def}
          type={types.get(selected.data.def.type)}
          readOnly={readOnly}
          formContext={selectedContext}
          problem={selectedProblem}
          runStep={runStep}
          showRun={runShown}
          onEdit={onEditSelected}
          onDelete={removeSelection}
          onDuplicate={duplicateSelection}
        />
      ) : selectedEdge ? (
        <EdgeInspector edge={selectedEdge} nodes={nodesById} readOnly={readOnly} onDelete={removeSelection} />
      ) : selectedNodes.length > 1 ? (
        <div className="space-y-3 p-4 text-sm text-slate-700">
          <p>
            <strong>{selectedNodes.length} steps</strong> selected.
          </p>
          {readOnly ? null : (
            <div className="flex gap-2">
              <Button size="sm" onClick={duplicateSelection}>
                Duplicate
              </Button>
              <Button size="sm" variant="danger" onClick={removeSelection}>
                Delete
              </Button>
            </div>
          )}
        </div>
      ) : (
        <WorkflowSettings meta={meta} readOnly={readOnly} onChange={editMeta} runShown={runShown} />
      )}
    </aside>
  );
}
