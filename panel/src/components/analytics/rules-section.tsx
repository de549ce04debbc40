import { useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { formatDateTime, relative } from '../../lib/format';
import { Badge } from '../ui/page';
import { Button } from '../ui/button';
import { Table, Td, Th } from '../ui/table';
import { Empty } from '../ui/states';
import { noItems, QueryState } from '../ui/query-state';
import { Pagination } from '../ui/pagination';
import { formatMetric, metricSpec } from './data';
import { describeRule } from './rules';
import { DeleteRuleDialog, RuleDialog } from './rule-dialogs';
import { RULES_PAGE_SIZE, rulesQuery, type Rule } from '../../queries/analytics';

const STATE_TONE = { ok: 'green', firing: 'red', error: 'amber' } as const;

/** The threshold rules with their state; create, edit, delete. The page lives in the URL (`rulesPage`). */
export function RulesSection({
  orgId,
  integrations,
  selectedIntegrationId,
  canWrite,
  page,
  onPage,
}: {
  orgId: string;
  integrations: readonly { id: string; name: string }[];
  selectedIntegrationId?: string;
  canWrite: boolean;
  page: number;
  onPage: (page: number) => void;
}) {
  const rules = useQuery({ ...rulesQuery(orgId, page), placeholderData: keepPreviousData });
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<Rule | null>(null);
  const [removing, setRemoving] = useState<Rule | null>(null);
  const integrationName = (id: string | null | undefined) =>
    id ? (integrations.find((i) => i.id === id)?.name ?? 'A removed account') : 'All Google accounts';

  return (
    <section aria-labelledby="rules-title" className="space-y-3">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h2 id="rules-title" className="text-lg font-semibold text-slate-900">
            Alert rules
          </h2>
          <p className="mt-0.5 text-sm text-slate-600">
            Checked after every sync; a rule that starts firing sends a notification and an <code className="text-xs">analytics.threshold</code> event
            (workflows can start on it).
          </p>
        </div>
        {canWrite ? (
          <Button variant="primary" onClick={() => setCreating(true)}>
            New rule
          </Button>
        ) : null}
      </div>
      <QueryState
        query={rules}
        loading="Loading rules…"
        retry
        isEmpty={noItems}
        empty={
          <Empty title="No alert rules yet">
            {canWrite
              ? 'Add one to hear about a drop in traffic or a jump in clicks, for example: sessions falling below 100 in a day, or clicks changing by 30 % over 7 days.'
              : 'A member can add rules.'}
          </Empty>
        }
      >
        {(data) => (
          <>
            <Table label="Alert rules">
              <thead className="bg-slate-50">
                <tr>
                  <Th>Rule</Th>
                  <Th>Google account</Th>
                  <Th>State</Th>
                  <Th className="text-right">Last value</Th>
                  <Th>Last fired</Th>
                  {canWrite ? (
                    <Th>
                      <span className="sr-only">Actions</span>
                    </Th>
                  ) : null}
                </tr>
              </thead>
              <tbody className="divide-y divide-slate-100">
                {data.items.map((rule) => (
                  <tr key={rule.id}>
                    <Td className="max-w-md">
                      <span className="font-medium text-slate-900">{rule.name}</span>
                      <p className="mt-0.5 text-xs text-slate-500">{describeRule(rule)}</p>
                    </Td>
                    <Td>{integrationName(rule.integrationId)}</Td>
                    <Td className="max-w-xs">
                      <Badge tone={STATE_TONE[rule.state as keyof typeof STATE_TONE] ?? 'slate'}>{rule.state}</Badge>
                      {'error' in rule && typeof rule.error === 'string' && rule.error ? <p className="mt-1 text-xs text-amber-800">{rule.error}</p> : null}
                    </Td>
                    <Td className="text-right tabular-nums">{lastValue(rule)}</Td>
                    <Td className="whitespace-nowrap">
                      {rule.lastFiredAt ? <span title={formatDateTime(rule.lastFiredAt)}>{relative(rule.lastFiredAt)}</span> : 'Never'}
                    </Td>
                    {canWrite ? (
                      <Td className="whitespace-nowrap text-right">
                        <div className="flex justify-end gap-2">
                          <Button size="sm" aria-label={`Edit ${rule.name}`} onClick={() => setEditing(rule)}>
                            Edit
                          </Button>
                          <Button size="sm" variant="ghost" aria-label={`Delete ${rule.name}`} onClick={() => setRemoving(rule)}>
                            Delete
                          </Button>
                        </div>
                      </Td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </Table>
            {data.total > RULES_PAGE_SIZE ? <Pagination page={page} pageSize={RULES_PAGE_SIZE} total={data.total} onPage={onPage} /> : null}
          </>
        )}
      </QueryState>
      {creating ? (
        <RuleDialog orgId={orgId} integrations={integrations} defaultIntegrationId={selectedIntegrationId} onClose={() => setCreating(false)} />
      ) : null}
      {editing ? <RuleDialog orgId={orgId} rule={editing} integrations={integrations} onClose={() => setEditing(null)} /> : null}
      {removing ? <DeleteRuleDialog orgId={orgId} rule={removing} onClose={() => setRemoving(null)} /> : null}
    </section>
  );
}

/** The value the rule last compared: the metric's figure, or the change in percent. */
function lastValue(rule: Rule): string {
  if (rule.lastValue === null || rule.lastValue === undefined) return '—';
  if (rule.compare === 'pct_change')
    return `${rule.lastValue > 0 ? '+' : ''}${new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 }).format(rule.lastValue)} %`;
  return metricSpec(rule.metric) ? formatMetric(rule.metric, rule.lastValue) : String(rule.lastValue);
}
