import { useState } from 'react';

/** A secret shown once (an API key, a signing secret), with a copy button. */
export function SecretOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="rounded-md border border-amber-300 bg-amber-50 p-3">
      <p className="text-sm font-medium text-amber-900">{label}: copy it now, it is not shown again.</p>
      <div className="mt-2 flex items-center gap-2">
        <code aria-label={label} className="flex-1 overflow-x-auto rounded bg-white px-2 py-1.5 font-mono text-xs text-slate-900 ring-1 ring-amber-200">
          {value}
        </code>
        <button
          type="button"
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
    </div>
  );
}
