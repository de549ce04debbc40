import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { useCreateCampaign } from '../../../../queries/campaigns';
import { PageHeader } from '../../../../components/ui/page';
import { CampaignForm } from '../../../../components/campaigns/campaign-form';
import { createBody, emptyCampaign, type CampaignFields } from '../../../../components/campaigns/form';

export const Route = createFileRoute('/orgs/$orgId/campaigns/new')({ component: NewCampaignPage });

function NewCampaignPage() {
  const { orgId } = Route.useParams();
  const navigate = useNavigate();
  const create = useCreateCampaign(orgId);
  const submit = (fields: CampaignFields, channel: string | undefined) =>
    create.mutate(createBody(fields, channel), {
      onSuccess: (campaign) => navigate({ to: '/orgs/$orgId/campaigns/$campaignId', params: { orgId, campaignId: campaign.id } }),
    });
  return (
    <div className="max-w-4xl">
      <Link to="/orgs/$orgId/campaigns" params={{ orgId }} className="text-sm text-indigo-700 hover:underline">
        ← Campaigns
      </Link>
      <div className="mt-2">
        <PageHeader title="New campaign" description="Saved as a draft: start it from its page once a test looks right." />
      </div>
      <CampaignForm
        orgId={orgId}
        initial={emptyCampaign()}
        error={create.error}
        pending={create.isPending}
        submitLabel="Create campaign"
        onSubmit={submit}
        onCancel={() => void navigate({ to: '/orgs/$orgId/campaigns', params: { orgId } })}
      />
    </div>
  );
}
