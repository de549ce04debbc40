/** The lines under the editor's toolbar: the draft offered back, a save conflict, the API's problems, an import's error, a notice. */
import type { ReactNode } from 'react';
import { ApiError } from '../../../api/client';
import { formatDateTime } from '../../../lib/format';
import { Button } from '../../ui/button';
import { FormError } from '../../ui/states';
import type { StepNode } from '../canvas-model';
import type { Problems } from '../definition';
import type { Draft } from '../drafts';
import type { Workflow } from './doc';
import type { EditorSave } from './use-save';

export function Banner({ tone, children, label }: { tone: 'amber' | 'red' | 'sky' | 'emerald'; children: ReactNode; label?: string }) {
  const tones = {
    amber: 'bg-amber-50 text-amber-900 ring-amber-200',
    red: 'bg-red-50 text-red-800 ring-red-200',
    sky: 'bg-sky-50 text-sky-900 ring-sky-200',
    emerald: 'bg-emerald-50 text-emerald-800 ring-emerald-200',
  };
  return (
    <div role={tone === 'red' ? 'alert' : 'status'} aria-label={label} className={`mx-3 mt-2 rounded-md px-3 py-2 text-sm ring-1 ${tones[tone]}`}>
      {children}
    </div>
  );
}

export function DraftOffer({ offer, base, onRestore, onDiscard }: { offer: Draft; base: Workflow | null; onRestore: () => void; onDiscard: () => void }) {
  return (
    <Banner tone="sky" label="Unsaved draft">
      <span>
        Unsaved changes to this workflow from {formatDateTime(offer.savedAt)} are kept in this browser
        {offer.baseVersion !== null && base && offer.baseVersion !== base.version
          ? ` (made on version ${offer.baseVersion}; the saved workflow is now version ${base.version})`
          : ''}
        .
      </span>{' '}
      <Button size="sm" variant="primary" className="ml-2" onClick={onRestore}>
        Restore draft
      </Button>{' '}
      <Button size="sm" onClick={onDiscard}>
        Discard draft
      </Button>
    </Banner>
  );
}

export function ConflictBanner({ base, saving }: { base: Workflow | null; saving: EditorSave }) {
  const { reload, overwrite, save } = saving;
  return (
    <Banner tone="red" label="Save conflict">
      <p className="font-semibold">Not saved: this workflow was changed elsewhere since you opened it{base ? ` (you have version ${base.version})` : ''}.</p>
      <p className="mt-0.5">
        Your changes are not lost: they are kept as a draft in this browser. Load the saved version to see what changed (your draft is offered back), or save
        yours over it.
      </p>
      <div className="mt-2 flex gap-2">
        <Button size="sm" variant="primary" onClick={() => reload.mutate()} disabled={reload.isPending}>
          Load the saved version
        </Button>
        <Button size="sm" variant="danger" onClick={() => overwrite.mutate()} disabled={overwrite.isPending || save.isPending}>
          Save mine over it
        </Button>
      </div>
      <FormError error={reload.error ?? overwrite.error} />
    </Banner>
  );
}

export function ProblemsBanner({
  problems,
  error,
  nodesById,
  onShow,
}: {
  problems: Problems;
  error: unknown;
  nodesById: Map<string, StepNode>;
  onShow: (id: string) => void;
}) {
  return (
    <Banner tone="red" label="Problems">
      <p className="font-semibold">{error instanceof ApiError && error.code === 'WORKFLOW_INVALID' ? 'Not saved: the workflow is not valid' : 'Not saved'}</p>
      <p className="mt-0.5">{problems.message}</p>
      {problems.nodeIds.size ? (
        <p className="mt-1 flex flex-wrap gap-1.5">
          {[...problems.nodeIds].map((id) => (
            <Button key={id} size="sm" onClick={() => onShow(id)}>
              Show {nodesById.get(id)?.data.def.name ?? id}
            </Button>
          ))}
        </p>
      ) : null}
    </Banner>
  );
}
