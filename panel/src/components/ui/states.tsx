import type { ReactNode } from 'react';
import { ApiError } from '../../api/client';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div role="status" className="flex items-center gap-2 p-6 text-sm text-slate-500">
      <span className="size-4 animate-spin rounded-full border-2 border-slate-300 border-t-indigo-600" aria-hidden="true" />
      {label}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="rounded-lg border border-dashed border-slate-300 bg-white p-10 text-center">
      <p className="font-medium text-slate-800">{title}</p>
      {children ? <div className="mt-2 text-sm text-slate-600">{children}</div> : null}
    </div>
  );
}

/** What went wrong, in words: a 403 says the role does not allow it, never a blank page. */
export function ErrorState({ error, retry }: { error: unknown; retry?: () => void }) {
  const api = error instanceof ApiError ? error : null;
  const plan = planProblem(error);
  if (plan) {
    return (
      <div role="alert" className="rounded-lg border border-amber-200 bg-amber-50 p-4 text-sm text-amber-900">
        <p className="font-semibold">{plan.title}</p>
        <p className="mt-1">{plan.message}</p>
        {retry && api?.code === 'PLAN_LIMIT' ? (
          <button type="button" className="mt-2 font-medium underline" onClick={retry}>
            Try again
          </button>
        ) : null}
      </div>
    );
  }
  const title =
    api?.status === 403
      ? 'You do not have access to this'
      : api?.status === 404
        ? 'Not found'
        : api?.status === 429
          ? 'Too many requests'
          : 'Something went wrong';
  const message =
    api?.status === 403
      ? `${(api.body.message ?? 'Your role does not allow this.').replace(/([^.!?])$/, '$1.')} Ask an owner or admin of the organization if you need it.`
      : error instanceof Error
        ? error.message
        : String(error);
  return (
    <div role="alert" className="rounded-lg border border-red-200 bg-red-50 p-4 text-sm text-red-800">
      <p className="font-semibold">{title}</p>
      <p className="mt-1">{message}</p>
      {retry ? (
        <button type="button" className="mt-2 font-medium underline" onClick={retry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/**
 * The organization's plan refused it (CONTRACT §12): 403 PLAN_FEATURE, a feature the plan lacks, or
 * 429 PLAN_LIMIT, a limit reached (`details: { limit, value, used }`). In words, with what to do.
 */
export function planProblem(error: unknown): { title: string; message: string } | null {
  if (!(error instanceof ApiError)) return null;
  const sentence = (text: string) => text.replace(/([^.!?])$/, '$1.');
  if (error.code === 'PLAN_FEATURE') {
    return {
      title: 'Not included in your plan',
      message: `${sentence(error.message)} Ask the operator of this service to change the organization's plan (Settings → Plan shows it).`,
    };
  }
  if (error.code === 'PLAN_LIMIT') {
    const details = (error.body as { details?: { limit?: string; value?: number; used?: number } }).details;
    const monthly = details?.limit?.endsWith('PerMonth');
    const usage = details?.value !== undefined ? ` (${details.used ?? details.value} of ${details.value} used)` : '';
    return {
      title: 'Plan limit reached',
      message: `${sentence(error.message.replace(/\.$/, '') + usage)} ${monthly ? 'It resets when the month ends (UTC); or ask' : 'Remove some first, or ask'} the operator of this service for a larger plan.`,
    };
  }
  return null;
}

/** An error of a form's submission, next to its button. */
export function FormError({ error }: { error: unknown }) {
  if (!error) return null;
  const plan = planProblem(error);
  return (
    <p role="alert" className="text-sm text-red-600">
      {plan ? `${plan.title}: ${plan.message}` : error instanceof Error ? error.message : String(error)}
    </p>
  );
}
