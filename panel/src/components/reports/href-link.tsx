import type { ReactNode } from 'react';
import { useNavigate } from '@tanstack/react-router';

/**
 * A link to a panel address built as text (`panelPath`): followed by the router, without a reload,
 * and still a real link (open in a new tab, copy the address).
 */
export function HrefLink({ href, children, className }: { href: string; children: ReactNode; className?: string }) {
  const navigate = useNavigate();
  return (
    <a
      href={href}
      className={className ?? 'font-medium text-indigo-700 hover:underline'}
      onClick={(e) => {
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        void navigate({ href });
      }}
    >
      {children}
    </a>
  );
}
