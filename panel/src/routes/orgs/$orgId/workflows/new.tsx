import { createFileRoute, Link } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { templateQuery } from '../../../../queries/workflows';
import { ErrorState, Loading } from '../../../../components/ui/states';
import { EditorPage } from '../../../../components/workflows/editor-page';

interface NewSearch {
  /** A template to start from (GET …/templates/:id): opened on the canvas, created only when saved. */
  template?: string;
}

export const Route = createFileRoute('/orgs/$orgId/workflows/new')({
  validateSearch: (raw: Record<string, unknown>): NewSearch => ({ template: typeof raw.template === 'string' && raw.template ? raw.template : undefined }),
  component: NewWorkflowPage,
});

/** A new workflow on the canvas editor: blank, or from a template; nothing is created until it is saved. */
function NewWorkflowPage() {
  const { orgId } = Route.useParams();
  const { template: templateId } = Route.useSearch();
  const template = useQuery({ ...templateQuery(orgId, templateId), enabled: Boolean(templateId) });
  if (templateId && template.isPending) return <Loading label="Loading the template…" />;
  if (templateId && template.isError) {
    return (
      <div className="space-y-3">
        <ErrorState error={template.error} retry={() => void template.refetch()} />
        <Link to="/orgs/$orgId/workflows/templates" params={{ orgId }} className="text-sm text-indigo-700 underline">
          All templates
        </Link>
      </div>
    );
  }
  return <EditorPage orgId={orgId} workflow={null} template={templateId && template.data ? template.data : null} />;
}
