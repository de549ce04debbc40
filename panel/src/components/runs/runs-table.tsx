import { Link } from '@tanstack/react-router';
import type { Schemas } from '../../api/client';
import { formatDateTime, formatUsd } from '../../lib/format';
import { Badge } from '../ui/page';
import { SortTh, Table, Td, Th } from '../ui/table';

type Run = Schemas['RunSummary'];

/** How long a run took (or has been going): "850 ms", "12 s", "3 min 5 s", "2 h 4 min". */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const h = Math.floor(m / 60);
  return `${h} h${m % 60 ? ` ${m % 60} min` : ''}`;
}

export function runDuration(run: Pick<Run, 'startedAt' | 'finishedAt'>): string {
  if (!run.startedAt) return '—';
  return run.finishedAt ? duration(new Date(run.finishedAt).getTime() - new Date(run.startedAt).getTime()) : 'in progress';
}

export function triggerLabel(trigger: Record<string, unknown>): string {
  const type = typeof trigger.type === 'string' ? trigger.type.replace(/^trigger\./, '') : '';
  return type === 'manual' ? 'By hand' : type || '—';
}

export function shortId(id: string): string {
  const [prefix, rest] = id.includes('_') ? [id.slice(0, id.indexOf('_') + 1), id.slice(id.indexOf('_') + 1)] : ['', id];
  return `${prefix}…${rest.slice(-6)}`;
}

/** Runs in a table; with `sort`, the sortable columns sort the list. */
export function RunsTable({
  orgId,
  runs,
  label = 'Runs',
  sort,
  onSort,
  showWorkflow = true,
}: {
  orgId: string;
  runs: readonly Run[];
  label?: string;
  sort?: string;
  onSort?: (sort: string) => void;
  showWorkflow?: boolean;
}) {
  const sortable = (field: string, title: string) =>
    sort !== undefined && onSort ? <SortTh field={field} label={title} sort={sort} onSort={onSort} /> : <Th>{title}</Th>;
  return (
    <Table label={label}>
      <thead className="bg-slate-50">
        <tr>
          <Th>Run</Th>
          {showWorkflow ? <Th>Workflow</Th> : null}
          {sortable('status', 'Status')}
          <Th>Trigger</Th>
          {sortable('costUsd', 'Cost')}
          {sortable('createdAt', 'Started')}
          <Th>Duration</Th>
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100">
        {runs.map((run) => (
          <tr key={run.id} className="hover:bg-slate-50">
            <Td>
              <Link
                to="/orgs/$orgId/runs/$runId"
                params={{ orgId, runId: run.id }}
                className="font-mono text-xs font-medium text-indigo-700 hover:underline"
                aria-label={`Run ${run.id} of ${run.workflowName}`}
              >
                {shortId(run.id)}
              </Link>
              {run.testMode ? (
                <span className="ml-2">
                  <Badge tone="violet">test</Badge>
                </span>
              ) : null}
            </Td>
            {showWorkflow ? (
              <Td>
                <Link to="/orgs/$orgId/workflows/$workflowId" params={{ orgId, workflowId: run.workflowId }} className="text-slate-800 hover:underline">
                  {run.workflowName}
                </Link>
              </Td>
            ) : null}
            <Td>
              <Badge>{run.status}</Badge>
              {run.status === 'FAILED' && run.error ? (
                <p className="mt-1 line-clamp-1 max-w-xs text-xs text-red-700">{String(run.error.message ?? run.error.code ?? '')}</p>
              ) : null}
            </Td>
            <Td>{triggerLabel(run.trigger)}</Td>
            <Td className="whitespace-nowrap">{formatUsd(run.costUsd)}</Td>
            <Td className="whitespace-nowrap">{formatDateTime(run.startedAt ?? run.createdAt)}</Td>
            <Td className="whitespace-nowrap">{run.status === 'QUEUED' ? '—' : runDuration(run)}</Td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}
