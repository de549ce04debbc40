import { createFileRoute } from '@tanstack/react-router';
import { TemplatesGallery } from '../../../../components/workflows/templates-gallery';

export const Route = createFileRoute('/orgs/$orgId/workflows/templates')({
  component: TemplatesPage,
});

function TemplatesPage() {
  const { orgId } = Route.useParams();
  return <TemplatesGallery orgId={orgId} />;
}
