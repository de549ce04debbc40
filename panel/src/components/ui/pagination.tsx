export function Pagination({
  page,
  pageSize,
  total,
  estimate,
  onPage,
}: {
  page: number;
  pageSize: number;
  total: number;
  estimate?: boolean;
  onPage: (page: number) => void;
}) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const from = total === 0 ? 0 : (page - 1) * pageSize + 1;
  const to = Math.min(total, page * pageSize);
  return (
    <nav aria-label="Pagination" className="flex items-center justify-between py-3 text-sm text-slate-600">
      <p>{total === 0 ? 'No results' : `${from}–${to} of ${estimate ? 'about ' : ''}${total.toLocaleString()}`}</p>
      <div className="flex gap-2">
        <button
          type="button"
          className="rounded-md px-3 py-1.5 ring-1 ring-slate-300 disabled:opacity-40"
          disabled={page <= 1}
          onClick={() => onPage(page - 1)}
        >
          Previous
        </button>
        <span className="px-2 py-1.5">
          Page {page} of {estimate ? 'many' : pages}
        </span>
        <button
          type="button"
          className="rounded-md px-3 py-1.5 ring-1 ring-slate-300 disabled:opacity-40"
          disabled={page >= pages}
          onClick={() => onPage(page + 1)}
        >
          Next
        </button>
      </div>
    </nav>
  );
}
