import { Dialog as Radix } from 'radix-ui';
import type { ReactNode } from 'react';

/** A modal dialog (role `dialog`, labelled by its title, focus kept inside, Escape closes). */
export function Modal({
  open,
  onOpenChange,
  title,
  description,
  children,
  wide,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description?: string;
  children: ReactNode;
  wide?: boolean;
}) {
  return (
    <Radix.Root open={open} onOpenChange={onOpenChange}>
      <Radix.Portal>
        <Radix.Overlay className="fixed inset-0 z-40 bg-slate-900/40" />
        <Radix.Content
          className={`fixed top-1/2 left-1/2 z-50 max-h-[90vh] w-[95vw] -translate-x-1/2 -translate-y-1/2 overflow-y-auto rounded-lg bg-white p-6 shadow-xl ${wide ? 'max-w-3xl' : 'max-w-lg'}`}
        >
          <Radix.Title className="text-lg font-semibold text-slate-900">{title}</Radix.Title>
          {description ? (
            <Radix.Description className="mt-1 text-sm text-slate-600">{description}</Radix.Description>
          ) : (
            <Radix.Description className="sr-only">{title}</Radix.Description>
          )}
          <div className="mt-4">{children}</div>
          <Radix.Close className="absolute top-4 right-4 rounded p-1 text-slate-500 hover:bg-slate-100" aria-label="Close">
            ✕
          </Radix.Close>
        </Radix.Content>
      </Radix.Portal>
    </Radix.Root>
  );
}

/** A side panel (a `dialog` on the right), for a record's details beside its list. */
export function SidePanel({
  open,
  onOpenChange,
  title,
  children,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  children: ReactNode;
}) {
  return (
    <Radix.Root open={open} onOpenChange={onOpenChange}>
      <Radix.Portal>
        <Radix.Overlay className="fixed inset-0 z-40 bg-slate-900/20" />
        <Radix.Content className="fixed inset-y-0 right-0 z-50 w-full max-w-xl overflow-y-auto bg-white p-6 shadow-xl">
          <Radix.Title className="pr-8 text-lg font-semibold text-slate-900">{title}</Radix.Title>
          <Radix.Description className="sr-only">{title}</Radix.Description>
          <div className="mt-4">{children}</div>
          <Radix.Close className="absolute top-4 right-4 rounded p-1 text-slate-500 hover:bg-slate-100" aria-label="Close">
            ✕
          </Radix.Close>
        </Radix.Content>
      </Radix.Portal>
    </Radix.Root>
  );
}
