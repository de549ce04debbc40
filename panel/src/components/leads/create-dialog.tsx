import { useState } from 'react';
import type { Schemas } from '../../api/client';
import { useCreateLead } from '../../queries/leads';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { FormError } from '../ui/states';
import { EMPTY_LEAD, LeadForm, leadBody, type LeadFields } from './lead-form';

/** A new lead; when it matches someone already there, says so and on which key (SPEC de-duplication). */
export function CreateLeadDialog({
  orgId,
  open,
  onOpenChange,
  onOpenLead,
}: {
  orgId: string;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onOpenLead: (id: string) => void;
}) {
  const [outcome, setOutcome] = useState<Schemas['Lead'] | null>(null);
  const create = useCreateLead(orgId, setOutcome);
  const submit = (fields: LeadFields) => {
    const body = leadBody(fields, 'omit');
    create.mutate({ ...body, name: body.name ?? undefined });
  };
  const close = (next: boolean) => {
    onOpenChange(next);
    if (!next) {
      setOutcome(null);
      create.reset();
    }
  };
  return (
    <Modal open={open} onOpenChange={close} title="New lead" description="At least one of name, e-mail, phone or website." wide>
      {outcome ? (
        <div className="space-y-4">
          <p role="status" className={`rounded-md p-3 text-sm ${outcome.deduplicated ? 'bg-amber-50 text-amber-900' : 'bg-emerald-50 text-emerald-900'}`}>
            {outcome.deduplicated
              ? `This person was already here: matched an existing lead on ${outcome.deduplicated.matchedOn}, which was updated instead of creating a duplicate.`
              : 'Lead created.'}
          </p>
          <div className="flex justify-end gap-2">
            <Button onClick={() => setOutcome(null)}>Add another</Button>
            <Button
              variant="primary"
              onClick={() => {
                close(false);
                onOpenLead(outcome.id);
              }}
            >
              Open lead
            </Button>
          </div>
        </div>
      ) : (
        <LeadForm initial={EMPTY_LEAD} error={create.error} onSubmit={submit}>
          <FormError error={create.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => close(false)}>Cancel</Button>
            <Button type="submit" variant="primary" disabled={create.isPending}>
              Create lead
            </Button>
          </div>
        </LeadForm>
      )}
    </Modal>
  );
}
