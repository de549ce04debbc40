import { useState } from 'react';
import { useCreateInbox, useDeleteInbox, useUpdateInbox } from '../../queries/conversations';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { SecretOnce } from '../ui/copy';
import { FormError } from '../ui/states';
import { CopyText } from '../settings/copy-text';
import { EMPTY_INBOX, InboxForm, configOf, credentialsOf, fieldsOf, type InboxFields } from './inbox-form';
import { channelLabel, type Inbox } from './model';

/** How each generated secret of a 201 is named (CONTRACT §8), and what it is for. */
const SECRET_LABELS: Record<string, { label: string; use: string }> = {
  signingSecret: { label: 'Signing secret', use: 'Verify the X-Service-Signature of each delivery to your URL with it.' },
  verifyToken: { label: 'Verify token', use: "Enter it as the webhook's verify token in the Meta app settings." },
  secretToken: { label: 'Secret token', use: 'Telegram sends it with every update; the service already registered the webhook.' },
  token: { label: 'Inbound token', use: 'Your mail relay posts raw messages to the inbound URL with ?token= this value.' },
};

type Created = Inbox & { secrets?: Record<string, string>; widgetSnippet?: string };

/** A new inbox; afterwards its inbound URL and the secrets it generated, shown this once. */
export function CreateInboxDialog({ orgId, open, onOpenChange }: { orgId: string; open: boolean; onOpenChange: (open: boolean) => void }) {
  const [created, setCreated] = useState<Created | null>(null);
  const create = useCreateInbox(orgId, (inbox) => setCreated(inbox as Created));
  const submit = (f: InboxFields) =>
    create.mutate({
      name: f.name.trim(),
      channel: f.channel,
      ...(f.projectId ? { projectId: f.projectId } : {}),
      config: configOf(f) as never,
      ...(credentialsOf(f) ? { credentials: credentialsOf(f) } : {}),
      bot: { enabled: f.botEnabled },
    });
  const close = (next: boolean) => {
    onOpenChange(next);
    if (!next) {
      setCreated(null);
      create.reset();
    }
  };
  return (
    <Modal
      open={open}
      onOpenChange={close}
      title={created ? 'Inbox created' : 'New inbox'}
      description={created ? undefined : 'One channel account: its messages arrive in Conversations.'}
      wide
    >
      {created ? (
        <div className="space-y-4">
          <p className="text-sm text-slate-700">
            <span className="font-medium">{created.name}</span> ({channelLabel(created.channel)}) is ready.
          </p>
          <div className="space-y-1">
            <p className="text-sm font-medium text-slate-700">Inbound URL</p>
            <CopyText label="Inbound URL" value={created.inboundUrl} />
          </div>
          {Object.entries(created.secrets ?? {}).map(([key, value]) => (
            <div key={key} className="space-y-1">
              <SecretOnce label={SECRET_LABELS[key]?.label ?? key} value={value} />
              {SECRET_LABELS[key] ? <p className="text-xs text-slate-500">{SECRET_LABELS[key].use}</p> : null}
            </div>
          ))}
          {created.widgetSnippet ? (
            <div className="space-y-1">
              <p className="text-sm font-medium text-slate-700">Widget snippet (add it to your site)</p>
              <CopyText label="Widget snippet" value={created.widgetSnippet} />
            </div>
          ) : null}
          <div className="flex justify-end">
            <Button variant="primary" onClick={() => close(false)}>
              Done
            </Button>
          </div>
        </div>
      ) : open ? (
        <InboxForm
          orgId={orgId}
          mode="create"
          initial={EMPTY_INBOX}
          error={create.error}
          pending={create.isPending}
          submitLabel="Create inbox"
          onSubmit={submit}
          onCancel={() => close(false)}
        />
      ) : null}
    </Modal>
  );
}

export function EditInboxDialog({ orgId, inbox, onOpenChange }: { orgId: string; inbox: Inbox | null; onOpenChange: (open: boolean) => void }) {
  const update = useUpdateInbox(orgId, () => onOpenChange(false));
  const submit = (f: InboxFields) => {
    const credentials = credentialsOf(f);
    update.mutate({
      id: inbox!.id,
      body: { name: f.name.trim(), config: configOf(f) as never, ...(credentials ? { credentials } : {}), bot: { ...inbox!.bot, enabled: f.botEnabled } },
    });
  };
  return (
    <Modal
      open={inbox !== null}
      onOpenChange={(next) => {
        onOpenChange(next);
        if (!next) update.reset();
      }}
      title={inbox ? `Edit ${inbox.name}` : 'Edit inbox'}
      wide
    >
      {inbox ? (
        <InboxForm
          key={inbox.updatedAt}
          orgId={orgId}
          mode="edit"
          initial={fieldsOf(inbox)}
          error={update.error}
          pending={update.isPending}
          submitLabel="Save inbox"
          onSubmit={submit}
          onCancel={() => onOpenChange(false)}
        />
      ) : null}
    </Modal>
  );
}

export function DeleteInboxDialog({ orgId, inbox, onOpenChange }: { orgId: string; inbox: Inbox | null; onOpenChange: (open: boolean) => void }) {
  const remove = useDeleteInbox(orgId, () => onOpenChange(false));
  return (
    <Modal
      open={inbox !== null}
      onOpenChange={(next) => {
        onOpenChange(next);
        if (!next) remove.reset();
      }}
      title={`Delete ${inbox?.name ?? 'this inbox'}?`}
      description="Its contacts, conversations and messages are deleted with it; nothing more arrives through it."
    >
      <FormError error={remove.error} />
      <div className="mt-4 flex justify-end gap-2">
        <Button onClick={() => onOpenChange(false)}>Cancel</Button>
        <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate(inbox!.id)}>
          Delete inbox
        </Button>
      </div>
    </Modal>
  );
}
