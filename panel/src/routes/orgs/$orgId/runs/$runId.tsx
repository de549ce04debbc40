import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError } from '../../../../api/client';
import { runApprovalsQuery } from '../../../../queries/approvals';
import { runKeys, runQuery, useCancelRun } from '../../../../queries/runs';
import { workflowQuery } from '../../../../queries/workflows';
import { useRole } from '../../../../lib/account';
import { formatDateTime, formatUsd } from '../../../../lib/format';
import { Badge, PageHeader } from '../../../../components/ui/page';
import { Button } from '../../../../components/ui/button';
import { Modal } from '../../../../components/ui/dialog';
import { ErrorState, FormError, Loading } from '../../../../components/ui/states';
import { useRunStream, type StreamState } from '../../../../components/runs/use-run-stream';
import { isFinalRun, mergeSteps, runStatus, type RecordStep } from '../../../../components/runs/timeline';
import { LogLines, StepList, type NodeInfo } from '../../../../components/runs/step-list';
import { duration, triggerLabel } from '../../../../components/runs/runs-table';

export const Route = createFileRoute('/orgs/$orgId/runs/$runId')({
  component: RunPage,
});

const STREAM_LABEL: Record<StreamState, { text: string; dot: string }> = {
  connecting: { text: 'Connecting…', dot: 'bg-slate-400' },
  live: { text: 'Live', dot: 'bg-emerald-500 animate-pulse' },
  ended: { text: 'Finished', dot: 'bg-slate-400' },
  error: { text: 'Live updates unavailable', dot: 'bg-red-500' },
};

