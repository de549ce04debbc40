import { createFileRoute, Link } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { reportQuery } from '../../../../queries/reports';
import { useRole } from '../../../../lib/account';
import { formatDateTime } from '../../../../lib/format';
import { Badge } from '../../../../components/ui/page';
import { ErrorState, Loading } from '../../../../components/ui/states';
import { metricLabel, metricValue, reportTypeLabel } from '../../../../components/reports/describe';
import { Markdown } from '../../../../components/reports/markdown';
import { Recommendations } from '../../../../components/reports/recommendations';
import { typeLabel } from '../../../../components/agents/agent-types';

export const Route = createFileRoute('/orgs/$orgId/reports/$reportId')({
  component: ReportPage,
});

function ReportPage() {
  const { orgId, reportId } = Route.useParams();
  const { canWrite } = useRole(orgId);
  const report = useQuery(reportQuery(orgId, reportId));
  if (report.isPending) return <Loading label="Loading the report…" />;
  if (report.isError) return <ErrorState error={report.error} retry={() => void report.refetch()} />;
  const r = report.data;
  const metrics = Object.entries(r.metrics);
  return (
    <div className="max-w-5xl space-y-6">
      <nav aria-label="Breadcrumb" className="text-sm text-slate-500">
        <Link to="/orgs/$orgId/reports" params={{ orgId }} className="hover:underline">
          Reports
        </Link>{' '}
        <span aria-hidden="true">/</span> {reportTypeLabel(r.type)}
      </nav>
      <header>
        <div className="flex flex-wrap items-center gap-2">
          <Badge tone="violet">{reportTypeLabel(r.type)}</Badge>
          <span className="text-xs text-slate-500">
            {formatDateTime(r.createdAt)}
            {r.agentType ? <> · by the {typeLabel(r.agentType).toLowerCase()} agent</> : null}
          </span>
        </div>
        <h1 className="mt-2 text-2xl font-semibold text-slate-900">{r.title}</h1>
        <p className="mt-2 text-slate-700">{r.summary}</p>
        {r.agentRunId ? (
          <p className="mt-2 text-sm">
            <Link to="/orgs/$orgId/agents/runs/$runId" params={{ orgId, runId: r.agentRunId }} className="font-medium text-indigo-700 hover:underline">
              See the agent run that wrote it
            </Link>
          </p>
        ) : null}
      </header>

      {metrics.length ? (
        <section aria-labelledby="metrics-title">
          <h2 id="metrics-title" className="mb-3 text-lg font-semibold text-slate-900">
            Metrics
          </h2>
          <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3 lg:grid-cols-4">
            {metrics.map(([key, value]) => (
              <div key={key} className="rounded-lg bg-white p-3 shadow-xs ring-1 ring-slate-200">
                <dt className="text-xs font-medium text-slate-500">{metricLabel(key)}</dt>
                <dd className="mt-1 truncate text-lg font-semibold text-slate-900 tabular-nums" title={metricValue(key, value)}>
                  {metricValue(key, value)}
                </dd>
              </div>
            ))}
          </dl>
        </section>
      ) : null}

      <section aria-labelledby="recommendations-title">
        <h2 id="recommendations-title" className="mb-3 text-lg font-semibold text-slate-900">
          Recommendations
        </h2>
        <Recommendations orgId={orgId} report={r} canWrite={canWrite} />
      </section>

      {r.body ? (
        <section aria-labelledby="details-title" className="rounded-lg bg-white p-5 shadow-xs ring-1 ring-slate-200">
          <h2 id="details-title" className="mb-2 text-lg font-semibold text-slate-900">
            Details
          </h2>
          <Markdown text={r.body} />
        </section>
      ) : null}
    </div>
  );
}
