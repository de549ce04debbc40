import { useState } from 'react';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { runsQuery } from '../../../../../queries/runs';
import { useDeleteWorkflow, useRotateWebhookToken, useUpdateWorkflow, workflowQuery, type Workflow } from '../../../../../queries/workflows';
import { useRole } from '../../../../../lib/account';
import { formatDateTime, formatUsd } from '../../../../../lib/format';
import { Badge, PageHeader } from '../../../../../components/ui/page';
import { Button } from '../../../../../components/ui/button';
import { Modal } from '../../../../../components/ui/dialog';
import { SecretOnce } from '../../../../../components/ui/copy';
import { Empty, ErrorState, FormError, Loading } from '../../../../../components/ui/states';
import { QueryState } from '../../../../../components/ui/query-state';
import { DefinitionEditor } from '../../../../../components/workflows/definition-editor';
import { RunDialog } from '../../../../../components/workflows/run-dialog';
import { NodeTypesReference } from '../../../../../components/workflows/node-types';
import { triggerSummary } from '../../../../../components/workflows/trigger';
import { RunsTable } from '../../../../../components/runs/runs-table';

export const Route = createFileRoute('/orgs/$orgId/workflows/$workflowId/')({
  component: WorkflowPage,
});

function WorkflowPage() {
  const { orgId, workflowId } = Route.useParams();
  const navigate = useNavigate();
  const { canWrite } = useRole(orgId);
  const [running, setRunning] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const workflow = useQuery(workflowQuery(orgId, workflowId));
  const toggle = useUpdateWorkflow(orgId, workflowId);

  if (workflow.isPending) return <Loading label="Loading the workflow…" />;
  if (workflow.isError) {
    return (
      <div className="space-y-3">
        <ErrorState error={workflow.error} retry={() => void workflow.refetch()} />
        <Link to="/orgs/$orgId/workflows" params={{ orgId }} className="text-sm text-indigo-700 underline">
          All workflows
        </Link>
      </div>
    );
  }
  const w = workflow.data;

  return (
    <div className="space-y-6">
      <div>
        <Link to="/orgs/$orgId/workflows" params={{ orgId }} className="text-sm text-indigo-700 hover:underline">
          ← Workflows
        </Link>
        <PageHeader
          title={w.name}
          description={
            <span className="flex flex-wrap items-center gap-2">
              <Badge tone={w.active ? 'green' : 'slate'}>{w.active ? 'Active' : 'Inactive'}</Badge>
              <span>{triggerSummary(w.trigger)}</span>
              <span aria-hidden="true">·</span>
              <span>
                {w.nodes.length} {w.nodes.length === 1 ? 'step' : 'steps'}
              </span>
              {w.budgetUsd !== null ? (
                <>
                  <span aria-hidden="true">·</span>
                  <span>budget {formatUsd(w.budgetUsd)} per run</span>
                </>
              ) : null}
              <span aria-hidden="true">·</span>
              <span>changed {formatDateTime(w.updatedAt)}</span>
            </span>
          }
          actions={
            <>
              <Link
                to="/orgs/$orgId/workflows/$workflowId/edit"
                params={{ orgId, workflowId: w.id }}
                className="inline-flex items-center rounded-md bg-indigo-50 px-3.5 py-2 text-sm font-medium text-indigo-700 ring-1 ring-indigo-200 hover:bg-indigo-100"
              >
                Open editor
              </Link>
              {canWrite ? (
                <>
                  <Button onClick={() => toggle.mutate({ body: { active: !w.active } })} disabled={toggle.isPending}>
                    {w.active ? 'Deactivate' : 'Activate'}
                  </Button>
                  <Button variant="ghost" onClick={() => setDeleting(true)}>
                    Delete
                  </Button>
                  <Button variant="primary" onClick={() => setRunning(true)}>
                    Run
                  </Button>
                </>
              ) : null}
            </>
          }
        />
        <FormError error={toggle.error} />
        {w.description ? <p className="-mt-3 max-w-3xl text-sm text-slate-600">{w.description}</p> : null}
      </div>

      {canWrite && w.trigger.type === 'trigger.webhook' ? <WebhookUrl orgId={orgId} workflow={w} /> : null}

      <DefinitionEditor key={w.id} orgId={orgId} workflow={w} canWrite={canWrite} />

      <RecentRuns orgId={orgId} workflowId={w.id} />
      <NodeTypesReference orgId={orgId} />

      {canWrite ? (
        <RunDialog
          orgId={orgId}
          workflow={w}
          open={running}
          onOpenChange={setRunning}
          onStarted={(runId) => void navigate({ to: '/orgs/$orgId/runs/$runId', params: { orgId, runId } })}
        />
      ) : null}
      {canWrite ? (
        <DeleteDialog
          orgId={orgId}
          workflow={w}
          open={deleting}
          onOpenChange={setDeleting}
          onDeleted={() => void navigate({ to: '/orgs/$orgId/workflows', params: { orgId } })}
        />
      ) : null}
    </div>
  );
}

