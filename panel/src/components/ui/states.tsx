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
  const title = api?.status === 403 ? 'You do not have access to this'
    : api?.status === 404 ? 'Not found'
    : api?.status === 429 ? 'Too many requests'
    : 'Something went wrong';
  const message = api?.status === 403
    ? `${(api.body.message ?? 'Your role does not allow this.').replace(/([^.!?])$/, '$1.')} Ask an owner or admin of the organization if you need it.`
    : error instanceof Error ? error.message : String(error);
  return (
    <div role="alert" className="rounded-lg border border-red-200 bg-red-50 p-4 text-sm text-red-800">
      <p className="font-semibold">{title}</p>
      <p className="mt-1">{message}</p>
      {retry ? <button type="button" className="mt-2 font-medium underline" onClick={retry}>Try again</button> : null}
    </div>
  );
}

/** An error of a form's submission, next to its button. */
export function FormError({ error }: { error: unknown }) {
  if (!error) return null;
  return <p role="alert" className="text-sm text-red-600">{error instanceof Error ? error.message : String(error)}</p>;
}
