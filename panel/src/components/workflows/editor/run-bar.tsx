/** A run followed on the canvas: the follower (no markup) and the bar over the canvas. */
import { useEffect } from 'react';
import { Link } from '@tanstack/react-router';
import { Panel } from '@xyflow/react';
import { isFinalRun } from '../../runs/timeline';
import type { DisplayStore } from '../canvas';
import { useEditorRun, type EditorRun } from '../editor-run';

/** Follows a run and reports it up (the canvas, the run bar and the side panel read it). */
export function RunFollower({ orgId, runId, display, onChange }: { orgId: string; runId: string; display: DisplayStore; onChange: (run: EditorRun) => void }) {
  const run = useEditorRun(orgId, runId, display);
  useEffect(() => onChange(run), [run, onChange]);
  return null;
}

const RUN_WORDS: Record<string, string> = {
  QUEUED: 'Queued',
  RUNNING: 'Running…',
  WAITING: 'Waiting',
  SUCCEEDED: 'Succeeded',
  FAILED: 'Failed',
  CANCELED: 'Canceled',
};

export function RunBar({ orgId, runId, run, onHide }: { orgId: string; runId: string; run: EditorRun | null; onHide: () => void }) {
  const runFinal = isFinalRun(run?.status);
  return (
    <Panel position="top-center" className="rounded-full bg-white px-4 py-1.5 text-sm whitespace-nowrap shadow ring-1 ring-slate-200">
      <span className="inline-flex items-center gap-2">
        <span
          className={`size-2 rounded-full ${run?.status === 'SUCCEEDED' ? 'bg-emerald-500' : run?.status === 'FAILED' ? 'bg-red-500' : runFinal ? 'bg-slate-400' : 'animate-pulse bg-sky-500'}`}
          aria-hidden="true"
        />
        <span>{run?.testMode ? 'Test run' : 'Run'}:</span>
        <span role="status" aria-label="Run status" className="font-medium">
          {RUN_WORDS[run?.status ?? 'QUEUED'] ?? run?.status}
        </span>
        <Link to="/orgs/$orgId/runs/$runId" params={{ orgId, runId }} className="text-indigo-700 underline">
          Run page
        </Link>
        <button type="button" className="text-slate-500 underline" onClick={onHide}>
          Hide
        </button>
      </span>
    </Panel>
  );
}

/** What the canvas shows when there is no step yet. */
export function EmptyCanvas({ orgId }: { orgId: string }) {
  return (
    <Panel position="top-center" className="mt-24 rounded-lg bg-white p-4 text-center text-sm text-slate-600 shadow ring-1 ring-slate-200">
      <p className="font-medium text-slate-800">An empty workflow</p>
      <p className="mt-1">
        Start with a trigger from the palette (Manual trigger, Event, Schedule or Webhook),
        <br />
        then add steps and connect their outputs to inputs.
      </p>
      <p className="mt-2">
        <Link to="/orgs/$orgId/workflows/templates" params={{ orgId }} className="font-medium text-indigo-700 underline">
          Or start from a template
        </Link>
      </p>
    </Panel>
  );
}
