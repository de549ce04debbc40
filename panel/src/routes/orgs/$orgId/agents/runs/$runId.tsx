import { useMemo } from 'react';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { Schemas } from '../../../../../api/client';
import { agentRunKeys, agentRunQuery, useCancelAgentRun } from '../../../../../queries/agents';
import { useRole } from '../../../../../lib/account';
import { formatDateTime, formatUsd } from '../../../../../lib/format';
import { Badge } from '../../../../../components/ui/page';
import { Button } from '../../../../../components/ui/button';
import { Empty, ErrorState, FormError, Loading } from '../../../../../components/ui/states';
import { StepList } from '../../../../../components/agents/step-list';
import { useAgentRunStream } from '../../../../../components/agents/use-run-stream';
import { isFinal, statusLabel, withRecordSteps } from '../../../../../components/agents/steps';
import { typeLabel } from '../../../../../components/agents/agent-types';
import { formatDuration } from '../../../../../components/agents/time';
import { HrefLink } from '../../../../../components/reports/href-link';
import { panelPath } from '../../../../../lib/links';

type AgentRun = Schemas['AgentRun'];

export const Route = createFileRoute('/orgs/$orgId/agents/runs/$runId')({
  component: AgentRunPage,
});

function AgentRunPage() {
  const { orgId, runId } = Route.useParams();
  const queryClient = useQueryClient();
  const { canWrite } = useRole(orgId);
  const run = useQuery(agentRunQuery(orgId, runId));
  const final = isFinal(run.data?.status);
  // Live steps while the run works; once it has ended the record holds them all.
  const stream = useAgentRunStream(
    orgId,
    runId,
    run.isSuccess && !final,
    () => void queryClient.invalidateQueries({ queryKey: agentRunKeys.detail(orgId, runId) }),
  );
  const steps = useMemo(() => withRecordSteps(stream.steps, run.data?.steps), [stream.steps, run.data?.steps]);
  const cancel = useCancelAgentRun(orgId, runId);

  if (run.isPending) return <Loading label="Loading the run…" />;
  if (run.isError) return <ErrorState error={run.error} retry={() => void run.refetch()} />;
  const r = run.data;
  // The stream's `done` can arrive a moment before the record is fetched again.
  const status = stream.done && !final ? stream.done.status : r.status;
  const usage = { ...r.usage, ...(stream.done && !final ? stream.done.usage : {}) };
  const ended = isFinal(status);
  const duration = r.startedAt && r.finishedAt ? Date.parse(r.finishedAt) - Date.parse(r.startedAt) : null;

  return (
    <div className="space-y-6">
      <nav aria-label="Breadcrumb" className="text-sm text-slate-500">
        <Link to="/orgs/$orgId/agents" params={{ orgId }} className="hover:underline">
          Agents
        </Link>{' '}
        <span aria-hidden="true">/</span> Run
      </nav>
      <header className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <h1 className="text-2xl font-semibold text-slate-900">{typeLabel(r.type)} run</h1>
          <p className="mt-1 max-w-3xl text-sm whitespace-pre-wrap text-slate-700">{r.task}</p>
          <p className="mt-1 text-xs text-slate-500">
            Started {formatDateTime(r.createdAt)} · model <span className="font-mono">{r.modelId}</span>
          </p>
        </div>
        <div className="flex items-center gap-3">
          <span aria-live="polite">
            <Badge>{statusLabel(status)}</Badge>
          </span>
          {canWrite && !ended ? (
            <Button variant="danger" disabled={cancel.isPending} onClick={() => cancel.mutate()}>
              Cancel run
            </Button>
          ) : null}
        </div>
      </header>
      <FormError error={cancel.error} />

      <section aria-label="Cost and usage" className="grid grid-cols-2 gap-3 sm:grid-cols-5">
        <Figure label="Cost" value={formatUsd(usage.costUsd)} />
        <Figure label="Input tokens" value={(usage.inputTokens ?? 0).toLocaleString()} />
        <Figure label="Output tokens" value={(usage.outputTokens ?? 0).toLocaleString()} />
        <Figure label="Steps" value={`${steps.length} of at most ${r.maxSteps}`} />
        <Figure label="Duration" value={ended ? formatDuration(duration) : 'running…'} />
      </section>

      {ended ? <Result run={r} orgId={orgId} status={status} summary={stream.done?.summary ?? r.summary} /> : null}

      <section aria-labelledby="steps-title">
        <div className="mb-3 flex items-center justify-between">
          <h2 id="steps-title" className="text-lg font-semibold text-slate-900">
            Steps
          </h2>
          <p role="status" className="text-sm text-slate-500">
            {ended
              ? `${steps.length} steps`
              : stream.state === 'live'
                ? `Live · ${steps.length} steps so far`
                : stream.state === 'failed'
                  ? 'Live updates stopped'
                  : 'Connecting…'}
          </p>
        </div>
        {stream.error ? (
          <p role="alert" className="mb-3 text-sm text-red-700">
            {stream.error}
          </p>
        ) : null}
        {steps.length === 0 ? (
          ended ? (
            <Empty title="No steps recorded">The run ended before its first step.</Empty>
          ) : (
            <Loading label="Waiting for the first step…" />
          )
        ) : (
          <StepList steps={steps} />
        )}
      </section>
    </div>
  );
}

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <div className="rounded-lg bg-white p-3 shadow-xs ring-1 ring-slate-200">
      <p className="text-xs font-medium text-slate-500">{label}</p>
      <p className="mt-1 text-lg font-semibold text-slate-900 tabular-nums">{value}</p>
    </div>
  );
}

function Result({ run, orgId, status, summary }: { run: AgentRun; orgId: string; status: string; summary: string | null }) {
  const good = status === 'succeeded';
  const data = outputData(run.output);
  return (
    <section aria-label="Result" className={`rounded-lg p-4 ring-1 ${good ? 'bg-emerald-50 ring-emerald-200' : 'bg-amber-50 ring-amber-200'}`}>
      <h2 className="text-sm font-semibold text-slate-900">Result</h2>
      <p className="mt-1 text-sm whitespace-pre-wrap text-slate-800">{summary ?? (good ? 'Done.' : statusLabel(status))}</p>
      {run.error ? <p className="mt-2 text-sm text-red-700">{run.error}</p> : null}
      <div className="mt-3 flex flex-wrap gap-3 text-sm">
        {run.reportId ? (
          <Link to="/orgs/$orgId/reports/$reportId" params={{ orgId, reportId: run.reportId }} className="font-medium text-indigo-700 hover:underline">
            Open the report
          </Link>
        ) : null}
        {run.workflowRunId ? <HrefLink href={panelPath(orgId, `/runs/${run.workflowRunId}`)!}>Open the workflow run</HrefLink> : null}
      </div>
      {data ? (
        <details className="mt-3">
          <summary className="cursor-pointer text-xs font-medium text-slate-600">Output data</summary>
          <pre className="mt-1 max-h-64 overflow-auto rounded bg-white p-2 text-xs text-slate-700">{JSON.stringify(data, null, 2)}</pre>
        </details>
      ) : null}
    </section>
  );
}

/** The run's output without its text (the summary shows that): the data worth a look, or null. */
function outputData(output: unknown): unknown {
  if (output === null || output === undefined) return null;
  if (typeof output !== 'object' || Array.isArray(output)) return output;
  const rest = Object.fromEntries(Object.entries(output).filter(([key]) => key !== 'text'));
  return Object.keys(rest).length ? rest : null;
}
