import { useEffect, useState } from 'react';

/**
 * A list's search field: what is typed goes to the URL (`onSearch`) a moment after typing stops,
 * and a change of the URL's value from elsewhere (Clear filters, back button) shows here.
 */
export function SearchBox({
  value,
  onSearch,
  placeholder,
  className = 'flex-1',
}: {
  value: string | undefined;
  onSearch: (q: string | undefined) => void;
  placeholder: string;
  className?: string;
}) {
  const [q, setQ] = useState(value ?? '');
  const [shown, setShown] = useState(value);
  if (value !== shown) {
    setShown(value);
    setQ(value ?? '');
  }
  useEffect(() => {
    const timer = setTimeout(() => {
      if ((value ?? '') !== q) onSearch(q || undefined);
    }, 300);
    return () => clearTimeout(timer);
  });
  return (
    <label className={`text-sm ${className}`}>
      <span className="mb-1 block font-medium text-slate-700">Search</span>
      <input
        type="search"
        value={q}
        onChange={(e) => setQ(e.target.value)}
        placeholder={placeholder}
        className="w-full rounded-md px-3 py-2 ring-1 ring-slate-300"
      />
    </label>
  );
}
