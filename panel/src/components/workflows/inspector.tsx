import { memo, useId, type ReactNode } from 'react';
import { Copy, Trash2 } from 'lucide-react';
import { Button } from '../ui/button';
import { TextArea, TextField } from '../ui/field';
import { formatDateTime } from '../../lib/format';
import { duration } from '../runs/runs-table';
import type { MergedStep } from '../runs/timeline';
import { defaultName, isTrigger, MAIN, type LinkEdge, type NodeTypeInfo, type StepNode, type WorkflowMeta } from './canvas-model';
import type { DefNode } from './definition';
import { lookOf, statusLabel, type RunState } from './canvas';
import { ParamsForm, type Params, type ParamsFormContext } from './params-form';

export type NodeEdit = Partial<Pick<DefNode, 'name' | 'params' | 'retry'>>;

const MAX_ITEMS = 20;

function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  const id = useId();
  return (
    <section aria-labelledby={id} className="space-y-3 border-b border-slate-200 px-4 py-4 last:border-b-0">
      <div className="flex items-center justify-between gap-2">
        <h3 id={id} className="text-xs font-semibold tracking-wide text-slate-500 uppercase">
          {title}
        </h3>
        {actions}
      </div>
      {children}
    </section>
  );
}

function Json({ value, label }: { value: unknown; label: string }) {
  return (
    <pre aria-label={label} className="max-h-64 overflow-auto rounded-md bg-slate-900 p-2 font-mono text-[11px] leading-4 text-slate-100">
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

/** This node's step in the run shown on the canvas: status, attempts, items (by branch) and error. */
function StepResult({ step, title }: { step: MergedStep | undefined; title: string }) {
  if (!step) return <p className="text-sm text-slate-500">This step has not run in this run (yet).</p>;
  const record = step.record;
  const outputs =
    record?.outputs && typeof record.outputs === 'object' ? (Object.entries(record.outputs).filter(([, v]) => Array.isArray(v)) as [string, unknown[]][]) : [];
  const branched = outputs.length > 1 || (outputs.length === 1 && outputs[0]![0] !== MAIN);
  const items = record?.items ?? [];
  return (
    <div className="space-y-2 text-sm">
      <p className="flex flex-wrap items-center gap-x-2 text-slate-700">
        <span className="font-medium">{statusLabel(step.status as RunState)}</span>
        {step.attempt > 1 ? <span className="text-xs text-slate-500">attempt {step.attempt}</span> : null}
        {step.durationMs !== undefined ? <span className="text-xs text-slate-500">{duration(step.durationMs)}</span> : null}
        {step.startedAt ? <span className="text-xs text-slate-500">{formatDateTime(step.startedAt)}</span> : null}
      </p>
      {step.status === 'WAITING' && step.until ? <p className="text-xs text-amber-800">Waiting until {formatDateTime(step.until)}</p> : null}
      {step.failures.length ? (
        <ul aria-label={`Errors of ${title}`} className="space-y-1">
          {step.failures.map((f) => (
            <li key={f.attempt} className={`rounded px-2 py-1 text-xs ${f.willRetry ? 'bg-amber-50 text-amber-900' : 'bg-red-50 text-red-800'}`}>
              Attempt {f.attempt}: {f.error}
              {f.willRetry ? ' — retried' : ''}
            </li>
          ))}
        </ul>
      ) : null}
      {step.error && !step.failures.length ? (
        <p role="alert" className="rounded bg-red-50 px-2 py-1 text-xs text-red-800">
          {step.error}
        </p>
      ) : null}
      {branched ? (
        outputs.map(([output, list]) => (
          <div key={output}>
            <p className="text-xs font-medium text-slate-600">
              {output}: {list.length} {list.length === 1 ? 'item' : 'items'}
            </p>
            {list.length ? <Json value={list.slice(0, MAX_ITEMS)} label={`Items of ${title} on ${output}`} /> : null}
          </div>
        ))
      ) : record ? (
        <div>
          <p className="text-xs font-medium text-slate-600">
            {items.length} {items.length === 1 ? 'item' : 'items'}
            {items.length > MAX_ITEMS ? ` (the first ${MAX_ITEMS} shown)` : ''}
          </p>
          {items.length ? <Json value={items.slice(0, MAX_ITEMS)} label={`Items of ${title}`} /> : null}
        </div>
      ) : (
        <p className="text-xs text-slate-500">Items appear when the step ends.</p>
      )}
    </div>
  );
}

function Retry({ retry, onChange, disabled }: { retry: DefNode['retry']; onChange: (retry: DefNode['retry'] | undefined) => void; disabled?: boolean }) {
  const attempts = retry?.maxAttempts;
  const attemptsError = retry && !(Number.isInteger(attempts) && attempts! >= 1 && attempts! <= 10) ? 'A whole number from 1 to 10' : undefined;
  const backoff = retry?.backoffSeconds;
  const backoffError = backoff !== undefined && !(backoff >= 0 && backoff <= 86_400) ? 'Seconds, from 0 to 86,400' : undefined;
  return (
    <div className="space-y-2">
      <label className="inline-flex items-center gap-2 text-sm text-slate-700">
        <input
          type="checkbox"
          className="size-4 rounded border-slate-300"
          checked={Boolean(retry)}
          disabled={disabled}
          onChange={(e) => onChange(e.target.checked ? { maxAttempts: 3, backoffSeconds: 30 } : undefined)}
        />
        Retry when it fails
      </label>
      {retry ? (
        <div className="grid grid-cols-2 gap-2">
          <TextField
            label="Max attempts"
            type="number"
            min={1}
            max={10}
            step={1}
            value={Number.isFinite(attempts) ? String(attempts) : ''}
            disabled={disabled}
            error={attemptsError}
            onChange={(e) => onChange({ ...retry, maxAttempts: e.target.value === '' ? Number.NaN : Number(e.target.value) })}
          />
          <TextField
            label="Wait between (s)"
            type="number"
            min={0}
            max={86_400}
            value={backoff === undefined ? '' : String(backoff)}
            disabled={disabled}
            error={backoffError}
            onChange={(e) => {
              const { backoffSeconds: _drop, ...rest } = retry;
              onChange(e.target.value === '' ? rest : { ...rest, backoffSeconds: Number(e.target.value) });
            }}
          />
        </div>
      ) : (
        <p className="text-xs text-slate-500">A failed step fails the run at once.</p>
      )}
    </div>
  );
}

/**
 * The side panel for the selected node: name, params (a form from its JSON Schema), retries, and its
 * step in the run shown. It takes the node's definition, not the canvas node, so dragging the node
 * around does not redraw its form.
 */
export const NodeInspector = memo(function NodeInspector({
  def,
  type,
  onEdit,
  onDelete,
  onDuplicate,
  readOnly,
  formContext,
  problem,
  runStep,
  showRun,
}: {
  def: DefNode;
  type: NodeTypeInfo | undefined;
  onEdit: (edit: NodeEdit, field: string) => void;
  onDelete: () => void;
  onDuplicate: () => void;
  readOnly?: boolean;
  formContext: ParamsFormContext;
  problem?: { message: string; param?: string };
  runStep?: MergedStep;
  showRun: boolean;
}) {
  const look = lookOf(def.type);
  const Icon = look.icon;
  const title = def.name || def.id;
  return (
    <div aria-label={`Step ${title}`} role="region">
      <div className="flex items-start gap-2 border-b border-slate-200 px-4 py-3">
        <span aria-hidden="true" className={`mt-0.5 flex size-8 shrink-0 items-center justify-center rounded-md ${look.tone}`}>
          <Icon className="size-4" />
        </span>
        <div className="min-w-0 flex-1">
          <h2 className="truncate text-base font-semibold text-slate-900">{title}</h2>
          <p className="font-mono text-xs text-slate-500">
            {def.type} · id {def.id}
          </p>
        </div>
        {readOnly ? null : (
          <div className="flex gap-1">
            <Button size="sm" variant="ghost" onClick={onDuplicate} aria-label="Duplicate step" title="Duplicate (Ctrl+D)">
              <Copy className="size-4" />
            </Button>
            <Button size="sm" variant="ghost" onClick={onDelete} aria-label="Delete step" title="Delete (Delete)">
              <Trash2 className="size-4 text-red-600" />
            </Button>
          </div>
        )}
      </div>
      {problem ? (
        <div role="alert" className="mx-4 mt-3 rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 ring-1 ring-red-200">
          <span className="font-medium">Not valid: </span>
          {problem.message}
        </div>
      ) : null}
      {showRun ? (
        <Section title="In this run">
          <StepResult step={runStep} title={title} />
        </Section>
      ) : null}
      <Section title="Step">
        {type ? (
          <p className="text-xs text-slate-600">{type.description.replace(/`/g, '')}</p>
        ) : (
          <p className="text-xs text-red-700">This server has no node type “{def.type}”: the workflow cannot be saved with it.</p>
        )}
        <TextField
          label="Name"
          maxLength={200}
          value={def.name ?? ''}
          placeholder={defaultName(def.type)}
          disabled={readOnly}
          onChange={(e) => onEdit({ name: e.target.value === '' ? undefined : e.target.value }, 'name')}
        />
      </Section>
      <Section title="Params">
        {type ? (
          <ParamsForm
            key={def.id}
            type={def.type}
            schema={type.params}
            params={(def.params ?? {}) as Params}
            disabled={readOnly}
            context={formContext}
            problem={problem?.param ? { param: problem.param, message: problem.message } : undefined}
            onChange={(params) => onEdit({ params: Object.keys(params).length ? params : undefined }, 'params')}
          />
        ) : (
          <TextArea label="Params (JSON)" readOnly rows={6} value={JSON.stringify(def.params ?? {}, null, 2)} />
        )}
      </Section>
      {isTrigger(def.type) ? null : (
        <Section title="Retries">
          <Retry retry={def.retry} disabled={readOnly} onChange={(retry) => onEdit({ retry }, 'retry')} />
        </Section>
      )}
    </div>
  );
});

/** The side panel for a selected edge: where it goes and on which branch. */
export function EdgeInspector({
  edge,
  nodes,
  onDelete,
  readOnly,
}: {
  edge: LinkEdge;
  nodes: ReadonlyMap<string, StepNode>;
  onDelete: () => void;
  readOnly?: boolean;
}) {
  const name = (id: string) => nodes.get(id)?.data.def.name || id;
  const output = edge.sourceHandle ?? MAIN;
  return (
    <div role="region" aria-label="Edge" className="space-y-3 px-4 py-4">
      <h2 className="text-base font-semibold text-slate-900">Edge</h2>
      <p className="text-sm text-slate-700">
        From <strong>{name(edge.source)}</strong>
        {output === MAIN ? (
          ''
        ) : (
          <>
            {' '}
            on its <strong>{output}</strong> branch
          </>
        )}{' '}
        to <strong>{name(edge.target)}</strong>.
      </p>
      {readOnly ? null : (
        <Button variant="danger" size="sm" onClick={onDelete}>
          <Trash2 className="size-4" />
          Delete edge
        </Button>
      )}
    </div>
  );
}

/** The side panel when nothing is selected: the workflow's settings. */
export const WorkflowSettings = memo(function WorkflowSettings({
  meta,
  onChange,
  readOnly,
  runShown,
}: {
  meta: WorkflowMeta;
  onChange: (meta: Partial<WorkflowMeta>, field: string) => void;
  readOnly?: boolean;
  runShown?: boolean;
}) {
  const budgetError = meta.budgetUsd.trim() !== '' && !(Number(meta.budgetUsd) >= 0) ? 'A number of US dollars, 0 or more (empty: no budget)' : undefined;
  return (
    <div role="region" aria-label="Workflow settings">
      <Section title="Workflow">
        <TextArea
          label="Description"
          rows={3}
          maxLength={4000}
          value={meta.description}
          disabled={readOnly}
          onChange={(e) => onChange({ description: e.target.value }, 'description')}
          className="block w-full rounded-md border-0 px-3 py-2 text-sm text-slate-900 ring-1 ring-inset ring-slate-300 focus:ring-2 focus:ring-indigo-600"
        />
        <TextField
          label="Budget (USD per run)"
          inputMode="decimal"
          value={meta.budgetUsd}
          disabled={readOnly}
          error={budgetError}
          hint="Empty: no budget of its own"
          onChange={(e) => onChange({ budgetUsd: e.target.value }, 'budget')}
        />
      </Section>
      {runShown ? (
        <div className="border-b border-slate-200 px-4 py-4 text-sm text-slate-600">Click a step on the canvas to see its items and errors in this run.</div>
      ) : null}
      <Section title="Shortcuts">
        <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-xs text-slate-600">
          <dt className="font-mono">Delete</dt>
          <dd>remove the selection</dd>
          <dt className="font-mono">Ctrl/⌘ D</dt>
          <dd>duplicate the selected steps</dd>
          <dt className="font-mono">Ctrl/⌘ Z</dt>
          <dd>undo</dd>
          <dt className="font-mono">Ctrl/⌘ ⇧ Z, Ctrl Y</dt>
          <dd>redo</dd>
          <dt className="font-mono">Ctrl/⌘ S</dt>
          <dd>save</dd>
        </dl>
      </Section>
    </div>
  );
});
