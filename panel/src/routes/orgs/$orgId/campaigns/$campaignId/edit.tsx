import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { campaignQuery, useUpdateCampaign } from '../../../../../queries/campaigns';
import { PageHeader } from '../../../../../components/ui/page';
import { Empty, ErrorState, Loading } from '../../../../../components/ui/states';
import { CampaignForm } from '../../../../../components/campaigns/campaign-form';
import { fieldsOf, patchBody, type CampaignFields } from '../../../../../components/campaigns/form';
import { EDITABLE, statusLabel } from '../../../../../components/campaigns/model';

export const Route = createFileRoute('/orgs/$orgId/campaigns/$campaignId/edit')({ component: EditCampaignPage });

function EditCampaignPage() {
  const { orgId, campaignId } = Route.useParams();
  const navigate = useNavigate();
  // Fresh on open: the form starts from what is stored now, not from a cached copy.
  const campaign = useQuery({ ...campaignQuery(orgId, campaignId), staleTime: 0, refetchOnWindowFocus: false });
  const toDetail = () => navigate({ to: '/orgs/$orgId/campaigns/$campaignId', params: { orgId, campaignId } });
  const save = useUpdateCampaign(orgId, campaignId);
  const submit = (fields: CampaignFields, channel: string | undefined) =>
    save.mutate(patchBody(fields, channel, campaign.data!), { onSuccess: () => toDetail() });

  const back = (
    <Link to="/orgs/$orgId/campaigns/$campaignId" params={{ orgId, campaignId }} className="text-sm text-indigo-700 hover:underline">
      ← {campaign.data?.name ?? 'Campaign'}
    </Link>
  );
  if (campaign.isPending) return <Loading label="Loading campaign…" />;
  if (campaign.isError)
    return (
      <div className="space-y-4">
        {back}
        <ErrorState error={campaign.error} retry={() => void campaign.refetch()} />
      </div>
    );
  const c = campaign.data;
  return (
    <div className="max-w-4xl">
      {back}
      <div className="mt-2">
        <PageHeader
          title={`Edit ${c.name}`}
          description={c.startedAt ? 'Started: the audience and the inbox stay; steps, limits and the window can change.' : undefined}
        />
      </div>
      {EDITABLE.includes(c.status) ? (
        <CampaignForm
          key={c.id}
          orgId={orgId}
          campaign={c}
          initial={fieldsOf(c)}
          error={save.error}
          pending={save.isPending}
          submitLabel="Save campaign"
          onSubmit={submit}
          onCancel={() => void toDetail()}
        />
      ) : (
        <Empty title={`A ${statusLabel(c.status).toLowerCase()} campaign cannot be changed`}>
          {c.status === 'RUNNING' ? 'Pause it to change it.' : 'Only draft, scheduled and paused campaigns can change.'}
        </Empty>
      )}
    </div>
  );
}
