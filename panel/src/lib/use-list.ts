import { useNavigate } from '@tanstack/react-router';
import { compact, PAGE, PAGE_SIZE, type ListSearch } from './list';

/**
 * A page's list state in the URL (CONTRACT §11), the one way pages change it: the page and size to
 * read; `setSearch` (a changed filter or sort goes back to the first page unless `keepPage`, and
 * replaces the history entry unless `push`); `setPage` (a new history entry, so Back returns to the
 * previous page; the first page is left out of the URL as `listSearch` reads it); and `clear`
 * (every filter off, keeping `keep`). Empty values are dropped, so the URL carries only what is set.
 */
export function useList<S extends object>(search: S) {
  const navigate = useNavigate();
  const go = (next: (prev: S) => object, replace: boolean) => void navigate({ to: '.', search: next, replace } as never);
  return {
    page: (search as ListSearch).page ?? PAGE,
    pageSize: (search as ListSearch).pageSize ?? PAGE_SIZE,
    setSearch: (next: Partial<S>, options: { keepPage?: boolean; push?: boolean } = {}) =>
      go((prev) => compact({ ...prev, ...(options.keepPage ? {} : { page: undefined }), ...next }), !options.push),
    setPage: (page: number) => go((prev) => compact({ ...prev, page: page === PAGE ? undefined : page }), false),
    clear: (keep: Partial<S> = {}) => go(() => compact(keep), true),
  };
}
