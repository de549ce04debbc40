import { formatDateTime } from '../../lib/format';
import { Badge } from '../ui/page';
import type { LogLine, MergedStep } from './timeline';
import { duration } from './runs-table';

export interface NodeInfo {
  name?: string;
  type?: string;
  maxAttempts?: number;
}

const STATUS_TONE: Record<string, 'green' | 'red' | 'amber' | 'blue' | 'slate'> = {
  SUCCEEDED: 'green',
  FAILED: 'red',
  RETRYING: 'amber',
  WAITING: 'amber',
  RUNNING: 'blue',
  SKIPPED: 'slate',
  CANCELED: 'slate',
};

const DOT: Record<string, string> = {
  SUCCEEDED: 'bg-emerald-500',
  FAILED: 'bg-red-500',
  RETRYING: 'bg-amber-500',
  WAITING: 'bg-amber-400',
  RUNNING: 'bg-sky-500 animate-pulse',
  SKIPPED: 'bg-slate-300',
  CANCELED: 'bg-slate-400',
};

const MAX_ITEMS_SHOWN = 50;

/**
 * The run's steps as a timeline: one entry per node with its status, attempt (and the failed
 * attempts before it), duration, items from the run record (by branch for branching nodes) and
 * its log lines.
 */
export function StepList({ steps, nodes, logs }: { steps: readonly MergedStep[]; nodes: ReadonlyMap<string, NodeInfo>; logs: readonly LogLine[] }) {
  return (
    <ol aria-label="Steps" className="relative space-y-3 border-l-2 border-slate-200 pl-6">
      {steps.map((step) => {
        const info = nodes.get(step.nodeId);
        const title = info?.name ?? step.nodeId;
        const stepLogs = logs.filter((l) => l.nodeId === step.nodeId);
        return (
          <li key={step.nodeId} aria-labelledby={`step-${step.nodeId}`} className="relative rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200">
            <span aria-hidden="true" className={`absolute top-5 -left-[31px] size-3 rounded-full ring-4 ring-white ${DOT[step.status] ?? 'bg-slate-300'}`} />
            <div className="flex flex-wrap items-center gap-2">
              <h3 id={`step-${step.nodeId}`} className="font-medium text-slate-900">
                {title}
              </h3>
              <span className="font-mono text-xs text-slate-500">
                {info?.type ?? ''}
                {info?.name ? ` · ${step.nodeId}` : ''}
              </span>
              <Badge tone={STATUS_TONE[step.status]}>{step.status}</Badge>
              {step.attempt > 1 || step.failures.length ? (
                <span className="text-xs text-slate-600">
                  attempt {step.attempt}
                  {info?.maxAttempts ? ` of ${info.maxAttempts}` : ''}
                </span>
              ) : null}
              <span className="ml-auto text-xs text-slate-500">
                {step.startedAt ? formatDateTime(step.startedAt) : ''}
                {step.durationMs !== undefined ? ` · ${duration(step.durationMs)}` : ''}
                {step.itemCount !== undefined ? ` · ${step.itemCount} ${step.itemCount === 1 ? 'item' : 'items'}` : ''}
              </span>
            </div>
            {step.status === 'WAITING' && step.until ? <p className="mt-1 text-sm text-amber-800">Waiting until {formatDateTime(step.until)}</p> : null}
            {step.failures.length ? (
              <ul aria-label={`Failures of ${title}`} className="mt-2 space-y-1">
                {step.failures.map((f) => (
                  <li key={f.attempt} className={`rounded px-2 py-1 text-xs ${f.willRetry ? 'bg-amber-50 text-amber-900' : 'bg-red-50 text-red-800'}`}>
                    Attempt {f.attempt} failed: {f.error}
                    {f.willRetry ? ' — retried' : ''}
                  </li>
                ))}
              </ul>
            ) : null}
            <Items step={step} />
            {stepLogs.length ? (
              <details className="mt-2">
                <summary className="cursor-pointer text-xs font-medium text-slate-600">Log ({stepLogs.length})</summary>
                <LogLines lines={stepLogs} />
              </details>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}

function Items({ step }: { step: MergedStep }) {
  const record = step.record;
  if (!record || (record.items === null && record.outputs === null)) return null;
  const outputs =
    record.outputs && typeof record.outputs === 'object' ? (Object.entries(record.outputs).filter(([, v]) => Array.isArray(v)) as [string, unknown[]][]) : [];
  const branches = outputs.length > 1 || (outputs.length === 1 && outputs[0]![0] !== 'main') ? outputs : null;
  const items = record.items ?? [];
  return (
    <details className="mt-2">
      <summary className="cursor-pointer text-xs font-medium text-indigo-700">
        Items ({branches ? branches.map(([name, list]) => `${name}: ${list.length}`).join(', ') : items.length})
      </summary>
      {branches ? (
        branches.map(([name, list]) => (
          <div key={name} className="mt-2">
            <p className="text-xs font-semibold text-slate-600">Output “{name}”</p>
            <Json value={list} />
          </div>
        ))
      ) : (
        <Json value={items} />
      )}
    </details>
  );
}

function Json({ value }: { value: unknown[] }) {
  const shown = value.slice(0, MAX_ITEMS_SHOWN);
  return (
    <>
      <pre className="mt-1 max-h-80 overflow-auto rounded bg-slate-50 p-3 text-xs text-slate-800">{JSON.stringify(shown, null, 2)}</pre>
      {value.length > shown.length ? <p className="mt-1 text-xs text-slate-500">and {value.length - shown.length} more</p> : null}
    </>
  );
}

export function LogLines({ lines }: { lines: readonly LogLine[] }) {
  return (
    <ul className="mt-1 space-y-0.5 rounded bg-slate-900 p-2 font-mono text-xs text-slate-100">
      {lines.map((l) => (
        <li key={l.seq}>
          <span className="text-slate-400">{l.at ? new Date(l.at).toLocaleTimeString() : ''}</span>{' '}
          <span className={l.level === 'error' ? 'text-red-300' : l.level === 'warn' ? 'text-amber-300' : 'text-sky-300'}>{l.level}</span> {l.message}
        </li>
      ))}
    </ul>
  );
}
