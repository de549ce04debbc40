import { createRootRouteWithContext, Outlet } from '@tanstack/react-router';
import type { QueryClient } from '@tanstack/react-query';
import { ErrorState } from '../components/ui/states';

export const Route = createRootRouteWithContext<{ queryClient: QueryClient }>()({
  component: () => <Outlet />,
  errorComponent: ({ error, reset }) => (
    <main className="mx-auto max-w-2xl p-8">
      <ErrorState error={error} retry={reset} />
    </main>
  ),
  notFoundComponent: () => (
    <main className="mx-auto max-w-2xl p-8">
      <h1 className="text-xl font-semibold">Page not found</h1>
      <p className="mt-2 text-sm text-slate-600">
        There is nothing at this address.{' '}
        <a className="text-indigo-600 underline" href="/">
          Go to the start page
        </a>
        .
      </p>
    </main>
  ),
});
