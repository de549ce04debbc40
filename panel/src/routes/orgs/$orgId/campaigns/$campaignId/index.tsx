import { useState } from 'react';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import { campaignQuery, useCampaignAction, type CampaignAction as Action } from '../../../../../queries/campaigns';
import { compact, int, oneOf, PAGE } from '../../../../../lib/list';
import { useRole } from '../../../../../lib/account';
import { useList } from '../../../../../lib/use-list';
import { formatDateTime } from '../../../../../lib/format';
import { Badge } from '../../../../../components/ui/page';
import { Button } from '../../../../../components/ui/button';
import { ErrorState, FormError, Loading } from '../../../../../components/ui/states';
import { channelLabel } from '../../../../../components/conversations/model';
import { inboxesQuery } from '../../../../../queries/conversations';
import { Progress } from '../../../../../components/campaigns/progress';
import { Recipients } from '../../../../../components/campaigns/recipients';
import { DeleteCampaignDialog, TestSendDialog } from '../../../../../components/campaigns/dialogs';
import { describeDelay } from '../../../../../components/campaigns/form';
import { EDITABLE, RECIPIENT_STATUSES, statusLabel, type Campaign } from '../../../../../components/campaigns/model';

export const Route = createFileRoute('/orgs/$orgId/campaigns/$campaignId/')({
  validateSearch: (raw: Record<string, unknown>) => {
    const page = int(raw.page, PAGE);
    return compact({ status: oneOf(raw.status, RECIPIENT_STATUSES), page: page === PAGE ? undefined : page });
  },
  component: CampaignPage,
});

/** How often a running campaign's counts and recipients are read again. */
const LIVE_MS = 2_000;

/** What each status allows (CONTRACT §9; the API answers 409 to the rest). */
const ACTIONS: Record<Campaign['status'], Action[]> = {
  DRAFT: ['start'],
  SCHEDULED: ['pause', 'cancel'],
  RUNNING: ['pause', 'cancel'],
  PAUSED: ['resume', 'cancel'],
  FINISHED: [],
  CANCELED: [],
};
const ACTION_LABELS: Record<Action, string> = { start: 'Start', pause: 'Pause', resume: 'Resume', cancel: 'Cancel campaign' };

