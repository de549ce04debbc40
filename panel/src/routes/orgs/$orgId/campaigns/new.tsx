import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../../api/client';
import { PageHeader } from '../../../../components/ui/page';
import { CampaignForm } from '../../../../components/campaigns/campaign-form';
import { createBody, emptyCampaign, type CampaignFields } from '../../../../components/campaigns/form';

export const Route = createFileRoute('/orgs/$orgId/campaigns/new')({ component: NewCampaignPage });

function NewCampaignPage() {
  const { orgId } = Route.useParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const create = useMutation({
    mutationFn: ({ fields, channel }: { fields: CampaignFields; channel: string | undefined }) => unwrap(api.POST('/api/v1/orgs/{orgId}/campaigns', { params: { path: { orgId } }, body: createBody(fields, channel) })),
    onSuccess: async (campaign) => {
      queryClient.setQueryData([orgId, 'campaigns', 'one', campaign.id], campaign);
      await queryClient.invalidateQueries({ queryKey: [orgId, 'campaigns', 'list'] });
      await navigate({ to: '/orgs/$orgId/campaigns/$campaignId', params: { orgId, campaignId: campaign.id } });
    },
  });
  return (
    <div className="max-w-4xl">
      <Link to="/orgs/$orgId/campaigns" params={{ orgId }} className="text-sm text-indigo-700 hover:underline">← Campaigns</Link>
      <div className="mt-2">
        <PageHeader title="New campaign" description="Saved as a draft: start it from its page once a test looks right." />
      </div>
      <CampaignForm
        orgId={orgId}
        initial={emptyCampaign()}
        error={create.error}
        pending={create.isPending}
        submitLabel="Create campaign"
        onSubmit={(fields, channel) => create.mutate({ fields, channel })}
        onCancel={() => void navigate({ to: '/orgs/$orgId/campaigns', params: { orgId } })}
      />
    </div>
  );
}
