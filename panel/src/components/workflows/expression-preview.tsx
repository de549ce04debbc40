import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { ApiError } from '../../api/client';
import { evaluateExpression, workflowKeys } from '../../queries/workflows';

const DEBOUNCE_MS = 400;
const MAX_SHOWN = 600;

export interface PreviewRun {
  id: string;
  /** When the run started, to say which run the result is of. */
  label: string;
}

function shown(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value, null, 1) ?? 'undefined');
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
}

/**
 * What an expression gives against the last run's items: the server evaluates it (POST
 * …/workflows/:id/expressions/evaluate, under the run limits; the panel never evaluates user
 * expressions), a moment after the author stops typing. `$` is the node's first input item in that
 * run; a node the run did not have gets the run's input.
 */
export function ExpressionPreview({
  orgId,
  workflowId,
  nodeId,
  run,
  expression,
  param,
}: {
  orgId: string;
  workflowId: string | null;
  nodeId: string;
  run: PreviewRun | null;
  expression: string;
  param: string;
}) {
  const [settled, setSettled] = useState(expression);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(expression), DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [expression]);
  const result = useQuery({
    queryKey: workflowKeys.evaluate(orgId, { workflowId, runId: run?.id, nodeId, expression: settled }),
    queryFn: async () => {
      const call = (withNode: boolean) => evaluateExpression(orgId, workflowId!, { expression: settled, runId: run!.id, ...(withNode ? { nodeId } : {}) });
      try {
        return { ...(await call(true)), ofNode: true };
      } catch (error) {
        // A step added since that run: evaluate against the run's input.
        if (error instanceof ApiError && error.status === 404) return { ...(await call(false)), ofNode: false };
        throw error;
      }
    },
    enabled: Boolean(workflowId && run && settled.trim()),
    retry: false,
    staleTime: 60_000,
  });
  const label = `Result of ${param || 'the expression'}`;
  const box = 'mt-1 rounded-md px-2 py-1 text-xs ring-1';
  if (!workflowId) return <p className={`${box} bg-slate-50 text-slate-500 ring-slate-200`}>Save and run the workflow to see what this expression gives.</p>;
  if (!run)
    return (
      <p className={`${box} bg-slate-50 text-slate-500 ring-slate-200`}>
        Run the workflow (a test run will do) to see what this expression gives for its items.
      </p>
    );
  const typing = settled !== expression;
  return (
    <div
      role="status"
      aria-label={label}
      aria-busy={typing || result.isFetching}
      className={`${box} ${result.isError ? 'bg-red-50 text-red-800 ring-red-200' : 'bg-slate-50 text-slate-700 ring-slate-200'}`}
    >
      {result.isError ? (
        <p>
          <span className="font-medium">Error:</span> {result.error instanceof Error ? result.error.message : String(result.error)}
        </p>
      ) : result.data ? (
        <>
          <p className="text-[11px] text-slate-500">
            = {result.data.ofNode ? "for this step's first item" : 'for the input'} of the run {run.label}
          </p>
          <pre className={`mt-0.5 max-h-40 overflow-auto font-mono whitespace-pre-wrap break-all ${typing ? 'opacity-50' : ''}`}>
            {shown(result.data.value)}
          </pre>
        </>
      ) : (
        <p className="text-slate-500">Evaluating…</p>
      )}
    </div>
  );
}