function CampaignPage() {
  const { orgId, campaignId } = Route.useParams();
  const search = Route.useSearch();
  const navigate = useNavigate();
  const { canWrite } = useRole(orgId);
  const { page, setSearch, setPage } = useList(search);
  const [dialog, setDialog] = useState<'test' | 'delete' | null>(null);
  const campaign = useQuery({
    ...campaignQuery(orgId, campaignId),
    refetchInterval: (q) => (q.state.data?.status === 'RUNNING' || q.state.data?.status === 'SCHEDULED' ? LIVE_MS : false),
  });
  const inboxes = useQuery(inboxesQuery(orgId));
  const act = useCampaignAction(orgId, campaignId);

  const back = (
    <Link to="/orgs/$orgId/campaigns" params={{ orgId }} className="text-sm text-indigo-700 hover:underline">
      ← Campaigns
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
  const live = c.status === 'RUNNING';
  const inbox = inboxes.data?.items.find((i) => i.id === c.inboxId);
  const steps = c.steps as { delaySeconds: number; subject?: string; text: string }[];
  const settings = c.settings as {
    stopOnReply?: boolean;
    perMinute?: number;
    dailyLimit?: number;
    maxErrors?: number;
    window?: { days: number[]; from: string; to: string; timezone: string };
  };

  return (
    <div className="space-y-6">
      <div>
        {back}
        <header className="mt-2 flex flex-wrap items-start justify-between gap-3">
          <div className="min-w-0">
            <h1 className="text-2xl font-semibold text-slate-900">{c.name}</h1>
            <div className="mt-1 flex flex-wrap items-center gap-2 text-sm text-slate-600">
              <span aria-label={`Status: ${statusLabel(c.status)}`}>
                <Badge>{statusLabel(c.status)}</Badge>
              </span>
              <span>
                {channelLabel(c.channel)} · {inbox?.name ?? c.inboxId}
              </span>
              {c.testMode ? <Badge tone="violet">Test mode: nothing is sent</Badge> : null}
              {c.status === 'SCHEDULED' && c.scheduledAt ? <span>Starts {formatDateTime(c.scheduledAt)}</span> : null}
              {c.startedAt ? <span>Started {formatDateTime(c.startedAt)}</span> : null}
              {c.finishedAt ? (
                <span>
                  {c.status === 'CANCELED' ? 'Canceled' : 'Finished'} {formatDateTime(c.finishedAt)}
                </span>
              ) : null}
            </div>
            {c.status === 'PAUSED' && c.pausedReason ? <p className="mt-2 text-sm text-amber-800">Paused: {c.pausedReason}</p> : null}
          </div>
          {canWrite ? (
            <div className="flex flex-wrap items-center gap-2" role="group" aria-label="Campaign actions">
              {EDITABLE.includes(c.status) ? (
                <Link
                  to="/orgs/$orgId/campaigns/$campaignId/edit"
                  params={{ orgId, campaignId }}
                  className="rounded-md bg-white px-3.5 py-2 text-sm font-medium text-slate-800 shadow-xs ring-1 ring-slate-300 hover:bg-slate-50"
                >
                  Edit
                </Link>
              ) : null}
              {c.status !== 'FINISHED' && c.status !== 'CANCELED' ? <Button onClick={() => setDialog('test')}>Send test</Button> : null}
              {ACTIONS[c.status].map((action) => (
                <Button key={action} variant={action === 'cancel' ? 'ghost' : 'primary'} disabled={act.isPending} onClick={() => act.mutate(action)}>
                  {ACTION_LABELS[action]}
                </Button>
              ))}
              {c.status !== 'RUNNING' ? (
                <Button variant="ghost" onClick={() => setDialog('delete')}>
                  Delete
                </Button>
              ) : null}
            </div>
          ) : null}
        </header>
        <div className="mt-2">
          <FormError error={act.error} />
        </div>
      </div>

      <Progress campaign={c} live={live} />

      <section aria-labelledby="setup-title" className="grid grid-cols-1 gap-4 lg:grid-cols-3">
        <h2 id="setup-title" className="sr-only">
          Setup
        </h2>
        <div className="rounded-lg bg-white p-5 shadow-xs ring-1 ring-slate-200 lg:col-span-2">
          <h3 className="text-sm font-semibold text-slate-900">Steps</h3>
          <ol className="mt-2 space-y-3">
            {steps.map((step, i) => (
              <li key={i} className="rounded-md bg-slate-50 p-3 text-sm ring-1 ring-slate-200">
                <p className="text-xs font-medium text-slate-500">
                  Step {i + 1} · {describeDelay(step.delaySeconds)} {i === 0 ? 'after the start' : `after step ${i}`}
                </p>
                {step.subject ? <p className="mt-1 font-medium text-slate-900">{step.subject}</p> : null}
                <p className="mt-1 whitespace-pre-wrap text-slate-700">{step.text}</p>
              </li>
            ))}
          </ol>
        </div>
        <div className="rounded-lg bg-white p-5 text-sm shadow-xs ring-1 ring-slate-200">
          <h3 className="font-semibold text-slate-900">Settings</h3>
          <dl className="mt-2 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1.5 text-slate-700">
            <dt className="text-slate-500">Audience</dt>
            <dd>{describeAudience(c.audience)}</dd>
            <dt className="text-slate-500">On reply</dt>
            <dd>{settings.stopOnReply === false ? 'Keep sending' : 'Stop'}</dd>
            <dt className="text-slate-500">Limits</dt>
            <dd>
              {settings.perMinute ?? 60}/minute, {(settings.dailyLimit ?? 1000).toLocaleString()}/day
            </dd>
            <dt className="text-slate-500">Pauses after</dt>
            <dd>{settings.maxErrors ?? 50} failures in a row</dd>
            <dt className="text-slate-500">Window</dt>
            <dd>
              {settings.window
                ? `${settings.window.days.map((d) => WEEKDAY_NAMES[d - 1]).join(', ')} ${settings.window.from}–${settings.window.to} (${settings.window.timezone})`
                : 'Any time'}
            </dd>
          </dl>
        </div>
      </section>

      <Recipients
        orgId={orgId}
        campaignId={campaignId}
        steps={steps.length}
        status={search.status}
        page={page}
        live={live}
        onStatus={(status) => setSearch({ status })}
        onPage={setPage}
      />

      <TestSendDialog orgId={orgId} campaign={c} open={dialog === 'test'} onOpenChange={(open) => setDialog(open ? 'test' : null)} />
      <DeleteCampaignDialog
        orgId={orgId}
        campaign={c}
        open={dialog === 'delete'}
        onOpenChange={(open) => setDialog(open ? 'delete' : null)}
        onDeleted={() => void navigate({ to: '/orgs/$orgId/campaigns', params: { orgId } })}
      />
    </div>
  );
}

const WEEKDAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

function describeAudience(audience: Campaign['audience']): string {
  const a = audience as { leadIds?: string[]; status?: string; tags?: string[]; minScore?: number };
  if (a.leadIds) return `${a.leadIds.length} chosen ${a.leadIds.length === 1 ? 'lead' : 'leads'}`;
  const parts = [
    a.status
      ? `status ${a.status
          .split(',')
          .map((s) => statusLabel(s.trim()))
          .join(' or ')}`
      : null,
    a.tags?.length ? `tagged ${a.tags.join(' and ')}` : null,
    a.minScore !== undefined ? `score ≥ ${a.minScore}` : null,
  ].filter(Boolean);
  return parts.length ? `Leads with ${parts.join(', ')}` : 'All leads of the project';
}
