/** The editor's top bar: back, the workflow's name and save status, and the actions. */
import type { RefObject } from 'react';
import { Link } from '@tanstack/react-router';
import { Download, LayoutGrid, Play, Redo2, Save, Undo2, Upload } from 'lucide-react';
import { Button } from '../../ui/button';
import type { Workflow } from './doc';

export function EditorToolbar({
  orgId,
  base,
  name,
  status,
  nameError,
  readOnly,
  canWrite,
  canUndo,
  canRedo,
  hasSteps,
  canSave,
  fileInput,
  onName,
  onUndo,
  onRedo,
  onTidy,
  onImport,
  onExport,
  onRun,
  onSave,
}: {
  orgId: string;
  base: Workflow | null;
  name: string;
  status: string;
  nameError: string | undefined;
  readOnly: boolean;
  canWrite: boolean;
  canUndo: boolean;
  canRedo: boolean;
  hasSteps: boolean;
  canSave: boolean;
  fileInput: RefObject<HTMLInputElement | null>;
  onName: (name: string) => void;
  onUndo: () => void;
  onRedo: () => void;
  onTidy: () => void;
  onImport: (file: File) => void;
  onExport: () => void;
  onRun: () => void;
  onSave: () => void;
}) {
  return (
    <header className="flex flex-wrap items-center gap-2 border-b border-slate-200 px-3 py-2">
      <Link
        to={base ? '/orgs/$orgId/workflows/$workflowId' : '/orgs/$orgId/workflows'}
        params={{ orgId, workflowId: base?.id ?? '' }}
        className="rounded px-2 py-1 text-sm text-indigo-700 hover:bg-indigo-50"
      >
        ←<span className="sr-only"> Back</span>
      </Link>
      <div className="min-w-48 flex-1">
        <input
          aria-label="Workflow name"
          value={name}
          maxLength={200}
          readOnly={readOnly}
          aria-invalid={nameError ? true : undefined}
          onChange={(e) => onName(e.target.value)}
          className="w-full max-w-md rounded-md border-0 px-2 py-1 text-lg font-semibold text-slate-900 ring-1 ring-transparent hover:ring-slate-200 focus:ring-2 focus:ring-indigo-600 aria-[invalid=true]:ring-red-500"
        />
        <p role="status" aria-label="Save status" className="px-2 text-xs text-slate-500">
          {status}
        </p>
      </div>
      {canWrite ? (
        <div className="flex flex-wrap items-center gap-1.5">
          <Button size="sm" variant="ghost" onClick={onUndo} disabled={!canUndo} aria-label="Undo" title="Undo (Ctrl+Z)">
            <Undo2 className="size-4" />
          </Button>
          <Button size="sm" variant="ghost" onClick={onRedo} disabled={!canRedo} aria-label="Redo" title="Redo (Ctrl+Shift+Z)">
            <Redo2 className="size-4" />
          </Button>
          <Button size="sm" variant="ghost" onClick={onTidy} disabled={!hasSteps} title="Lay the steps out again from their edges">
            <LayoutGrid className="size-4" />
            Tidy up
          </Button>
          <span aria-hidden="true" className="mx-1 h-5 w-px bg-slate-200" />
          <Link
            to="/orgs/$orgId/workflows/templates"
            params={{ orgId }}
            className="rounded-md px-2.5 py-1 text-xs font-medium text-slate-700 hover:bg-slate-100"
          >
            Templates
          </Link>
          <Button size="sm" variant="ghost" onClick={() => fileInput.current?.click()}>
            <Upload className="size-4" />
            Import
          </Button>
          <input
            ref={fileInput}
            type="file"
            accept="application/json,.json"
            className="hidden"
            aria-label="Import a workflow file"
            onChange={(e) => {
              const file = e.target.files?.[0];
              e.target.value = '';
              if (file) onImport(file);
            }}
          />
          <Button size="sm" variant="ghost" onClick={onExport} disabled={!hasSteps}>
            <Download className="size-4" />
            Export
          </Button>
          <span aria-hidden="true" className="mx-1 h-5 w-px bg-slate-200" />
          <Button size="sm" onClick={onRun} disabled={!base} title={base ? 'Run the workflow and follow it here' : 'Save the workflow first'}>
            <Play className="size-4" />
            Run
          </Button>
          <Button size="sm" variant="primary" onClick={onSave} disabled={!canSave} title="Save (Ctrl+S)">
            <Save className="size-4" />
            Save
          </Button>
        </div>
      ) : (
        <span className="text-xs text-slate-500">Read only: your role cannot change workflows.</span>
      )}
    </header>
  );
}
