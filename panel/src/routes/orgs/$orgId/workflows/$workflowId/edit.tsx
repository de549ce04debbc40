import { createFileRoute, Link } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { workflowEditorQuery } from '../../../../../queries/workflows';
import { ErrorState, Loading } from '../../../../../components/ui/states';
import { EditorPage } from '../../../../../components/workflows/editor-page';

export const Route = createFileRoute('/orgs/$orgId/workflows/$workflowId/edit')({
  component: EditWorkflowPage,
});

/** A saved workflow on the canvas editor. */
function EditWorkflowPage() {
  const { orgId, workflowId } = Route.useParams();
  const workflow = useQuery(workflowEditorQuery(orgId, workflowId));
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
  return <EditorPage orgId={orgId} workflow={workflow.data} template={null} />;
}
