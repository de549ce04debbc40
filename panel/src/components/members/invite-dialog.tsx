import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/client';
import { useInvite } from '../../queries/members';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { SelectField, TextField } from '../ui/field';
import { FormError } from '../ui/states';
import { CopyText } from '../settings/copy-text';
import { aRole, assignableRoles, type MemberRole } from './roles';

/** Invites an e-mail address with a role; the link is shown to the inviter (and e-mailed when a relay is set up). */
export function InviteDialog({
  orgId,
  myRole,
  open,
  onOpenChange,
}: {
  orgId: string;
  myRole: string | null;
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<MemberRole>('member');
  const invite = useInvite(orgId);
  const close = (next: boolean) => {
    onOpenChange(next);
    if (!next) {
      invite.reset();
      setEmail('');
      setRole('member');
    }
  };
  const errors = invite.error instanceof ApiError ? invite.error.fieldErrors : {};
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate({ email: email.trim(), role });
  };
  const sent = invite.data;
  return (
    <Modal
      open={open}
      onOpenChange={close}
      title={sent ? 'Invitation created' : 'Invite a member'}
      description={sent ? undefined : 'They join with the role you choose. A new address gets an account when the invitation is accepted.'}
    >
      {sent ? (
        <div className="space-y-4 text-sm text-slate-700">
          <p role="status">
            {sent.emailed
              ? `An e-mail with this link was sent to ${sent.email}.`
              : `No e-mail was sent (no mail relay is configured): send this link to ${sent.email} yourself.`}
            {` They join as ${aRole(sent.role)}. The link works once, until ${new Date(sent.expiresAt).toLocaleDateString()}.`}
          </p>
          <div>
            <p className="mb-1 font-medium">Invitation link</p>
            <CopyText label="Invitation link" value={sent.url} />
            <p className="mt-1 text-xs text-slate-500">It is not shown again; inviting the same address again makes a new link.</p>
          </div>
          <div className="flex justify-end gap-2">
            <Button
              onClick={() => {
                invite.reset();
                setEmail('');
              }}
            >
              Invite another
            </Button>
            <Button variant="primary" onClick={() => close(false)}>
              Done
            </Button>
          </div>
        </div>
      ) : (
        <form className="space-y-4" onSubmit={submit}>
          <TextField
            label="Email"
            type="email"
            required
            maxLength={254}
            autoComplete="off"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            error={errors.email}
          />
          <SelectField
            label="Role"
            value={role}
            onChange={(e) => setRole(e.target.value as MemberRole)}
            error={errors.role}
            options={assignableRoles(myRole).map((r) => ({ value: r.value, label: `${r.label}: ${r.description}` }))}
          />
          <FormError error={invite.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => close(false)}>Cancel</Button>
            <Button type="submit" variant="primary" disabled={invite.isPending}>
              Send invitation
            </Button>
          </div>
        </form>
      )}
    </Modal>
  );
}
