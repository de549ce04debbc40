import { FULL_ACCESS, SCOPE_GROUPS, toggleScope, type Scope } from './scopes';

/** Checkboxes for the scopes of a key: full access, or read and write per resource. */
export function ScopePicker({ value, onChange, error }: { value: readonly Scope[]; onChange: (next: Scope[]) => void; error?: string }) {
  const full = value.includes(FULL_ACCESS);
  const box = (scope: Scope, label: string) => (
    <label className="inline-flex items-center gap-1.5 text-sm text-slate-700">
      <input
        type="checkbox"
        className="size-4"
        aria-label={scope}
        checked={full || value.includes(scope)}
        disabled={full}
        onChange={() => onChange(toggleScope(value, scope))}
      />
      {label}
    </label>
  );
  return (
    <fieldset aria-describedby="scope-picker-summary">
      <legend className="text-sm font-medium text-slate-700">Scopes</legend>
      <label className="mt-2 flex items-start gap-2 rounded-md bg-slate-50 p-3 text-sm ring-1 ring-slate-200">
        <input type="checkbox" className="mt-0.5 size-4" checked={full} onChange={() => onChange(full ? [] : [FULL_ACCESS])} />
        <span>
          <span className="font-medium text-slate-800">Full access (*)</span>
          <span className="block text-xs text-slate-500">Every scope, including ones added later. Prefer the narrowest set that works.</span>
        </span>
      </label>
      <table className="mt-2 w-full text-sm">
        <caption className="sr-only">Scopes by resource</caption>
        <thead>
          <tr className="text-left text-xs text-slate-500 uppercase">
            <th scope="col" className="py-1.5 font-semibold">
              Resource
            </th>
            <th scope="col" className="py-1.5 font-semibold">
              Read
            </th>
            <th scope="col" className="py-1.5 font-semibold">
              Write
            </th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {SCOPE_GROUPS.map((g) => (
            <tr key={g.label}>
              <th scope="row" className="py-1.5 pr-3 text-left font-normal">
                <span className="font-medium text-slate-800">{g.label}</span>
                <span className="block text-xs text-slate-500">{g.description}</span>
              </th>
              <td className="py-1.5">{'read' in g ? box(g.read, 'Read') : <span className="text-slate-300">—</span>}</td>
              <td className="py-1.5">{'write' in g ? box(g.write, 'Write') : <span className="text-slate-300">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p id="scope-picker-summary" className={`mt-1 text-xs ${error || value.length === 0 ? 'text-red-600' : 'text-slate-500'}`}>
        {error ??
          (full
            ? 'This key can do everything an API key can.'
            : value.length === 0
              ? 'Choose at least one scope.'
              : `${value.length} scopes: ${value.join(', ')}`)}
      </p>
    </fieldset>
  );
}
