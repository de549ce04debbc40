import type { ReactNode, ThHTMLAttributes, TdHTMLAttributes } from 'react';

export function Table({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="overflow-x-auto rounded-lg bg-white shadow-xs ring-1 ring-slate-200">
      <table aria-label={label} className="min-w-full divide-y divide-slate-200 text-sm">
        {children}
      </table>
    </div>
  );
}

export function Th({ children, className = '', ...props }: ThHTMLAttributes<HTMLTableCellElement>) {
  return (
    <th scope="col" className={`px-3 py-2.5 text-left text-xs font-semibold tracking-wide text-slate-600 uppercase ${className}`} {...props}>
      {children}
    </th>
  );
}

/**
 * A column header that sorts the list: `sort` is the list's current sort (`field` or `-field`);
 * clicking sorts by this field, ascending first, then descending.
 */
export function SortTh({ field, label, sort, onSort }: { field: string; label: string; sort: string; onSort: (sort: string) => void }) {
  const direction = sort === field ? 'ascending' : sort === `-${field}` ? 'descending' : 'none';
  return (
    <Th aria-sort={direction}>
      <button
        type="button"
        className="inline-flex items-center gap-1 uppercase hover:text-slate-900"
        onClick={() => onSort(sort === field ? `-${field}` : field)}
      >
        {label}
        <span aria-hidden="true" className="text-slate-400">
          {direction === 'ascending' ? '▲' : direction === 'descending' ? '▼' : '↕'}
        </span>
      </button>
    </Th>
  );
}

export function Td({ children, className = '', ...props }: TdHTMLAttributes<HTMLTableCellElement>) {
  return (
    <td className={`px-3 py-2.5 align-top text-slate-700 ${className}`} {...props}>
      {children}
    </td>
  );
}
