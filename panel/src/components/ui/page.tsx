import type { ReactNode } from 'react';

export function PageHeader({ title, description, actions }: { title: string; description?: ReactNode; actions?: ReactNode }) {
  return (
    <header className="mb-5 flex flex-wrap items-start justify-between gap-3">
      <div>
        <h1 className="text-2xl font-semibold text-slate-900">{title}</h1>
        {description ? <p className="mt-1 text-sm text-slate-600">{description}</p> : null}
      </div>
      {actions ? <div className="flex flex-wrap items-center gap-2">{actions}</div> : null}
    </header>
  );
}

const TONES: Record<string, string> = {
  green: 'bg-emerald-50 text-emerald-700 ring-emerald-600/20',
  red: 'bg-red-50 text-red-700 ring-red-600/20',
  amber: 'bg-amber-50 text-amber-800 ring-amber-600/20',
  blue: 'bg-sky-50 text-sky-700 ring-sky-600/20',
  slate: 'bg-slate-50 text-slate-700 ring-slate-500/20',
  violet: 'bg-violet-50 text-violet-700 ring-violet-600/20',
};

/** A status as a coloured label; the tone follows common meanings (succeeded green, failed red, waiting amber). */
export function Badge({ children, tone }: { children: ReactNode; tone?: keyof typeof TONES }) {
  const text = String(children).toLowerCase();
  const auto = /succeeded|published|qualified|customer|active|approved|delivered|ok/.test(text)
    ? 'green'
    : /fail|error|rejected|lost|canceled|cancelled|exceeded|unqualified|revoked/.test(text)
      ? 'red'
      : /wait|pending|queued|scheduled|paused|draft/.test(text)
        ? 'amber'
        : /running|publishing|engaged|contacted/.test(text)
          ? 'blue'
          : 'slate';
  return <span className={`inline-flex items-center rounded-md px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${TONES[tone ?? auto]}`}>{children}</span>;
}
