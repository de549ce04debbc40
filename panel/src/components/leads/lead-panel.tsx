import { useState } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { leadHistoryQuery, leadQuery, useUpdateLead } from '../../queries/leads';
import { LEAD_STATUSES } from '../../../../src/shared/leads.ts';
import { formatDateTime } from '../../lib/format';
import { SidePanel } from '../ui/dialog';
import { Button } from '../ui/button';
import { SelectField } from '../ui/field';
import { Badge } from '../ui/page';
import { FormError } from '../ui/states';
import { QueryState } from '../ui/query-state';
import { LeadForm, leadBody, type LeadFields } from './lead-form';

/** A lead beside the list: its fields (editable), status, score and history. */
export function LeadPanel({ orgId, leadId, canWrite, onClose }: { orgId: string; leadId: string; canWrite: boolean; onClose: () => void }) {
  const lead = useQuery(leadQuery(orgId, leadId));
  const [saved, setSaved] = useState(false);
  const update = useUpdateLead(orgId, leadId, () => setSaved(true));
  const l = lead.data;
  return (
    <SidePanel open onOpenChange={(open) => !open && onClose()} title={l ? (l.name ?? l.email ?? l.phone ?? 'Lead') : 'Lead'}>
      <QueryState query={lead}>
        {(l) => (
          <div className="space-y-6">
            <dl className="grid grid-cols-3 gap-3 text-sm">
              <div>
                <dt className="text-slate-500">Status</dt>
                <dd>
                  <Badge>{l.status}</Badge>
                </dd>
              </div>
              <div>
                <dt className="text-slate-500">Score</dt>
                <dd className="font-medium">{l.score}</dd>
              </div>
              <div>
                <dt className="text-slate-500">Created</dt>
                <dd>{formatDateTime(l.createdAt)}</dd>
              </div>
              {l.scoreReason ? (
                <div className="col-span-3">
                  <dt className="text-slate-500">Why this score</dt>
                  <dd>{l.scoreReason}</dd>
                </div>
              ) : null}
            </dl>
            {canWrite ? (
              <SelectField
                label="Status"
                value={l.status}
                options={LEAD_STATUSES}
                disabled={update.isPending}
                onChange={(e) => update.mutate({ status: e.target.value })}
              />
            ) : null}
            <section aria-label="Details">
              <h3 className="mb-2 text-sm font-semibold text-slate-900">Details</h3>
              <LeadForm
                key={l.updatedAt}
                initial={
                  {
                    name: l.name ?? '',
                    email: l.email ?? '',
                    phone: l.phone ?? '',
                    company: l.company ?? '',
                    website: l.website ?? '',
                    source: l.source ?? '',
                    tags: l.tags.join(', '),
                  } satisfies LeadFields
                }
                error={update.error}
                disabled={!canWrite}
                onSubmit={(fields) => {
                  setSaved(false);
                  update.mutate(leadBody(fields, 'null'));
                }}
              >
                <FormError error={update.error} />
                {canWrite ? (
                  <div className="flex items-center justify-end gap-3">
                    {saved && !update.isPending ? (
                      <span role="status" className="text-sm text-emerald-700">
                        Saved
                      </span>
                    ) : null}
                    <Button type="submit" variant="primary" disabled={update.isPending}>
                      Save changes
                    </Button>
                  </div>
                ) : null}
              </LeadForm>
            </section>
            {Object.keys(l.custom).length ? (
              <section aria-label="Custom fields">
                <h3 className="mb-2 text-sm font-semibold text-slate-900">Custom fields</h3>
                <pre className="overflow-x-auto rounded bg-slate-50 p-3 text-xs">{JSON.stringify(l.custom, null, 2)}</pre>
              </section>
            ) : null}
            <History orgId={orgId} leadId={leadId} />
          </div>
        )}
      </QueryState>
    </SidePanel>
  );
}

const EVENT_LABELS: Record<string, string> = {
  'lead.created': 'Created',
  'lead.updated': 'Changed',
  'lead.qualified': 'Qualified',
  'lead.replied': 'Replied',
};

function History({ orgId, leadId }: { orgId: string; leadId: string }) {
  const history = useInfiniteQuery(leadHistoryQuery(orgId, leadId));
  const events = history.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <section aria-label="History">
      <h3 className="mb-2 text-sm font-semibold text-slate-900">History</h3>
      <QueryState query={history} isEmpty={() => events.length === 0} empty={<p className="text-sm text-slate-500">Nothing has happened to this lead yet.</p>}>
        {() => (
          <ol className="space-y-3 border-l border-slate-200 pl-4">
            {events.map((event) => {
              const changes = (event.payload as { changes?: Record<string, { from: unknown; to: unknown }> }).changes;
              const actor = (event.payload as { actor?: { type?: string; name?: string; id?: string } }).actor;
              return (
                <li key={event.id} className="text-sm">
                  <p className="font-medium text-slate-800">
                    {EVENT_LABELS[event.type] ?? event.type}{' '}
                    <span className="font-normal text-slate-500">
                      · {formatDateTime(event.at)}
                      {actor ? ` · by ${actor.name ?? actor.type ?? actor.id}` : ''}
                    </span>
                  </p>
                  {changes ? (
                    <ul className="mt-1 text-xs text-slate-600">
                      {Object.entries(changes).map(([field, change]) => (
                        <li key={field}>
                          <span className="font-medium">{field}</span>: {show(change.from)} → {show(change.to)}
                        </li>
                      ))}
                    </ul>
                  ) : null}
                </li>
              );
            })}
          </ol>
        )}
      </QueryState>
      {history.hasNextPage ? (
        <Button size="sm" className="mt-3" onClick={() => void history.fetchNextPage()} disabled={history.isFetchingNextPage}>
          Show older
        </Button>
      ) : null}
    </section>
  );
}

function show(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  return Array.isArray(value) ? value.join(', ') || '—' : String(value);
}