function RecentRuns({ orgId, workflowId }: { orgId: string; workflowId: string }) {
  const query = { workflowId, pageSize: 5 };
  const runs = useQuery(runsQuery(orgId, query));
  return (
    <section aria-labelledby="recent-runs">
      <div className="mb-2 flex items-baseline justify-between">
        <h2 id="recent-runs" className="text-lg font-semibold text-slate-900">
          Recent runs
        </h2>
        <Link to="/orgs/$orgId/runs" params={{ orgId }} search={{ workflowId }} className="text-sm text-indigo-700 hover:underline">
          All runs of this workflow
        </Link>
      </div>
      <QueryState
        query={runs}
        loading="Loading runs…"
        isEmpty={(data) => data.items.length === 0}
        empty={<Empty title="Not run yet">Runs start when the trigger fires, or with Run.</Empty>}
      >
        {(data) => <RunsTable orgId={orgId} runs={data.items} label="Recent runs" showWorkflow={false} />}
      </QueryState>
    </section>
  );
}

function WebhookUrl({ orgId, workflow }: { orgId: string; workflow: Workflow }) {
  const rotate = useRotateWebhookToken(orgId, workflow.id);
  return (
    <section aria-label="Webhook URL" className="rounded-lg bg-white p-4 ring-1 ring-slate-200">
      <p className="text-sm text-slate-700">
        Other systems start this workflow by POSTing JSON to its webhook URL. The URL holds a secret token and is shown once: create a new one to see it (the
        previous one stops working).
      </p>
      {rotate.data ? (
        <div className="mt-3">
          <SecretOnce label="Webhook URL" value={rotate.data.webhookUrl} />
        </div>
      ) : null}
      <FormError error={rotate.error} />
      <Button className="mt-3" onClick={() => rotate.mutate()} disabled={rotate.isPending}>
        New webhook URL
      </Button>
    </section>
  );
}

function DeleteDialog({
  orgId,
  workflow,
  open,
  onOpenChange,
  onDeleted,
}: {
  orgId: string;
  workflow: Workflow;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onDeleted: () => void;
}) {
  const remove = useDeleteWorkflow(orgId);
  return (
    <Modal
      open={open}
      onOpenChange={onOpenChange}
      title="Delete workflow"
      description={`"${workflow.name}" stops running and is removed. Its past runs stay readable.`}
    >
      <FormError error={remove.error} />
      <div className="mt-4 flex justify-end gap-2">
        <Button onClick={() => onOpenChange(false)}>Cancel</Button>
        <Button
          variant="danger"
          onClick={() =>
            remove.mutate(workflow.id, {
              onSuccess: () => {
                onOpenChange(false);
                onDeleted();
              },
            })
          }
          disabled={remove.isPending}
        >
          Delete workflow
        </Button>
      </div>
    </Modal>
  );
}
