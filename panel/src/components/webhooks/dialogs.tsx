import { useState } from 'react';
import type { Schemas } from '../../api/client';
import { useCreateEndpoint, useDeleteEndpoint, useRotateSecret, useUpdateEndpoint } from '../../queries/webhooks';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { SecretOnce } from '../ui/copy';
import { FormError } from '../ui/states';
import { EMPTY_ENDPOINT, EndpointForm, endpointBody, type EndpointFields } from './endpoint-form';

type Endpoint = Schemas['WebhookEndpoint'];

/** A new endpoint; afterwards its signing secret, shown this once. */
export function CreateEndpointDialog({
  orgId,
  open,
  onOpenChange,
  onOpenEndpoint,
}: {
  orgId: string;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onOpenEndpoint: (id: string) => void;
}) {
  const [created, setCreated] = useState<{ id: string; secret: string; url: string } | null>(null);
  const create = useCreateEndpoint(orgId, (endpoint) => setCreated({ id: endpoint.id, secret: endpoint.secret, url: endpoint.url }));
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
      title={created ? 'Endpoint created' : 'New webhook endpoint'}
      description={created ? undefined : 'Where to send signed platform events.'}
      wide
    >
      {created ? (
        <div className="space-y-4">
          <p className="text-sm text-slate-700">
            Events now go to <span className="font-mono break-all">{created.url}</span>. Verify each request with this secret (header{' '}
            <code className="font-mono">X-Service-Signature</code>).
          </p>
          <SecretOnce label="Signing secret" value={created.secret} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => close(false)}>Done</Button>
            <Button
              variant="primary"
              onClick={() => {
                close(false);
                onOpenEndpoint(created.id);
              }}
            >
              Open endpoint
            </Button>
          </div>
        </div>
      ) : (
        <EndpointForm
          orgId={orgId}
          mode="create"
          initial={EMPTY_ENDPOINT}
          error={create.error}
          pending={create.isPending}
          submitLabel="Create endpoint"
          onSubmit={(fields) => create.mutate(endpointBody(fields, 'create'))}
          onCancel={() => close(false)}
        />
      )}
    </Modal>
  );
}

export function EditEndpointDialog({
  orgId,
  endpoint,
  open,
  onOpenChange,
}: {
  orgId: string;
  endpoint: Endpoint;
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const update = useUpdateEndpoint(orgId, endpoint.id, () => onOpenChange(false));
  const submit = (fields: EndpointFields) => {
    const { url, description, projectId, events, active } = endpointBody(fields, 'edit');
    update.mutate({ url, description, projectId, events, active });
  };
  const initial: EndpointFields = {
    url: endpoint.url,
    description: endpoint.description ?? '',
    projectId: endpoint.projectId ?? '',
    events: endpoint.events,
    active: endpoint.active,
    secret: '',
  };
  return (
    <Modal
      open={open}
      onOpenChange={(next) => {
        onOpenChange(next);
        if (!next) update.reset();
      }}
      title="Edit endpoint"
      wide
    >
      {open ? (
        <EndpointForm
          key={endpoint.updatedAt}
          orgId={orgId}
          mode="edit"
          initial={initial}
          error={update.error}
          pending={update.isPending}
          submitLabel="Save endpoint"
          onSubmit={submit}
          onCancel={() => onOpenChange(false)}
        />
      ) : null}
    </Modal>
  );
}

/** A new signing secret: the old one stops verifying at once, so the receiver must be updated. */
export function RotateSecretDialog({
  orgId,
  endpointId,
  open,
  onOpenChange,
}: {
  orgId: string;
  endpointId: string;
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const rotate = useRotateSecret(orgId, endpointId);
  const close = (next: boolean) => {
    onOpenChange(next);
    if (!next) rotate.reset();
  };
  return (
    <Modal
      open={open}
      onOpenChange={close}
      title={rotate.data ? 'New signing secret' : 'Rotate the signing secret?'}
      description={rotate.data ? undefined : 'Deliveries are signed with the new secret from now on; the receiver must use it to verify them.'}
    >
      {rotate.data ? (
        <div className="space-y-4">
          <SecretOnce label="Signing secret" value={rotate.data.secret} />
          <div className="flex justify-end">
            <Button variant="primary" onClick={() => close(false)}>
              Done
            </Button>
          </div>
        </div>
      ) : (
        <div className="space-y-4">
          <FormError error={rotate.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => close(false)}>Cancel</Button>
            <Button variant="primary" disabled={rotate.isPending} onClick={() => rotate.mutate()}>
              Rotate secret
            </Button>
          </div>
        </div>
      )}
    </Modal>
  );
}

export function DeleteEndpointDialog({
  orgId,
  endpoint,
  open,
  onOpenChange,
  onDeleted,
}: {
  orgId: string;
  endpoint: Endpoint;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onDeleted: () => void;
}) {
  const remove = useDeleteEndpoint(orgId, endpoint.id, () => {
    onOpenChange(false);
    onDeleted();
  });
  return (
    <Modal
      open={open}
      onOpenChange={onOpenChange}
      title="Delete this endpoint?"
      description={`Nothing more is sent to ${endpoint.url}, and its delivery history is deleted with it.`}
    >
      <FormError error={remove.error} />
      <div className="mt-4 flex justify-end gap-2">
        <Button onClick={() => onOpenChange(false)}>Cancel</Button>
        <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
          Delete endpoint
        </Button>
      </div>
    </Modal>
  );
}
