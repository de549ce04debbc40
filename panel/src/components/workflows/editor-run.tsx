import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { runKeys, runQuery } from '../../queries/runs';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { Checkbox, TextArea } from '../ui/field';
import { FormError } from '../ui/states';
import { useRunStream, type StreamState } from '../runs/use-run-stream';
import { mergeSteps, runStatus, type MergedStep, type RecordStep, type RunStatus } from '../runs/timeline';
import { jsonError } from './definition';
import type { DisplayStore, RunState } from './canvas';

/**
 * Starts a run from the editor: an input (JSON object) and test mode (on by default: publishing,
 * messaging, CRM sync and outgoing webhooks only show what they would send). Unsaved changes are
 * saved first, since a run runs the saved workflow.
 */
export function EditorRunDialog({
  open,
  onOpenChange,
  dirty,
  onStart,
  error,
  pending,
  lastInput,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  dirty: boolean;
  onStart: (input: Record<string, unknown>, testMode: boolean) => void;
  error: unknown;
  pending: boolean;
  lastInput: string;
}) {
  const [input, setInput] = useState(lastInput);
  const [testMode, setTestMode] = useState(true);
  const [inputError, setInputError] = useState<string | null>(null);
  const submit = () => {
    let value: unknown;
    try {
      value = input.trim() === '' ? {} : JSON.parse(input);
    } catch (e) {
      setInputError(jsonError(input, e));
      return;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      setInputError('The input must be a JSON object, e.g. { "score": 80 }');
      return;
    }
    setInputError(null);
    onStart(value as Record<string, unknown>, testMode);
  };
  return (
    <Modal
      open={open}
      onOpenChange={onOpenChange}
      title="Run from the editor"
      description="The run's steps light up on the canvas as they run; click a step for its items."
      wide
    >
      <form
        className="space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <TextArea
          label="Input (JSON)"
          rows={8}
          spellCheck={false}
          value={input}
          onChange={(e) => {
            setInput(e.target.value);
            setInputError(null);
          }}
          error={inputError ?? undefined}
          hint="The trigger's item: every step after it reads it."
        />
        <div>
          <Checkbox label="Test mode" checked={testMode} onChange={(e) => setTestMode(e.target.checked)} />
          <p className="mt-1 pl-6 text-xs text-slate-500">
            Publishing, messaging, CRM sync and outgoing webhook steps do not send anything; they show what they would have sent.
          </p>
        </div>
        {dirty ? (
          <p className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">The workflow has unsaved changes: it is saved first, then run.</p>
        ) : null}
        <FormError error={error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => onOpenChange(false)}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={pending}>
            {dirty ? 'Save and run' : testMode ? 'Start test run' : 'Start run'}
          </Button>
        </div>
      </form>
    </Modal>
  );
}

export interface EditorRun {
  status: RunStatus | undefined;
  testMode: boolean;
  stream: StreamState;
  steps: Map<string, MergedStep>;
  createdAt?: string;
}

const CANVAS_STATE: Record<string, RunState> = {
  RUNNING: 'RUNNING',
  WAITING: 'WAITING',
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
  RETRYING: 'RETRYING',
  SKIPPED: 'SKIPPED',
  CANCELED: 'CANCELED',
};

/**
 * A run followed on the canvas: its stream (GET …/runs/:id/events) folded into steps, the record
 * (GET …/runs/:id) refetched as steps end for their items, and each step's status handed to the
 * canvas's display store as it changes.
 */
export function useEditorRun(orgId: string, runId: string, display: DisplayStore): EditorRun {
  const queryClient = useQueryClient();
  const key = useMemo(() => runKeys.detail(orgId, runId), [orgId, runId]);
  const record = useQuery(runQuery(orgId, runId));
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const refresh = useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      void queryClient.invalidateQueries({ queryKey: key, exact: true });
    }, 150);
  }, [queryClient, key]);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  const { timeline, state } = useRunStream(orgId, runId, refresh);
  const merged = useMemo(() => mergeSteps(timeline, record.data?.steps as RecordStep[] | undefined), [timeline, record.data?.steps]);
  const steps = useMemo(() => new Map(merged.map((s) => [s.nodeId, s])), [merged]);
  useEffect(() => {
    display.setRun(new Map(merged.map((s) => [s.nodeId, { status: CANVAS_STATE[s.status] ?? 'RUNNING', itemCount: s.itemCount }])));
  }, [display, merged]);
  useEffect(() => () => display.setRun(new Map()), [display]);
  const status = runStatus(timeline, record.data?.status);
  const testMode = record.data?.testMode ?? false;
  const createdAt = record.data?.createdAt;
  return useMemo(() => ({ status, testMode, stream: state, steps, createdAt }), [status, testMode, state, steps, createdAt]);
}
