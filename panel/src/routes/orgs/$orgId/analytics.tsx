import { useMemo, useRef, useState } from 'react';
import { createFileRoute, Link } from '@tanstack/react-router';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { compact, int, oneOf, PAGE, str } from '../../../lib/list';
import { useRole } from '../../../lib/account';
import { useOrgEvents } from '../../../lib/stream';
import { formatDateTime, relative } from '../../../lib/format';
import { isDate, localDate } from '../../../components/dashboard/chart-data';
import { ChartCard, COLORS } from '../../../components/dashboard/charts';
import { PageHeader } from '../../../components/ui/page';
import { Empty } from '../../../components/ui/states';
import { QueryState } from '../../../components/ui/query-state';
import { DailyLines } from '../../../components/analytics/charts';
import {
  analyticsRange,
  dailyRows,
  figures,
  formatMetric,
  METRICS,
  RANGE_LABELS,
  RANGES,
  SOURCE_LABELS,
  type Figures,
  type MetricKey,
  type RangePreset,
  type Source,
} from '../../../components/analytics/data';
import { RulesSection } from '../../../components/analytics/rules-section';
import { analyticsKeys, dailyQuery } from '../../../queries/analytics';
import { googleIntegrationsQuery, integrationKeys, latestSyncRunQuery } from '../../../queries/content';
import { useList } from '../../../lib/use-list';
import { describeSources, type GoogleConfig } from '../../../components/content/integrations/google';

interface Search {
  /** The Google integration shown (the first one when absent). */
  integration?: string;
  range?: RangePreset;
  from?: string;
  to?: string;
  rulesPage?: number;
}

export const Route = createFileRoute('/orgs/$orgId/analytics')({
  validateSearch: (raw: Record<string, unknown>): Search => {
    const rulesPage = int(raw.rulesPage, PAGE);
    return compact({
      integration: str(raw.integration)?.slice(0, 64),
      range: oneOf(raw.range, RANGES),
      from: isDate(raw.from) ? raw.from : undefined,
      to: isDate(raw.to) ? raw.to : undefined,
      rulesPage: rulesPage === PAGE ? undefined : rulesPage,
    });
  },
  component: AnalyticsPage,
});

/** Events that change what this page shows: its queries are fetched again (at most every second). */
const LIVE = /^(analytics\.(synced|threshold)|integration\.)/;

