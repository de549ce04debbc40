import { useState } from 'react';

/** A value people paste elsewhere (an id, a URL), labelled, with a copy button. */
export function CopyText({ label, value, className = '' }: { label: string; value: string; className?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className={`flex items-center gap-2 ${className}`}>
      <code
        aria-label={label}
        className="min-w-0 flex-1 overflow-x-auto rounded bg-slate-50 px-2 py-1.5 font-mono text-xs whitespace-nowrap text-slate-900 ring-1 ring-slate-200"
      >
        {value}
      </code>
      <button
        type="button"
        aria-label={`Copy ${label.toLowerCase()}`}
        className="rounded-md bg-white px-2.5 py-1.5 text-xs font-medium ring-1 ring-slate-300 hover:bg-slate-50"
        onClick={() =>
          void navigator.clipboard?.writeText(value).then(
            () => setCopied(true),
            () => setCopied(false),
          )
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}
