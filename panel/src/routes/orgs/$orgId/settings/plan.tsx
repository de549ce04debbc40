import { createFileRoute } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { planQuery } from '../../../../queries/settings';
import { ErrorState, Loading } from '../../../../components/ui/states';
import { PlanUsage } from '../../../../components/settings/plan-usage';

export const Route = createFileRoute('/orgs/$orgId/settings/plan')({ component: PlanSettings });

function PlanSettings() {
  const { orgId } = Route.useParams();
  const plan = useQuery(planQuery(orgId));
  if (plan.isPending) return <Loading label="Loading plan…" />;
  if (plan.isError) return <ErrorState error={plan.error} retry={() => void plan.refetch()} />;
  return <PlanUsage plan={plan.data} />;
}