function AnalyticsPage() {
  const { orgId } = Route.useParams();
  const search = Route.useSearch();
  const queryClient = useQueryClient();
  const { canWrite } = useRole(orgId);
  const list = useList(search);
  // The rules' page is a new history entry (Back returns to the previous page); the rest replaces it.
  const setSearch = (next: Partial<Search>, replace = true) => list.setSearch(next, { keepPage: true, push: !replace });
  const today = localDate(new Date());
  const range = analyticsRange(search, today);

  const google = useQuery(googleIntegrationsQuery(orgId));
  const integrations = google.data?.items ?? [];
  const selected = integrations.find((i) => i.id === search.integration) ?? integrations[0];
  const config = (selected?.config ?? {}) as GoogleConfig;
  const configured = Boolean(config.propertyId || config.siteUrl);

  const daily = useQuery({
    ...dailyQuery(orgId, { integrationId: selected?.id ?? '', from: range.from, to: range.to }),
    enabled: Boolean(selected),
    placeholderData: keepPreviousData,
  });
  const lastSync = useQuery({
    ...latestSyncRunQuery(orgId, selected?.id),
    enabled: Boolean(selected),
  });

  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);
  useOrgEvents((type) => {
    if (!LIVE.test(type) || pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      void queryClient.invalidateQueries({ queryKey: analyticsKeys.all(orgId) });
      void queryClient.invalidateQueries({ queryKey: integrationKeys.all(orgId) });
    }, 1000);
  });

  const items = daily.data?.items;
  const rows = useMemo(() => (items ? dailyRows(items, range.from, range.to) : []), [items, range.from, range.to]);
  const figs = useMemo(() => figures(items ?? [], range.from, range.to), [items, range.from, range.to]);
  const latest = lastSync.data?.items[0];

  return (
    <div>
      <PageHeader
        title="Analytics"
        description={
          selected
            ? `${range.custom ? `${range.from} to ${range.to}` : RANGE_LABELS[search.range ?? '28d']}, per day, from Google Analytics 4 and Search Console.`
            : 'Daily traffic and search figures from Google Analytics 4 and Search Console, with alert rules.'
        }
        actions={
          integrations.length > 0 ? (
            <div className="flex flex-wrap items-end gap-2">
              <label className="text-xs text-slate-600">
                Google account
                <select
                  value={selected?.id ?? ''}
                  onChange={(e) => setSearch({ integration: e.target.value || undefined })}
                  className="mt-0.5 block max-w-72 rounded-md px-2 py-2 text-sm ring-1 ring-slate-300"
                >
                  {integrations.map((i) => (
                    <option key={i.id} value={i.id}>
                      {i.name}
                    </option>
                  ))}
                </select>
              </label>
              <RangePicker key={`${range.from}:${range.to}`} search={search} range={range} onChange={setSearch} />
            </div>
          ) : null
        }
      />

      <QueryState query={google} loading="Loading your Google accounts…" retry isEmpty={() => !selected} empty={<NoGoogle orgId={orgId} />}>
        {() =>
          selected && (
            <div className="space-y-6">
              <SourceLine orgId={orgId} name={selected.name} config={config} status={selected.status} latest={latest} />
              {!configured ? (
                <Empty title={`${selected.name} reads no property or site yet`}>
                  Choose its GA4 property and Search Console site in{' '}
                  <Link to="/orgs/$orgId/settings/integrations" params={{ orgId }} className="font-medium text-indigo-700 underline">
                    Settings → Integrations
                  </Link>
                  , then sync.
                </Empty>
              ) : (
                <QueryState
                  query={daily}
                  loading="Loading the figures…"
                  retry
                  isEmpty={() => figs.sources.length === 0}
                  empty={
                    <Empty title="Nothing synced for these days">
                      {latest ? 'Choose a longer range, or sync again.' : 'The first sync has not run yet.'}{' '}
                      <Link to="/orgs/$orgId/settings/integrations" params={{ orgId }} className="font-medium text-indigo-700 underline">
                        Sync now in Settings → Integrations
                      </Link>
                      .
                    </Empty>
                  }
                >
                  {() => (
                    <>
                      {(['ga4', 'gsc'] as const)
                        .filter((s) => figs.sources.includes(s))
                        .map((source) => (
                          <SourceCharts key={source} source={source} figs={figs} rows={rows} />
                        ))}
                      {figs.sources.length === 1 ? (
                        <p className="text-sm text-slate-500">
                          {figs.sources[0] === 'ga4' ? 'No Search Console figures' : 'No GA4 figures'} for these days:{' '}
                          {figs.sources[0] === 'ga4'
                            ? config.siteUrl
                              ? 'the site has not synced yet.'
                              : 'choose a Search Console site for this account to see clicks and impressions.'
                            : config.propertyId
                              ? 'the property has not synced yet.'
                              : 'choose a GA4 property for this account to see sessions and users.'}
                        </p>
                      ) : null}
                    </>
                  )}
                </QueryState>
              )}
            </div>
          )
        }
      </QueryState>

      {google.isSuccess && integrations.length > 0 ? (
        <div className="mt-8">
          <RulesSection
            orgId={orgId}
            integrations={integrations}
            selectedIntegrationId={selected?.id}
            canWrite={canWrite}
            page={search.rulesPage ?? PAGE}
            onPage={(page) => setSearch({ rulesPage: page === PAGE ? undefined : page }, false)}
          />
        </div>
      ) : null}
    </div>
  );
}

