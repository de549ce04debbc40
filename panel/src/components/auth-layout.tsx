import type { ReactNode } from 'react';

export function AuthLayout({ title, children, footer }: { title: string; children: ReactNode; footer?: ReactNode }) {
  return (
    <main className="flex min-h-screen items-center justify-center bg-slate-100 p-4">
      <div className="w-full max-w-sm">
        <p className="mb-6 text-center text-sm font-semibold tracking-wide text-indigo-600 uppercase">Automation</p>
        <section className="rounded-xl bg-white p-8 shadow-sm ring-1 ring-slate-200">
          <h1 className="mb-6 text-xl font-semibold text-slate-900">{title}</h1>
          {children}
        </section>
        {footer ? <div className="mt-4 text-center text-sm text-slate-600">{footer}</div> : null}
      </div>
    </main>
  );
}
