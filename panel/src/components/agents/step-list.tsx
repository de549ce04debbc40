import { formatTime } from './time';
import { stepTitle, type AgentStep } from './steps';

const TONE: Record<AgentStep['type'], string> = {
  thinking: 'bg-slate-100 text-slate-600',
  message: 'bg-indigo-100 text-indigo-700',
  tool_call: 'bg-sky-100 text-sky-700',
  tool_result: 'bg-emerald-100 text-emerald-700',
  error: 'bg-red-100 text-red-700',
  handoff: 'bg-violet-100 text-violet-700',
};

const SYMBOL: Record<AgentStep['type'], string> = {
  thinking: '…',
  message: '✎',
  tool_call: '→',
  tool_result: '←',
  error: '!',
  handoff: '⇄',
};

/** A tool's output is usually JSON: shown indented when it is, as text when not. */
function pretty(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2);
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0);
}

/** The timeline of an agent run: one entry per step, in index order. */
export function StepList({ steps }: { steps: readonly AgentStep[] }) {
  return (
    <ol aria-label="Steps" className="space-y-3">
      {steps.map((step) => (
        <li key={step.index} className="flex gap-3" aria-label={`Step ${step.index + 1}: ${stepTitle(step)}`}>
          <span aria-hidden="true" className={`mt-0.5 flex size-7 shrink-0 items-center justify-center rounded-full text-sm font-semibold ${TONE[step.type]}`}>
            {SYMBOL[step.type]}
          </span>
          <div className="min-w-0 flex-1 rounded-lg bg-white p-3 shadow-xs ring-1 ring-slate-200">
            <div className="flex items-baseline justify-between gap-2">
              <p className="text-sm font-medium text-slate-900">{stepTitle(step)}</p>
              <span className="shrink-0 text-xs text-slate-500">
                #{step.index + 1} · {formatTime(step.at)}
              </span>
            </div>
            {step.type === 'thinking' && step.text ? <p className="mt-1 text-sm text-slate-600 italic">{step.text}</p> : null}
            {(step.type === 'message' || step.type === 'handoff') && step.text ? (
              <p className="mt-1 text-sm whitespace-pre-wrap text-slate-800">{step.text}</p>
            ) : null}
            {step.type === 'error' ? <p className="mt-1 text-sm whitespace-pre-wrap text-red-700">{step.text ?? step.output ?? 'The step failed.'}</p> : null}
            {step.type === 'tool_call' && isEmpty(step.input) ? <p className="mt-1 text-xs text-slate-500">No arguments</p> : null}
            {step.type === 'tool_call' && !isEmpty(step.input) ? (
              <pre className="mt-2 max-h-48 overflow-auto rounded bg-slate-50 p-2 text-xs text-slate-700">{pretty(step.input)}</pre>
            ) : null}
            {step.type === 'tool_result' && step.output !== undefined ? (
              <details className="mt-2">
                <summary className="cursor-pointer text-xs font-medium text-slate-600">Output</summary>
                <pre className="mt-1 max-h-64 overflow-auto rounded bg-slate-50 p-2 text-xs text-slate-700">{pretty(step.output)}</pre>
              </details>
            ) : null}
            {step.type === 'handoff' && step.name ? <p className="mt-1 text-xs text-slate-500">To {step.name}</p> : null}
          </div>
        </li>
      ))}
    </ol>
  );
}