function NoGoogle({ orgId }: { orgId: string }) {
  return (
    <Empty title="No Google account connected">
      <p>
        Connect Google to see your website's sessions, users and conversions (GA4) and your search clicks, impressions, CTR and position (Search Console) here,
        and to get alerts when they move.
      </p>
      <ol className="mx-auto mt-3 max-w-lg list-decimal space-y-1 pl-5 text-left">
        <li>
          Open{' '}
          <Link to="/orgs/$orgId/settings/integrations" params={{ orgId }} className="font-medium text-indigo-700 underline">
            Settings → Integrations
          </Link>{' '}
          and click <strong>Connect Google</strong>.
        </li>
        <li>Allow access in Google; you come back to the panel.</li>
        <li>
          Choose a GA4 property and a Search Console site, then <strong>Sync now</strong>.
        </li>
      </ol>
    </Empty>
  );
}

function SourceLine({
  orgId,
  name,
  config,
  status,
  latest,
}: {
  orgId: string;
  name: string;
  config: GoogleConfig;
  status: string;
  latest: { status: string; finishedAt?: string | null; startedAt?: string | null; error?: string | null } | undefined;
}) {
  return (
    <div className="flex flex-wrap items-center justify-between gap-2 rounded-lg bg-white px-4 py-2.5 text-sm shadow-xs ring-1 ring-slate-200">
      <p className="text-slate-700">
        <span className="font-medium text-slate-900">{name}</span>: {describeSources(config)}
      </p>
      <p className="text-slate-600">
        {status === 'error' ? <span className="font-medium text-red-700">Needs reconnecting. </span> : null}
        {!latest ? (
          'Not synced yet.'
        ) : latest.status === 'succeeded' ? (
          <span title={formatDateTime(latest.finishedAt)}>Synced {relative(latest.finishedAt)}.</span>
        ) : latest.status === 'failed' ? (
          <span className="text-red-700">Last sync failed{latest.error ? `: ${latest.error}` : ''}.</span>
        ) : (
          'Syncing…'
        )}{' '}
        <Link to="/orgs/$orgId/settings/integrations" params={{ orgId }} className="font-medium text-indigo-700 hover:underline">
          Manage
        </Link>
      </p>
    </div>
  );
}

const SOURCE_METRICS: Record<Source, MetricKey[]> = {
  ga4: ['ga4.sessions', 'ga4.users', 'ga4.conversions'],
  gsc: ['gsc.clicks', 'gsc.impressions', 'gsc.ctr', 'gsc.position'],
};

