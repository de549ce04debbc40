import type { ReactNode } from 'react';
import { ErrorState, Loading } from './states';

/**
 * A query's three states in one place: loading (a `role="status"` line, `loading` its words), the
 * error in words (with "Try again" when `retry` is set) and, once there is data, `empty` when
 * `isEmpty` says so, else `children(data)`.
 */
/** What QueryState reads of a query (a useQuery or a useInfiniteQuery result). */
interface QueryLike<T> {
  isPending: boolean;
  isError: boolean;
  error: unknown;
  data: T | undefined;
  refetch: () => unknown;
}

export function QueryState<T>({
  query,
  loading,
  retry = false,
  errorClassName,
  isEmpty,
  empty,
  children,
}: {
  query: QueryLike<T>;
  loading?: string;
  retry?: boolean;
  /** A box around the error (a pane with its own padding). */
  errorClassName?: string;
  isEmpty?: (data: T) => boolean;
  empty?: ReactNode;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading label={loading} />;
  if (query.isError) {
    const error = <ErrorState error={query.error} retry={retry ? () => void query.refetch() : undefined} />;
    return errorClassName ? <div className={errorClassName}>{error}</div> : error;
  }
  const data = query.data as T;
  if (isEmpty?.(data)) return <>{empty}</>;
  return <>{children(data)}</>;
}

/** The items of a page of a list are none. */
export const noItems = (page: { items: readonly unknown[] }) => page.items.length === 0;
