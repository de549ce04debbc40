import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/client';
import { useAddSuppression, useDeleteCampaign, useDeleteSuppression, useTestSend } from '../../queries/campaigns';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { SelectField, TextField } from '../ui/field';
import { FormError } from '../ui/states';
import { channelLabel } from '../conversations/model';
import { CAMPAIGN_CHANNELS, REASON_LABELS, SUPPRESSION_REASONS, type Campaign, type Suppression } from './model';

const ADDRESS_HINT: Record<string, string> = {
  email: 'An e-mail address.',
  whatsapp: 'A phone number in international form, e.g. +4915112345678.',
  telegram: 'The Telegram chat id.',
};

/** Sends the first step, rendered, to one address; it is not counted in the campaign. */
export function TestSendDialog({
  orgId,
  campaign,
  open,
  onOpenChange,
}: {
  orgId: string;
  campaign: Campaign;
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const [to, setTo] = useState('');
  const send = useTestSend(orgId, campaign.id);
  const close = (next: boolean) => {
    onOpenChange(next);
    if (!next) send.reset();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    send.mutate(to.trim());
  };
  return (
    <Modal
      open={open}
      onOpenChange={close}
      title="Send a test"
      description={`The first step, personalised, through the campaign's ${channelLabel(campaign.channel)} inbox. It is not counted in the campaign.`}
    >
      <form className="space-y-4" onSubmit={submit}>
        <TextField
          label="Send to"
          required
          minLength={3}
          maxLength={320}
          type={campaign.channel === 'email' ? 'email' : 'text'}
          value={to}
          onChange={(e) => setTo(e.target.value)}
          hint={ADDRESS_HINT[campaign.channel]}
          error={send.error instanceof ApiError ? send.error.fieldErrors.to : undefined}
        />
        {send.isSuccess ? (
          <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
            Test queued for {to.trim()}. It shows in Conversations like any message.
          </p>
        ) : null}
        <FormError error={send.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => close(false)}>{send.isSuccess ? 'Done' : 'Cancel'}</Button>
          <Button type="submit" variant="primary" disabled={send.isPending || to.trim().length < 3}>
            Send test
          </Button>
        </div>
      </form>
    </Modal>
  );
}

export function DeleteCampaignDialog({
  orgId,
  campaign,
  open,
  onOpenChange,
  onDeleted,
}: {
  orgId: string;
  campaign: Campaign;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onDeleted: () => void;
}) {
  const remove = useDeleteCampaign(orgId, campaign.id, () => onOpenChange(false));
  return (
    <Modal
      open={open}
      onOpenChange={(next) => {
        onOpenChange(next);
        if (!next) remove.reset();
      }}
      title={`Delete ${campaign.name}?`}
      description="Its recipients and their history are deleted with it. Messages already sent stay in Conversations."
    >
      <FormError error={remove.error} />
      <div className="mt-4 flex justify-end gap-2">
        <Button onClick={() => onOpenChange(false)}>Cancel</Button>
        <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate(undefined, { onSuccess: onDeleted })}>
          Delete campaign
        </Button>
      </div>
    </Modal>
  );
}

/** Suppresses an address on a channel: no campaign sends to it again. */
export function AddSuppressionDialog({ orgId, open, onOpenChange }: { orgId: string; open: boolean; onOpenChange: (open: boolean) => void }) {
  const [channel, setChannel] = useState<string>('email');
  const [address, setAddress] = useState('');
  const [reason, setReason] = useState<Suppression['reason']>('manual');
  const add = useAddSuppression(orgId);
  const close = (next: boolean) => {
    onOpenChange(next);
    if (!next) {
      add.reset();
      setAddress('');
    }
  };
  const errors = add.error instanceof ApiError ? add.error.fieldErrors : {};
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate({ channel, address: address.trim(), reason }, { onSuccess: () => close(false) });
  };
  return (
    <Modal open={open} onOpenChange={close} title="Add suppression" description="Campaigns skip this address on this channel, now and in every later campaign.">
      <form className="space-y-4" onSubmit={submit}>
        <SelectField
          label="Channel"
          value={channel}
          onChange={(e) => setChannel(e.target.value)}
          error={errors.channel}
          options={CAMPAIGN_CHANNELS.map((c) => ({ value: c, label: channelLabel(c) }))}
        />
        <TextField
          label="Address"
          required
          maxLength={320}
          value={address}
          onChange={(e) => setAddress(e.target.value)}
          error={errors.address}
          hint={ADDRESS_HINT[channel]}
        />
        <SelectField
          label="Reason"
          value={reason}
          onChange={(e) => setReason(e.target.value as Suppression['reason'])}
          error={errors.reason}
          options={SUPPRESSION_REASONS.map((r) => ({ value: r, label: REASON_LABELS[r] ?? r }))}
        />
        <FormError error={add.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => close(false)}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={add.isPending || address.trim() === ''}>
            Add suppression
          </Button>
        </div>
      </form>
    </Modal>
  );
}

export function DeleteSuppressionDialog({
  orgId,
  suppression,
  onOpenChange,
}: {
  orgId: string;
  suppression: Suppression | null;
  onOpenChange: (open: boolean) => void;
}) {
  const remove = useDeleteSuppression(orgId, () => onOpenChange(false));
  return (
    <Modal
      open={suppression !== null}
      onOpenChange={(next) => {
        onOpenChange(next);
        if (!next) remove.reset();
      }}
      title={`Lift the suppression of ${suppression?.address ?? 'this address'}?`}
      description="Later campaigns may send to it again. A lead who unsubscribed asked not to be contacted: lift it only when they agreed again."
    >
      <FormError error={remove.error} />
      <div className="mt-4 flex justify-end gap-2">
        <Button onClick={() => onOpenChange(false)}>Cancel</Button>
        <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate(suppression!.id)}>
          Lift suppression
        </Button>
      </div>
    </Modal>
  );
}