function RunPage() {
  const { orgId, runId } = Route.useParams();
  const queryClient = useQueryClient();
  const { canWrite } = useRole(orgId);
  const [canceling, setCanceling] = useState(false);
  const runKey = useMemo(() => runKeys.detail(orgId, runId), [orgId, runId]);
  const run = useQuery(runQuery(orgId, runId));
  const workflow = useQuery({ ...workflowQuery(orgId, run.data?.workflowId), retry: false });

  // Step items are only in the record: refetch it as steps end (a burst of events, one refetch).
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const refresh = useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      void queryClient.invalidateQueries({ queryKey: runKey, exact: true });
    }, 200);
  }, [queryClient, runKey]);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  const { timeline, state } = useRunStream(orgId, runId, refresh);

  const status = runStatus(timeline, run.data?.status);
  const waiting = status === 'WAITING';
  const approvals = useQuery({ ...runApprovalsQuery(orgId, runId), enabled: waiting });

  // Its pending approvals are closed with it (useCancelRun makes them stale).
  const cancel = useCancelRun(orgId, runId);
  const cancelRun = () =>
    cancel.mutate(undefined, {
      onSuccess: () => setCanceling(false),
      onError: (error) => {
        // Already final: show what it became.
        if (error instanceof ApiError && error.status === 409) void queryClient.invalidateQueries({ queryKey: runKey, exact: true });
      },
    });

  const nodes = useMemo(() => {
    const map = new Map<string, NodeInfo>();
    for (const node of workflow.data?.nodes ?? []) {
      const n = node as { id?: unknown; name?: unknown; type?: unknown; retry?: { maxAttempts?: unknown } };
      if (typeof n.id !== 'string') continue;
      map.set(n.id, {
        name: typeof n.name === 'string' ? n.name : undefined,
        type: typeof n.type === 'string' ? n.type : undefined,
        maxAttempts: typeof n.retry?.maxAttempts === 'number' ? n.retry.maxAttempts : undefined,
      });
    }
    return map;
  }, [workflow.data]);
  const steps = useMemo(() => mergeSteps(timeline, run.data?.steps as RecordStep[] | undefined), [timeline, run.data?.steps]);

  if (run.isPending) return <Loading label="Loading the run…" />;
  if (run.isError) {
    return (
      <div className="space-y-3">
        <ErrorState error={run.error} retry={() => void run.refetch()} />
        <Link to="/orgs/$orgId/runs" params={{ orgId }} className="text-sm text-indigo-700 underline">
          All runs
        </Link>
      </div>
    );
  }
  const r = run.data;
  const final = isFinalRun(status);
  const costUsd = timeline.costUsd ?? r.costUsd;
  const startedAt = r.startedAt ?? timeline.startedAt;
  const finishedAt = r.finishedAt ?? timeline.finishedAt;
  const live = STREAM_LABEL[state];
  const runLogs = timeline.logs.filter((l) => !l.nodeId);

  return (
    <div className="space-y-6">
      <div>
        <Link to="/orgs/$orgId/runs" params={{ orgId }} className="text-sm text-indigo-700 hover:underline">
          ← Runs
        </Link>
        <PageHeader
          title={`Run of ${r.workflowName}`}
          description={<span className="font-mono text-xs">{r.id}</span>}
          actions={
            <>
              <span className="inline-flex items-center gap-1.5 text-xs text-slate-600">
                <span aria-hidden="true" className={`size-2 rounded-full ${live.dot}`} />
                {live.text}
              </span>
              <Link
                to="/orgs/$orgId/workflows/$workflowId"
                params={{ orgId, workflowId: r.workflowId }}
                className="rounded-md px-3.5 py-2 text-sm font-medium text-slate-800 ring-1 ring-slate-300 hover:bg-slate-50"
              >
                Open workflow
              </Link>
              {canWrite && !final ? (
                <Button variant="danger" onClick={() => setCanceling(true)}>
                  Cancel run
                </Button>
              ) : null}
            </>
          }
        />
        <dl className="grid grid-cols-2 gap-4 rounded-lg bg-white p-4 text-sm shadow-xs ring-1 ring-slate-200 md:grid-cols-6">
          <div>
            <dt className="text-slate-500">Status</dt>
            <dd className="mt-0.5">
              <span role="status" aria-label="Run status">
                <Badge>{status ?? r.status}</Badge>
              </span>
              {r.testMode ? (
                <span className="ml-1.5">
                  <Badge tone="violet">test mode</Badge>
                </span>
              ) : null}
            </dd>
          </div>
          <div>
            <dt className="text-slate-500">Trigger</dt>
            <dd className="mt-0.5">{triggerLabel(r.trigger)}</dd>
          </div>
          <div>
            <dt className="text-slate-500">Cost</dt>
            <dd className="mt-0.5">{formatUsd(costUsd)}</dd>
          </div>
          <div>
            <dt className="text-slate-500">Started</dt>
            <dd className="mt-0.5">{formatDateTime(startedAt ?? r.createdAt)}</dd>
          </div>
          <div>
            <dt className="text-slate-500">Finished</dt>
            <dd className="mt-0.5">{final ? formatDateTime(finishedAt) : '—'}</dd>
          </div>
          <div>
            <dt className="text-slate-500">Duration</dt>
            <dd className="mt-0.5">{startedAt && finishedAt && final ? duration(new Date(finishedAt).getTime() - new Date(startedAt).getTime()) : '—'}</dd>
          </div>
        </dl>
      </div>

      {status === 'FAILED' || (r.error && r.status === 'FAILED') ? (
        <div role="alert" className="rounded-lg border border-red-200 bg-red-50 p-4 text-sm text-red-800">
          <p className="font-semibold">The run failed{r.error?.nodeId ? ` at ${nodes.get(String(r.error.nodeId))?.name ?? String(r.error.nodeId)}` : ''}</p>
          <p className="mt-1">
            {r.error
              ? `${String(r.error.message ?? '')}${r.error.code ? ` (${String(r.error.code)})` : ''}`
              : (steps.find((s) => s.status === 'FAILED')?.error ?? '')}
          </p>
        </div>
      ) : null}

      {waiting ? (
        <div className="rounded-lg border border-amber-200 bg-amber-50 p-4 text-sm text-amber-900">
          <p className="font-semibold">Waiting</p>
          {approvals.data?.items.length ? (
            <ul className="mt-1 space-y-1">
              {approvals.data.items.map((a) => (
                <li key={a.id}>
                  Approval requested: “{a.title}”{a.expiresAt ? `, expires ${formatDateTime(a.expiresAt)}` : ''}.{' '}
                  <Link to="/orgs/$orgId/approvals" params={{ orgId }} search={{ approval: a.id }} className="font-medium underline">
                    Review the approval
                  </Link>
                </li>
              ))}
            </ul>
          ) : (
            <p className="mt-1">A step waits for an approval or a delay; the run resumes by itself.</p>
          )}
        </div>
      ) : null}

      <section aria-labelledby="steps-title">
        <h2 id="steps-title" className="mb-3 text-lg font-semibold text-slate-900">
          Steps
        </h2>
        {steps.length === 0 ? (
          <p className="rounded-lg border border-dashed border-slate-300 bg-white p-6 text-sm text-slate-600">
            {final ? 'No step ran.' : 'Queued: the steps appear here as they start.'}
          </p>
        ) : (
          <StepList steps={steps} nodes={nodes} logs={timeline.logs} />
        )}
      </section>

      {runLogs.length ? (
        <section aria-label="Run log">
          <h2 className="mb-2 text-lg font-semibold text-slate-900">Log</h2>
          <LogLines lines={runLogs} />
        </section>
      ) : null}

      <details className="rounded-lg bg-white ring-1 ring-slate-200">
        <summary className="cursor-pointer px-4 py-3 text-sm font-semibold text-slate-900">Input</summary>
        <pre className="max-h-80 overflow-auto px-4 pb-4 text-xs text-slate-800">{JSON.stringify(r.input, null, 2)}</pre>
      </details>

      <Modal
        open={canceling}
        onOpenChange={(open) => {
          setCanceling(open);
          if (!open) cancel.reset();
        }}
        title="Cancel run"
        description="The step in progress is interrupted and no further step runs. This cannot be undone."
      >
        <FormError error={cancel.error} />
        <div className="mt-4 flex justify-end gap-2">
          <Button onClick={() => setCanceling(false)}>Keep running</Button>
          <Button variant="danger" onClick={cancelRun} disabled={cancel.isPending}>
            Cancel run
          </Button>
        </div>
      </Modal>
    </div>
  );
}
