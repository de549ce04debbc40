import { useState } from 'react';
import type { Schemas } from '../../api/client';
import { useApplyRecommendation } from '../../queries/reports';
import { formatDateTime } from '../../lib/format';
import { Button } from '../ui/button';
import { Modal } from '../ui/dialog';
import { FormError } from '../ui/states';
import { describeAction, describeResult } from './describe';
import { HrefLink } from './href-link';

type Recommendation = Schemas['Recommendation'];

/**
 * A report's recommendations, each with what it does; applying one executes its action for real
 * (after a confirmation) and shows what it made. An applied one keeps its result and cannot be
 * applied again (the API answers 409).
 */
export function Recommendations({ orgId, report, canWrite }: { orgId: string; report: Schemas['Report']; canWrite: boolean }) {
  const [confirm, setConfirm] = useState<Recommendation | null>(null);
  const [results, setResults] = useState<Record<number, unknown>>({});
  // What the action changed (leads, drafts, runs, workflows) is made stale by useApplyRecommendation.
  const apply = useApplyRecommendation(orgId, report.id, (data) => {
    setResults((r) => ({ ...r, [data.recommendation.index]: data.result }));
    setConfirm(null);
  });
  if (report.recommendations.length === 0) return <p className="text-sm text-slate-500">This report recommends nothing.</p>;
  return (
    <>
      <ol className="space-y-3" aria-label="Recommendations">
        {report.recommendations.map((rec) => {
          const result = rec.index in results ? results[rec.index] : rec.result;
          const applied = Boolean(rec.appliedAt) || rec.index in results;
          const outcome = applied ? describeResult(orgId, rec.action, result) : null;
          return (
            <li key={rec.index} aria-label={rec.title} className="rounded-lg bg-white p-4 shadow-xs ring-1 ring-slate-200">
              <div className="flex flex-wrap items-start justify-between gap-3">
                <div className="min-w-0 flex-1">
                  <h3 className="font-medium text-slate-900">{rec.title}</h3>
                  {rec.description ? <p className="mt-1 text-sm text-slate-600">{rec.description}</p> : null}
                  <p className="mt-2 text-xs text-slate-500">{describeAction(rec.action)}</p>
                </div>
                {applied ? (
                  <span className="rounded-md bg-emerald-50 px-2 py-1 text-xs font-medium text-emerald-700 ring-1 ring-emerald-600/20">
                    Applied{rec.appliedAt ? ` ${formatDateTime(rec.appliedAt)}` : ''}
                  </span>
                ) : canWrite ? (
                  <Button
                    variant="primary"
                    size="sm"
                    onClick={() => {
                      apply.reset();
                      setConfirm(rec);
                    }}
                    aria-label={`Apply: ${rec.title}`}
                  >
                    Apply
                  </Button>
                ) : null}
              </div>
              {outcome ? (
                <p role="status" className="mt-3 rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-900">
                  {outcome.text} {outcome.href ? <HrefLink href={outcome.href}>{outcome.linkLabel ?? 'Open'}</HrefLink> : null}
                </p>
              ) : null}
            </li>
          );
        })}
      </ol>
      <Modal
        open={confirm !== null}
        onOpenChange={(open) => !open && setConfirm(null)}
        title="Apply this recommendation?"
        description={confirm ? confirm.title : undefined}
      >
        {confirm ? (
          <div className="space-y-4">
            <p className="text-sm text-slate-700">{describeAction(confirm.action)} This is done for real and cannot be applied twice.</p>
            <details className="text-xs text-slate-600">
              <summary className="cursor-pointer">The action's parameters</summary>
              <pre className="mt-1 max-h-48 overflow-auto rounded bg-slate-50 p-2">{JSON.stringify(confirm.action, null, 2)}</pre>
            </details>
            <FormError error={apply.error} />
            <div className="flex justify-end gap-2">
              <Button onClick={() => setConfirm(null)}>Cancel</Button>
              <Button variant="primary" disabled={apply.isPending} onClick={() => apply.mutate(confirm.index)}>
                Apply recommendation
              </Button>
            </div>
          </div>
        ) : null}
      </Modal>
    </>
  );
}