/** A source's figures over the range, then its charts. */
function SourceCharts({ source, figs, rows }: { source: Source; figs: Figures; rows: ReturnType<typeof dailyRows> }) {
  const v = (key: MetricKey) => formatMetric(key, figs.values[key]);
  return (
    <section aria-labelledby={`source-${source}`} className="space-y-3">
      <h2 id={`source-${source}`} className="text-lg font-semibold text-slate-900">
        {SOURCE_LABELS[source]}
      </h2>
      <dl aria-label={`${SOURCE_LABELS[source]} totals`} className={`grid grid-cols-2 gap-3 ${source === 'ga4' ? 'md:grid-cols-3' : 'md:grid-cols-4'}`}>
        {SOURCE_METRICS[source].map((key) => (
          <div key={key} className="rounded-lg bg-white p-3 shadow-xs ring-1 ring-slate-200">
            <dt className="text-xs font-medium text-slate-500">{totalLabel(key)}</dt>
            <dd aria-label={METRICS.find((m) => m.key === key)!.label} className="mt-1 text-2xl font-semibold text-slate-900 tabular-nums">
              {v(key)}
            </dd>
          </div>
        ))}
      </dl>
      {source === 'ga4' ? (
        <div className="grid gap-4 lg:grid-cols-2">
          <ChartCard title="Sessions and users" summary={`${v('ga4.sessions')} sessions`}>
            <DailyLines
              rows={rows}
              lines={[
                { metric: 'ga4.sessions', color: COLORS.indigo },
                { metric: 'ga4.users', color: COLORS.sky },
              ]}
            />
          </ChartCard>
          <ChartCard title="Conversions" summary={`${v('ga4.conversions')} conversions`}>
            <DailyLines rows={rows} lines={[{ metric: 'ga4.conversions', color: COLORS.emerald }]} />
          </ChartCard>
        </div>
      ) : (
        <div className="grid gap-4 lg:grid-cols-2">
          <ChartCard title="Clicks" summary={`${v('gsc.clicks')} clicks`}>
            <DailyLines rows={rows} lines={[{ metric: 'gsc.clicks', color: COLORS.indigo }]} />
          </ChartCard>
          <ChartCard title="Impressions" summary={`${v('gsc.impressions')} impressions`}>
            <DailyLines rows={rows} lines={[{ metric: 'gsc.impressions', color: COLORS.violet }]} />
          </ChartCard>
          <ChartCard title="Click-through rate" summary={`${v('gsc.ctr')} overall`}>
            <DailyLines rows={rows} lines={[{ metric: 'gsc.ctr', color: COLORS.amber }]} />
          </ChartCard>
          <ChartCard title="Average position" summary={`${v('gsc.position')} overall (1 is the top)`}>
            <DailyLines rows={rows} lines={[{ metric: 'gsc.position', color: COLORS.red }]} />
          </ChartCard>
        </div>
      )}
    </section>
  );
}

function totalLabel(key: MetricKey): string {
  switch (key) {
    case 'ga4.users':
      return 'Users (sum of days)';
    case 'gsc.ctr':
      return 'CTR';
    case 'gsc.position':
      return 'Average position';
    default:
      return METRICS.find((m) => m.key === key)!.label;
  }
}

/** A preset, or two dates; both live in the URL. */
function RangePicker({
  search,
  range,
  onChange,
}: {
  search: Search;
  range: { from: string; to: string; custom: boolean };
  onChange: (next: Partial<Search>) => void;
}) {
  const [from, setFrom] = useState(range.from);
  const [to, setTo] = useState(range.to);
  return (
    <div className="flex flex-wrap items-end gap-2">
      <div role="group" aria-label="Range" className="inline-flex rounded-md shadow-xs ring-1 ring-slate-300">
        {RANGES.map((preset) => {
          const active = !range.custom && (search.range ?? '28d') === preset;
          return (
            <button
              key={preset}
              type="button"
              aria-pressed={active}
              onClick={() => onChange({ range: preset === '28d' ? undefined : preset, from: undefined, to: undefined })}
              className={`px-3 py-2 text-sm first:rounded-l-md last:rounded-r-md ${active ? 'bg-indigo-600 font-medium text-white' : 'bg-white text-slate-700 hover:bg-slate-50'}`}
            >
              {RANGE_LABELS[preset].replace('Last ', '')}
            </button>
          );
        })}
      </div>
      <form
        className="flex items-end gap-2"
        aria-label="Dates"
        onSubmit={(e) => {
          e.preventDefault();
          if (from && to && from <= to) onChange({ from, to, range: undefined });
        }}
      >
        <label className="text-xs text-slate-600">
          From
          <input
            type="date"
            value={from}
            max={to}
            onChange={(e) => setFrom(e.target.value)}
            className="mt-0.5 block rounded-md px-2 py-1.5 text-sm ring-1 ring-slate-300"
          />
        </label>
        <label className="text-xs text-slate-600">
          To
          <input
            type="date"
            value={to}
            min={from}
            onChange={(e) => setTo(e.target.value)}
            className="mt-0.5 block rounded-md px-2 py-1.5 text-sm ring-1 ring-slate-300"
          />
        </label>
        <button type="submit" className="rounded-md bg-white px-3 py-2 text-sm ring-1 ring-slate-300 hover:bg-slate-50">
          Show
        </button>
      </form>
    </div>
  );
}
