import type { paths } from '../../api/schema';

export type TestOutcome = paths['/api/v1/orgs/{orgId}/webhook-endpoints/{id}/test']['post']['responses'][200]['content']['application/json'];

/** The answer to a `ping`: the receiver's status, how long it took, and the start of its body. */
export function TestResult({ outcome }: { outcome: TestOutcome }) {
  return (
    <section aria-label="Test result" className={`rounded-lg p-4 text-sm ring-1 ${outcome.ok ? 'bg-emerald-50 ring-emerald-200' : 'bg-red-50 ring-red-200'}`}>
      <p role="status" className={`font-semibold ${outcome.ok ? 'text-emerald-900' : 'text-red-900'}`}>
        {outcome.ok ? 'Test delivered' : 'Test failed'}
        {outcome.statusCode !== undefined ? `: HTTP ${outcome.statusCode}` : ''}
        {` in ${outcome.durationMs} ms`}
      </p>
      {outcome.error ? <p className="mt-1 text-red-800">{outcome.error}</p> : null}
      <dl className="mt-2 grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-slate-700">
        <dt className="text-slate-500">Status code</dt>
        <dd>{outcome.statusCode ?? 'no answer'}</dd>
        <dt className="text-slate-500">Duration</dt>
        <dd>{outcome.durationMs} ms</dd>
        <dt className="text-slate-500">Response</dt>
        <dd>
          {outcome.responseBodyPreview ? (
            <pre aria-label="Response preview" className="max-h-40 overflow-auto rounded bg-white/70 p-2 text-xs whitespace-pre-wrap ring-1 ring-slate-200">
              {outcome.responseBodyPreview}
            </pre>
          ) : (
            <span className="text-slate-500">empty</span>
          )}
        </dd>
      </dl>
    </section>
  );
}
