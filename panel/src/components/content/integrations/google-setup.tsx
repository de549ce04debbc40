import { useState, type FormEvent } from 'react';
import { Link } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import type { Schemas } from '../../../api/client';
import { googleAccountsQuery, syncRunsQuery, useStartSync, useUpdateIntegration } from '../../../queries/content';
import { formatDateTime, relative } from '../../../lib/format';
import { Badge } from '../../ui/page';
import { Button } from '../../ui/button';
import { SelectField } from '../../ui/field';
import { Table, Td, Th } from '../../ui/table';
import { Empty, FormError } from '../../ui/states';
import { noItems, QueryState } from '../../ui/query-state';
import { configPatch, describeSources, splitAccounts, SYNC_SPAN_LABELS, SYNC_SPANS, syncBody, syncRange, type GoogleConfig, type SyncSpan } from './google';

type Integration = Schemas['Integration'];

const RUNS_SHOWN = 5;

/**
 * A Google connection's setup: which GA4 property and Search Console site it reads (chosen from the
 * accounts it can see), a sync on demand, and its latest sync runs (polled while one is queued or
 * running).
 */
export function GoogleSetup({ orgId, integration, canManage, canSync }: { orgId: string; integration: Integration; canManage: boolean; canSync: boolean }) {
  const config = (integration.config ?? {}) as GoogleConfig;
  const configured = Boolean(config.propertyId || config.siteUrl);
  const accounts = useQuery({ ...googleAccountsQuery(orgId, integration.id), enabled: integration.status === 'connected', retry: false });
  const runs = useQuery({
    ...syncRunsQuery(orgId, integration.id, RUNS_SHOWN),
    refetchInterval: (query) => (query.state.data?.items.some((r) => r.status === 'queued' || r.status === 'running') ? 1500 : false),
  });
  // The first sync fetches a history; later ones the recent days Google still revises.
  const synced = runs.data?.items.some((r) => r.status === 'succeeded');
  const [chosenSpan, setSpan] = useState<SyncSpan | null>(null);
  const span: SyncSpan = chosenSpan ?? (synced === false ? '90' : 'recent');
  const sync = useStartSync(orgId, integration.id);
  const latest = runs.data?.items[0];
  const accountList = accounts.data ?? [];

  return (
    <section aria-labelledby={`google-${integration.id}`} className="rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h3 id={`google-${integration.id}`} className="font-semibold text-slate-900">
            {integration.name}: analytics sources
          </h3>
          <p className="mt-0.5 text-sm text-slate-600">{describeSources(config, accountList)}</p>
        </div>
        <div className="flex items-center gap-2">
          {configured ? (
            <Link
              to="/orgs/$orgId/analytics"
              params={{ orgId }}
              search={{ integration: integration.id }}
              className="text-sm font-medium text-indigo-700 hover:underline"
            >
              View analytics
            </Link>
          ) : null}
          {canSync ? (
            <label className="text-xs text-slate-600">
              <span className="sr-only">Days to fetch for {integration.name}</span>
              <select value={span} onChange={(e) => setSpan(e.target.value as SyncSpan)} className="rounded-md px-2 py-1.5 text-xs ring-1 ring-slate-300">
                {SYNC_SPANS.map((s) => (
                  <option key={s} value={s}>
                    {SYNC_SPAN_LABELS[s]}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          {canSync ? (
            <Button
              variant="primary"
              size="sm"
              aria-label={`Sync now: ${integration.name}`}
              disabled={!configured || integration.status !== 'connected' || sync.isPending}
              title={configured ? undefined : 'Choose a property or a site first'}
              onClick={() => sync.mutate(syncBody(span, new Date()))}
            >
              {sync.isPending ? 'Starting…' : 'Sync now'}
            </Button>
          ) : null}
        </div>
      </div>
      <FormError error={sync.error} />

      <div className="mt-4 grid gap-6 lg:grid-cols-[minmax(0,2fr)_minmax(0,3fr)]">
        <div>
          <h4 className="mb-2 text-sm font-semibold text-slate-800">Property and site</h4>
          {integration.status !== 'connected' ? (
            <p className="text-sm text-slate-600">Reconnect this account to choose what it reads.</p>
          ) : (
            <QueryState query={accounts} loading="Loading the accounts Google gives access to…" retry>
              {() => <SourcePicker orgId={orgId} integration={integration} config={config} accounts={accountList} canManage={canManage} />}
            </QueryState>
          )}
        </div>
        <div>
          <h4 className="mb-2 text-sm font-semibold text-slate-800">
            Latest syncs
            {latest ? <span className="ml-2 font-normal text-slate-500">last {relative(latest.startedAt ?? latest.finishedAt ?? undefined)}</span> : null}
          </h4>
          <QueryState
            query={runs}
            loading="Loading sync runs…"
            retry
            isEmpty={noItems}
            empty={
              <Empty title="Not synced yet">
                {configured
                  ? 'Sync now to fetch the daily figures; after that it syncs every day.'
                  : 'Choose a GA4 property or a Search Console site, then sync.'}
              </Empty>
            }
          >
            {(data) => (
              <Table label={`Sync runs of ${integration.name}`}>
                <thead className="bg-slate-50">
                  <tr>
                    <Th>Status</Th>
                    <Th>Days</Th>
                    <Th className="text-right">Rows</Th>
                    <Th>Finished</Th>
                  </tr>
                </thead>
                <tbody className="divide-y divide-slate-100">
                  {data.items.map((run) => (
                    <tr key={run.id}>
                      <Td className="max-w-xs">
                        <Badge tone={run.status === 'succeeded' ? 'green' : run.status === 'failed' ? 'red' : run.status === 'running' ? 'blue' : 'amber'}>
                          {run.status}
                        </Badge>
                        {run.error ? <p className="mt-1 text-xs break-words text-red-700">{run.error}</p> : null}
                      </Td>
                      <Td className="whitespace-nowrap">{syncRange(run.from, run.to)}</Td>
                      <Td className="text-right tabular-nums">{run.rows.toLocaleString()}</Td>
                      <Td className="whitespace-nowrap">
                        {run.finishedAt ? formatDateTime(run.finishedAt) : run.startedAt ? `Started ${relative(run.startedAt)}` : 'Waiting'}
                      </Td>
                    </tr>
                  ))}
                </tbody>
              </Table>
            )}
          </QueryState>
        </div>
      </div>
    </section>
  );
}

function SourcePicker({
  orgId,
  integration,
  config,
  accounts,
  canManage,
}: {
  orgId: string;
  integration: Integration;
  config: GoogleConfig;
  accounts: { id: string; name: string; source?: string }[];
  canManage: boolean;
}) {
  const { properties, sites } = splitAccounts(accounts);
  const [propertyId, setPropertyId] = useState(config.propertyId ?? '');
  const [siteUrl, setSiteUrl] = useState(config.siteUrl ?? '');
  const [saved, setSaved] = useState(false);
  const patch = configPatch(config, { propertyId, siteUrl });
  const save = useUpdateIntegration(orgId, integration.id, () => setSaved(true));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (patch) save.mutate(patch ?? {});
  };
  // A chosen id the account no longer lists stays selectable, so saving does not drop it silently.
  const withCurrent = (list: { id: string; name: string }[], current: string) =>
    current && !list.some((a) => a.id === current) ? [{ id: current, name: `${current} (no longer accessible)` }, ...list] : list;
  if (properties.length === 0 && sites.length === 0 && !config.propertyId && !config.siteUrl) {
    return (
      <Empty title="Nothing to read">
        This Google account has no GA4 property or Search Console site. Add it to one in Google, or connect another account.
      </Empty>
    );
  }
  return (
    <form className="space-y-3" aria-label={`Sources of ${integration.name}`} onSubmit={submit}>
      <SelectField
        label="GA4 property"
        value={propertyId}
        disabled={!canManage}
        hint={properties.length === 0 ? 'No GA4 property is accessible with this account.' : 'Sessions, users and conversions (key events) per day.'}
        options={[
          { value: '', label: 'None' },
          ...withCurrent(properties, config.propertyId ?? '').map((a) => ({ value: a.id, label: a.name === a.id ? a.id : `${a.name} (${a.id})` })),
        ]}
        onChange={(e) => {
          setPropertyId(e.target.value);
          setSaved(false);
        }}
      />
      <SelectField
        label="Search Console site"
        value={siteUrl}
        disabled={!canManage}
        hint={sites.length === 0 ? 'No Search Console site is accessible with this account.' : 'Clicks, impressions, CTR and average position per day.'}
        options={[{ value: '', label: 'None' }, ...withCurrent(sites, config.siteUrl ?? '').map((a) => ({ value: a.id, label: a.name }))]}
        onChange={(e) => {
          setSiteUrl(e.target.value);
          setSaved(false);
        }}
      />
      <FormError error={save.error} />
      {canManage ? (
        <div className="flex items-center gap-3">
          <Button type="submit" size="sm" disabled={!patch || save.isPending} aria-label={`Save sources of ${integration.name}`}>
            {save.isPending ? 'Saving…' : 'Save sources'}
          </Button>
          {saved && !patch ? (
            <p role="status" className="text-sm text-emerald-700">
              Saved. Sync now to fetch the figures.
            </p>
          ) : null}
        </div>
      ) : (
        <p className="text-xs text-slate-500">An owner or admin can change the sources.</p>
      )}
    </form>
  );
}
