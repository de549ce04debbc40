import { useNavigate } from '@tanstack/react-router';
import { compact, PAGE, PAGE_SIZE, type ListSearch } from './list';

/**
 * A list page's URL state (CONTRACT §11): the page and size to read, `setSearch` (a changed filter
 * goes back to the first page; replaces the history entry), `setPage` (a new history entry, so Back
 * returns to the previous page) and `clear` (every filter off, keeping `keep`).
 */
export function useList<S extends ListSearch>(search: S) {
  const navigate = useNavigate();
  const go = (next: (prev: S) => object, replace: boolean) => void navigate({ to: '.', search: next, replace } as never);
  return {
    page: search.page ?? PAGE,
    pageSize: search.pageSize ?? PAGE_SIZE,
    setSearch: (next: Partial<S>) => go((prev) => compact({ ...prev, page: undefined, ...next }), true),
    setPage: (page: number) => go((prev) => ({ ...prev, page }), false),
    clear: (keep: Partial<S> = {}) => go(() => compact(keep), true),
  };
}
