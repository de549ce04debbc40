import { createFileRoute, Link } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../../../api/client';
import { ErrorState, Loading } from '../../../../../components/ui/states';
import { EditorPage } from '../../../../../components/workflows/editor-page';

export const Route = createFileRoute('/orgs/$orgId/workflows/$workflowId/edit')({
  component: EditWorkflowPage,
});

/** A saved workflow on the canvas editor. */
function EditWorkflowPage() {
  const { orgId, workflowId } = Route.useParams();
  const workflow = useQuery({
    // Its own entry, fetched fresh each time the editor opens (the version it saves against must be
    // the stored one), and not refetched behind the author's back: the editor keeps its own copy.
    queryKey: [orgId, 'workflows', 'one', workflowId, 'editor'],
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/workflows/{id}', { params: { path: { orgId, id: workflowId } } })),
    gcTime: 0,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  if (workflow.isPending) return <Loading label="Loading the workflow…" />;
  if (workflow.isError) {
    return (
      <div className="space-y-3">
        <ErrorState error={workflow.error} retry={() => void workflow.refetch()} />
        <Link to="/orgs/$orgId/workflows" params={{ orgId }} className="text-sm text-indigo-700 underline">All workflows</Link>
      </div>
    );
  }
  return <EditorPage orgId={orgId} workflow={workflow.data} template={null} />;
}
