import { useState } from 'react';
import { useBulkLeads, type BulkAction as Action } from '../../queries/leads';
import { LEAD_STATUSES } from '../../../../src/shared/leads.ts';
import { Button } from '../ui/button';
import { Modal } from '../ui/dialog';
import { TextField } from '../ui/field';
import { FormError } from '../ui/states';

/** Bulk actions on the selected leads: tag, untag, set status, delete (confirmed). */
export function BulkBar({ orgId, ids, onDone }: { orgId: string; ids: string[]; onDone: (message: string) => void }) {
  const [dialog, setDialog] = useState<Action | null>(null);
  const [value, setValue] = useState('');
  const bulk = useBulkLeads(orgId, (data) => {
    const verb = data.action === 'delete' ? 'deleted' : 'updated';
    setDialog(null);
    setValue('');
    onDone(`${data.updated} of ${ids.length} leads ${verb}.`);
  });
  const tags = value
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  return (
    <div
      className="mb-3 flex flex-wrap items-center gap-2 rounded-md bg-indigo-50 px-3 py-2 text-sm ring-1 ring-indigo-200"
      role="region"
      aria-label="Bulk actions"
    >
      <span className="font-medium text-indigo-900">{ids.length} selected</span>
      <Button size="sm" onClick={() => setDialog('tag')}>
        Add tags
      </Button>
      <Button size="sm" onClick={() => setDialog('untag')}>
        Remove tags
      </Button>
      <Button size="sm" onClick={() => setDialog('setStatus')}>
        Set status
      </Button>
      <Button size="sm" variant="danger" onClick={() => setDialog('delete')}>
        Delete
      </Button>

      <Modal
        open={dialog === 'tag' || dialog === 'untag'}
        onOpenChange={(open) => !open && setDialog(null)}
        title={dialog === 'tag' ? `Add tags to ${ids.length} leads` : `Remove tags from ${ids.length} leads`}
      >
        <form
          className="space-y-4"
          onSubmit={(e) => {
            e.preventDefault();
            bulk.mutate({ ids, action: dialog!, value: tags });
          }}
        >
          <TextField label="Tags" value={value} onChange={(e) => setValue(e.target.value)} hint="Separate several with commas." required />
          <FormError error={bulk.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => setDialog(null)}>Cancel</Button>
            <Button type="submit" variant="primary" disabled={tags.length === 0 || bulk.isPending}>
              {dialog === 'tag' ? 'Add tags' : 'Remove tags'}
            </Button>
          </div>
        </form>
      </Modal>

      <Modal open={dialog === 'setStatus'} onOpenChange={(open) => !open && setDialog(null)} title={`Set the status of ${ids.length} leads`}>
        <div className="grid grid-cols-2 gap-2">
          {LEAD_STATUSES.map((s) => (
            <Button key={s} onClick={() => bulk.mutate({ ids, action: 'setStatus', value: s })} disabled={bulk.isPending}>
              {s}
            </Button>
          ))}
        </div>
        <div className="mt-3">
          <FormError error={bulk.error} />
        </div>
      </Modal>

      <Modal
        open={dialog === 'delete'}
        onOpenChange={(open) => !open && setDialog(null)}
        title={`Delete ${ids.length} leads?`}
        description="Their history goes with them. This cannot be undone."
      >
        <FormError error={bulk.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => setDialog(null)}>Cancel</Button>
          <Button variant="danger" onClick={() => bulk.mutate({ ids, action: 'delete' })} disabled={bulk.isPending}>
            Delete leads
          </Button>
        </div>
      </Modal>
    </div>
  );
}
